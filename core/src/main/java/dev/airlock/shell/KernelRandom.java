package dev.airlock.shell;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.security.SecureRandomSpi;

/**
 * The random source for marks, nonces and private names: the kernel's CSPRNG read from
 * {@code /dev/urandom}, where there is one, else the platform's default {@link SecureRandom}.
 *
 * <p>Why not {@code new SecureRandom()} everywhere: its first use sets up the JCA provider framework
 * (the {@code java.security} file, the Sun provider's service table), 20-30 ms of a CLI start that
 * needs a few random bytes (measured in a fresh JVM with the CLI's class-data archive). On Linux that
 * default reads {@code /dev/urandom} as well (NativePRNG), which never blocks and, once the kernel's
 * pool is initialized at boot, is what the kernel recommends for keys and nonces; this reads it
 * directly.
 */
public final class KernelRandom {
    private static final Path URANDOM = Path.of("/dev/urandom");

    private KernelRandom() {
    }

    /** A new source; thread-safe. */
    public static SecureRandom create() {
        return Files.isReadable(URANDOM) ? new Urandom() : new SecureRandom();
    }

    /** A {@link SecureRandom} over its own SPI, so no provider is looked up. */
    private static final class Urandom extends SecureRandom {
        private static final long serialVersionUID = 1L;

        Urandom() {
            super(new UrandomSpi(), null);
        }
    }

    /** Each request is one read of {@code /dev/urandom}; if that ever fails, the default source answers. */
    private static final class UrandomSpi extends SecureRandomSpi {
        private static final long serialVersionUID = 1L;
        private transient SecureRandom fallback;

        @Override
        protected void engineSetSeed(byte[] seed) {
            // The kernel's pool takes no seed from us; nothing here depends on one.
        }

        @Override
        protected synchronized void engineNextBytes(byte[] bytes) {
            try (InputStream in = new FileInputStream(URANDOM.toFile())) {
                if (in.readNBytes(bytes, 0, bytes.length) == bytes.length) {
                    return;
                }
            } catch (IOException e) {
                // fall through to the default source
            }
            if (fallback == null) {
                fallback = new SecureRandom();
            }
            fallback.nextBytes(bytes);
        }

        @Override
        protected byte[] engineGenerateSeed(int numBytes) {
            byte[] b = new byte[numBytes];
            engineNextBytes(b);
            return b;
        }
    }
}
