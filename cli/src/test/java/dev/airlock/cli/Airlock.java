package dev.airlock.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Runs the real {@code ./airlock} script at the repository root as a subprocess, the way a user
 * does. Every call sets {@code airlock.container=no} so this VM (which has /.dockerenv) counts as
 * a host, and drops inherited AIRLOCK_* variables so the caller's configuration cannot leak in.
 */
final class Airlock {
    /** A guard against a hang, not a timing assertion: every call here finishes in seconds. */
    private static final long HANG_GUARD_SECONDS = 180;

    static final Path ROOT = Path.of(System.getProperty("airlock.root", "..")).toAbsolutePath().normalize();
    static final Path SCRIPT = ROOT.resolve("airlock");
    static final Path JAR = ROOT.resolve("cli/target/airlock.jar");

    static {
        // Maven's package phase has just built the jar from these sources, but leaves an unchanged
        // jar's time alone; without this the script would rebuild it inside this very build.
        try {
            if (Files.exists(JAR)) {
                Files.setLastModifiedTime(JAR, java.nio.file.attribute.FileTime.from(java.time.Instant.now()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private final List<String> args = new ArrayList<>();
    private final Map<String, String> env = new LinkedHashMap<>();
    private Path cwd;
    private byte[] stdin = new byte[0];
    private Path stdinFile;
    private boolean stdinOpen;
    private String ptyRedirect;

    private Airlock(String... args) {
        this.args.addAll(Arrays.asList(args));
    }

    /** {@code ./airlock --set airlock.container=no ARGS...}. */
    static Airlock airlock(String... args) {
        Airlock a = new Airlock("--set", "airlock.container=no");
        a.args.addAll(Arrays.asList(args));
        return a;
    }

    /** {@code ./airlock ARGS...} with nothing added. */
    static Airlock raw(String... args) {
        return new Airlock(args);
    }

    Airlock stdin(byte[] bytes) {
        this.stdin = bytes;
        return this;
    }

    Airlock stdin(Path file) {
        this.stdinFile = file;
        return this;
    }

    /** Leaves our end of its stdin pipe open and silent until it exits: a reader would wait forever. */
    Airlock stdinLeftOpen() {
        return stdinLeftOpen(new byte[0]);
    }

    /** Writes {@code first} to its stdin, then leaves the pipe open and silent until it exits. */
    Airlock stdinLeftOpen(byte[] first) {
        this.stdin = first;
        this.stdinOpen = true;
        return this;
    }

    Airlock env(String name, String value) {
        env.put(name, value);
        return this;
    }

    Airlock in(Path dir) {
        this.cwd = dir;
        return this;
    }

    /**
     * Runs it on a pseudo-terminal (util-linux {@code script}): stdin, stdout and stderr are a
     * terminal, except what {@code redirect} (shell syntax, e.g. {@code "< file"}) changes.
     */
    Airlock onTerminal(String redirect) {
        this.ptyRedirect = redirect;
        return this;
    }

    private boolean stdinClosed;

    /** Runs it with its stdin closed ({@code <&-}), as a caller that closed it would. */
    Airlock stdinClosed() {
        this.stdinClosed = true;
        return this;
    }

    /** The command line that {@link #start()} runs (the script, then the arguments). */
    List<String> command() {
        List<String> cmd = new ArrayList<>();
        if (stdinClosed) {
            cmd.addAll(List.of("sh", "-c", "exec \"$0\" \"$@\" <&-"));
        }
        cmd.add(SCRIPT.toString());
        cmd.addAll(args);
        if (ptyRedirect == null) {
            return cmd;
        }
        StringBuilder line = new StringBuilder("exec");
        for (String word : cmd) {
            line.append(" '").append(word.replace("'", "'\\''")).append('\'');
        }
        return List.of("script", "-qec", line + " " + ptyRedirect, "/dev/null");
    }

    private static final boolean BWRAP_ON_PATH = java.util.Arrays.stream(
            System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":"))
            .anyMatch(d -> !d.isEmpty() && Files.isExecutable(Path.of(d, "bwrap")));

    ProcessBuilder builder() {
        ProcessBuilder pb = new ProcessBuilder(command());
        pb.environment().keySet().removeIf(k -> k.startsWith("AIRLOCK_"));
        pb.environment().putAll(env);
        if (!env.containsKey("AIRLOCK_LOCAL_ISOLATION") && !BWRAP_ON_PATH) {
            // Without bubblewrap the local backend warns on stderr at its first exec; the tests here
            // judge stderr line by line, so they choose no isolation outright (DefaultIsolationTest
            // covers the warning).
            pb.environment().put("AIRLOCK_LOCAL_ISOLATION", "none");
        }
        pb.directory((cwd != null ? cwd : workRoot()).toFile());
        if (stdinFile != null) {
            pb.redirectInput(stdinFile.toFile());
        }
        return pb;
    }

    Process start() {
        try {
            return builder().start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + SCRIPT, e);
        }
    }

    Result run() {
        Process p = start();
        CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> readAll(p.getInputStream()));
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
        CompletableFuture<Void> in = stdinFile != null ? CompletableFuture.completedFuture(null)
                : CompletableFuture.runAsync(() -> feed(p.getOutputStream(), stdin, !stdinOpen));
        return finish(p, out, err, in);
    }

    static Result finish(Process p, CompletableFuture<byte[]> out, CompletableFuture<byte[]> err, CompletableFuture<Void> in) {
        try {
            if (!p.waitFor(HANG_GUARD_SECONDS, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                fail("./airlock did not finish within " + HANG_GUARD_SECONDS + "s (hang)");
            }
            Result r = new Result(p.exitValue(), out.get(30, TimeUnit.SECONDS), err.get(30, TimeUnit.SECONDS));
            in.cancel(true);
            p.getOutputStream().close();
            return r;
        } catch (Exception e) {
            throw new AssertionError("running ./airlock failed: " + e, e);
        }
    }

    static byte[] readAll(InputStream in) {
        try (in) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void feed(OutputStream to, byte[] bytes, boolean close) {
        try {
            to.write(bytes);
            to.flush();
            if (close) {
                to.close();
            }
        } catch (IOException ignored) {
            // the command exited without reading all of it
        }
    }

    /** What a user sees: exit status, stdout bytes, stderr text. */
    record Result(int exit, byte[] stdout, byte[] stderrBytes) {
        String out() {
            return new String(stdout, StandardCharsets.UTF_8);
        }

        String err() {
            return new String(stderrBytes, StandardCharsets.UTF_8);
        }

        /** The stderr lines, for "exactly one line" checks. */
        List<String> errLines() {
            return err().lines().toList();
        }

        @Override
        public String toString() {
            return "exit " + exit + ", stdout " + stdout.length + " bytes, stderr: " + err();
        }
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static Path write(Path file, byte[] content) {
        try {
            Files.createDirectories(file.getParent());
            return Files.write(file, content);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Where a run starts unless told, and where every {@code @TempDir} of these tests is made
     * ({@link WorkdirTempDirs}): a directory of this JVM's own under {@code airlock.test.root}, since
     * the local backend binds its working directory writable under bubblewrap (and refuses the
     * shared /tmp itself) and sees no other host dir.
     */
    static Path workRoot() {
        return Dirs.WORK;
    }

    /**
     * A fresh dir outside {@link #workRoot()} for Airlock's own state ({@code AIRLOCK_HOME}):
     * Airlock refuses state inside a directory commands can write.
     */
    static Path stateDir() {
        try {
            return Files.createTempDirectory(Dirs.STATE, "home-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void removeTree(Path dir) {
        try (java.util.stream.Stream<Path> all = Files.walk(dir)) {
            all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort at exit: the dir is this JVM's own, under the test root
        }
    }

    private static final class Dirs {
        static final Path WORK = make("work-");
        static final Path STATE = make("state-");

        private static Path make(String prefix) {
            try {
                Path root = Path.of(System.getProperty("airlock.test.root", System.getProperty("java.io.tmpdir")));
                Files.createDirectories(root);
                Path dir = Files.createTempDirectory(root, prefix + ProcessHandle.current().pid() + "-");
                Runtime.getRuntime().addShutdownHook(new Thread(() -> removeTree(dir)));
                return dir;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
