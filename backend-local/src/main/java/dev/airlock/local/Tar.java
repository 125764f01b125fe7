package dev.airlock.local;

import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** {@code copyIn} and {@code copyOut} on this host: this host's {@code tar}, modes kept, owners not taken from the archive. */
final class Tar {
    private Tar() {
    }

    static void unpack(Path dir, InputStream tar) throws IOException {
        Process p = new ProcessBuilder(List.of("tar", "-xpf", "-", "--no-same-owner")).directory(dir.toFile())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        CompletableFuture<String> err = errors(p);
        try (OutputStream in = p.getOutputStream()) {
            tar.transferTo(in);
        } catch (IOException e) {
            // tar stopped reading (a bad archive): its exit status and message say why
        }
        int exit = waitFor(p);
        if (exit != 0) {
            throw new IOException("tar exited " + exit + ": " + err.join());
        }
    }

    static InputStream pack(Path dir) throws IOException {
        Process p = new ProcessBuilder(List.of("tar", "-cf", "-", ".")).directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        CompletableFuture<String> err = errors(p);
        return new FilterInputStream(p.getInputStream()) {
            private boolean checked;

            @Override
            public int read() throws IOException {
                return check(super.read());
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                return check(super.read(b, off, len));
            }

            /** At the end of the stream, a tar that failed fails the read. */
            private int check(int n) throws IOException {
                if (n < 0 && !checked) {
                    checked = true;
                    int exit = waitFor(p);
                    if (exit != 0) {
                        throw new IOException("tar exited " + exit + ": " + err.join());
                    }
                }
                return n;
            }

            @Override
            public void close() throws IOException {
                super.close();
                p.destroy(); // closing early stops the reader
            }
        };
    }

    private static CompletableFuture<String> errors(Process p) {
        return CompletableFuture.supplyAsync(() -> {
            try (InputStream e = p.getErrorStream()) {
                ByteArrayOutputStream b = new ByteArrayOutputStream();
                e.transferTo(b);
                return b.toString(StandardCharsets.UTF_8).lines().findFirst().orElse("");
            } catch (IOException e) {
                return "";
            }
        });
    }

    private static int waitFor(Process p) throws IOException {
        try {
            return p.waitFor();
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        }
    }
}
