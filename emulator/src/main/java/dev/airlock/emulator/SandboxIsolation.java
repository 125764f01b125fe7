package dev.airlock.emulator;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Whether emulated sandboxes run their commands under bubblewrap. {@code airlock.emulator.isolation}:
 * {@code auto} (default: bwrap when it is installed and can create its namespaces here),
 * {@code bwrap} (required: an error otherwise), {@code none} (plain processes in the sandbox's
 * root; {@code /tmp} and {@code /} writes then reach the host). {@code airlock.emulator.bwrap}
 * names the binary.
 */
public final class SandboxIsolation {
    public static final String KEY = "airlock.emulator.isolation";
    public static final String BWRAP_KEY = "airlock.emulator.bwrap";

    private final Optional<Path> bwrap;
    private final String reason;

    private SandboxIsolation(Optional<Path> bwrap, String reason) {
        this.bwrap = bwrap;
        this.reason = reason;
    }

    public static SandboxIsolation none(String reason) {
        return new SandboxIsolation(Optional.empty(), reason);
    }

    public static SandboxIsolation detect(Settings s) {
        String mode = s.getChoice(KEY, "auto", "auto", "bwrap", "none");
        if (mode.equals("none")) {
            return none(KEY + "=none");
        }
        Optional<Path> bin = s.get(BWRAP_KEY).map(String::trim).filter(v -> !v.isEmpty()).map(Path::of)
                .or(() -> onPath("bwrap"));
        Optional<String> why = bin.isEmpty() ? Optional.of("bwrap is not installed (Debian package bubblewrap)")
                : works(bin.get());
        if (why.isPresent()) {
            if (mode.equals("bwrap")) {
                throw new ConfigurationException(KEY + "=bwrap but " + why.get() + "; install it or set " + KEY + "=auto");
            }
            return none(why.get());
        }
        return new SandboxIsolation(bin, "bwrap " + bin.get());
    }

    public Optional<Path> bwrap() {
        return bwrap;
    }

    /** One line for logs and the emulator's banner: which isolation, or why none. */
    public String describe() {
        return bwrap.isPresent() ? reason : "none (" + reason + ")";
    }

    private static Optional<String> works(Path bwrap) {
        try {
            Process p = new ProcessBuilder(bwrap.toString(), "--ro-bind", "/", "/", "--unshare-pid", "--die-with-parent",
                    "--", "true").redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            byte[] err = p.getErrorStream().readNBytes(2048);
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return Optional.of("bwrap did not start within 30 s");
            }
            if (p.exitValue() != 0) {
                String line = new String(err, StandardCharsets.UTF_8).strip().lines().findFirst().orElse("exit " + p.exitValue());
                return Optional.of("bwrap cannot create its namespaces here (" + line + ")");
            }
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of("cannot run " + bwrap + " (" + e.getMessage() + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted while checking bwrap");
        }
    }

    static Optional<Path> onPath(String name) {
        String path = System.getenv().getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin");
        for (String dir : path.split(File.pathSeparator)) {
            if (!dir.isEmpty()) {
                Path p = Path.of(dir, name);
                if (Files.isExecutable(p)) {
                    return Optional.of(p);
                }
            }
        }
        return List.of(Path.of("/usr/bin", name)).stream().filter(Files::isExecutable).findFirst();
    }
}
