package dev.airlock.local.containment;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The operator's side of the containment tests: the HOME and TMPDIR the test JVM was given (see
 * this module's surefire configuration), the real crontab, and running real programs.
 */
final class Operator {
    private Operator() {
    }

    /** The operator's real home: {@code $HOME} of this JVM, created if needed. */
    static Path home() {
        return dir(System.getenv("HOME"), "HOME");
    }

    /** The operator's temp dir: {@code $TMPDIR} of this JVM, created if needed. */
    static Path tmp() {
        return dir(System.getenv("TMPDIR"), "TMPDIR");
    }

    private static Path dir(String value, String name) {
        Assumptions.assumeTrue(value != null && !value.isEmpty(),
                name + " is not set; run these tests through Maven, whose surefire configuration sets it");
        Path p = Path.of(value);
        try {
            Files.createDirectories(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p;
    }

    /** A fresh, not yet existing eval run dir under the build dir. */
    static Path newRunDir(String name) {
        return Path.of(System.getProperty("user.dir"), "target", "eval-runs",
                name + "-" + Long.toHexString(System.nanoTime())).toAbsolutePath();
    }

    static boolean isRoot() {
        return "0".equals(run(List.of("id", "-u"), null).stdout().trim());
    }

    static boolean executable(String path) {
        return Files.isExecutable(Path.of(path));
    }

    /** Every entry under {@code dir} (relative path -> type and size), to compare before and after. */
    static Map<String, String> snapshot(Path dir) {
        Map<String, String> out = new TreeMap<>();
        if (!Files.exists(dir)) {
            return out;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.forEach(p -> {
                try {
                    BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class, java.nio.file.LinkOption.NOFOLLOW_LINKS);
                    out.put(dir.relativize(p).toString(), (a.isDirectory() ? "dir" : a.isSymbolicLink() ? "link" : "file " + a.size()));
                } catch (IOException e) {
                    out.put(dir.relativize(p).toString(), "gone");
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** What the operator's real crontab holds: the spool file's bytes and what {@code crontab -l} says. */
    record RealCrontab(byte[] spool, Result list) {
        static RealCrontab read() {
            String user = run(List.of("id", "-un"), null).stdout().trim();
            Path spool = Path.of("/var/spool/cron/crontabs", user);
            byte[] bytes;
            try {
                bytes = Files.exists(spool) ? Files.readAllBytes(spool) : null;
            } catch (IOException e) {
                bytes = ("unreadable: " + e.getMessage()).getBytes(StandardCharsets.UTF_8);
            }
            return new RealCrontab(bytes, run(List.of("/usr/bin/crontab", "-l"), null));
        }

        void assertSameAs(RealCrontab before) {
            Assertions.assertArrayEquals(before.spool, spool, "the operator's spool file changed");
            Assertions.assertEquals(before.list, list, "the operator's crontab -l changed");
        }
    }

    record Result(int exit, String stdout, String stderr) {
    }

    /** Runs a real program with stdin from {@code input} (or /dev/null) and a 60 s limit. */
    static Result run(List<String> argv, String input) {
        try {
            ProcessBuilder pb = new ProcessBuilder(argv);
            if (input == null) {
                pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            }
            Path out = Files.createTempFile("airlock-test-out", ".txt");
            Path err = Files.createTempFile("airlock-test-err", ".txt");
            try {
                pb.redirectOutput(out.toFile()).redirectError(err.toFile());
                Process p = pb.start();
                if (input != null) {
                    try (var in = p.getOutputStream()) {
                        in.write(input.getBytes(StandardCharsets.UTF_8));
                    }
                }
                if (!p.waitFor(60, TimeUnit.SECONDS)) {
                    p.descendants().forEach(ProcessHandle::destroyForcibly);
                    p.destroyForcibly();
                    Assertions.fail(String.join(" ", argv) + " did not finish within 60 s");
                }
                return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static void deleteTree(Path dir) {
        if (dir == null || !Files.exists(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        run(List.of("rm", "-rf", "--", dir.toString()), null);
    }
}
