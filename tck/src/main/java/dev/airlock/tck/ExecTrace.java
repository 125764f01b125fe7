package dev.airlock.tck;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every {@code execve} this JVM and all its descendants make, however briefly the new process
 * lives: {@code strace -f -e trace=execve} attached to this JVM. Polling {@code /proc} misses a
 * {@code printf} that lives a millisecond; this does not. It sees the backend's processes when the
 * target is this host and they descend from this JVM (the local backend, with or without
 * bubblewrap); a remote target's processes are left to the {@code /proc} scan and the backend's own
 * journal. The trace file holds argv strings, so it is 0600 and deleted on close.
 */
final class ExecTrace implements AutoCloseable {
    private static final Pattern STRING = Pattern.compile("\"((?:\\\\x[0-9a-f]{2})*)\"");

    private final Process strace;
    private final Path file;
    private final CompletableFuture<String> errors;
    private String trace = "";

    private ExecTrace(Process strace, Path file, CompletableFuture<String> errors) {
        this.strace = strace;
        this.file = file;
        this.errors = errors;
    }

    /** Attaches to this JVM, or says why it cannot (no strace, no permission to trace). */
    static Result start() {
        Optional<Path> strace = Services.find("strace");
        if (strace.isEmpty()) {
            return new Result(null, "strace is not installed (apt-get install strace)");
        }
        Path file;
        try {
            file = Files.createTempFile("airlock-tck-execve-", ".txt",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (IOException e) {
            return new Result(null, "no temp file for the trace: " + e.getMessage());
        }
        try {
            Process p = new ProcessBuilder(strace.get().toString(), "-f", "-e", "trace=execve", "-e", "signal=none", "-xx",
                    "-s", "1048576", "-o", file.toString(), "-p", Long.toString(ProcessHandle.current().pid()))
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            BufferedReader err = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
            CompletableFuture<Boolean> attached = new CompletableFuture<>();
            StringBuilder said = new StringBuilder();
            CompletableFuture<String> errors = CompletableFuture.supplyAsync(() -> {
                try {
                    for (String line; (line = err.readLine()) != null; ) {
                        if (line.contains("attached")) {
                            attached.complete(true);
                        } else {
                            synchronized (said) {
                                said.append(line).append('\n');
                            }
                        }
                    }
                } catch (IOException ignored) {
                    // strace ended
                }
                attached.complete(false);
                synchronized (said) {
                    return said.toString().strip();
                }
            });
            boolean ok;
            try {
                ok = attached.get(20, TimeUnit.SECONDS);
            } catch (Exception e) {
                ok = false;
            }
            if (!ok) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                Files.deleteIfExists(file);
                String why = errors.getNow("");
                return new Result(null, "strace could not attach to this JVM" + (why.isEmpty() ? "" : ": " + why)
                        + " (tracing needs root or CAP_SYS_PTRACE)");
            }
            return new Result(new ExecTrace(p, file, errors), null);
        } catch (IOException e) {
            return new Result(null, "strace did not start: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(null, "interrupted while attaching strace");
        }
    }

    /** A started trace, or why there is none. */
    record Result(ExecTrace trace, String whyNot) {
    }

    /** Stops tracing (the JVM carries on untraced) and keeps what was recorded. */
    @Override
    public void close() throws InterruptedException {
        if (strace.isAlive()) {
            // SIGKILL, not SIGTERM: on SIGTERM strace detaches each tracee itself, and a thread of
            // this JVM in vfork (posix_spawn) waiting for its traced child never stops, so strace
            // waits forever and every spawn of this JVM with it (reproduced: a JVM spawning on 4
            // threads froze within 5 attach/detach rounds). When the tracer dies the kernel
            // detaches and resumes every tracee, and strace has written each event as it came.
            strace.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        try {
            trace = Files.readString(file, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            trace = "";
        } finally {
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // a 0600 temp file; nothing more to do
            }
        }
    }

    /** How many execve calls were seen. */
    int execs() {
        int n = 0;
        for (String line : trace.split("\n")) {
            if (line.contains("execve(")) {
                n++;
            }
        }
        return n;
    }

    /** The labels of the secrets found in some traced argv (or executable path), with the program's name. */
    Set<String> hits(Map<String, byte[]> needles) {
        Set<String> out = new TreeSet<>();
        for (String line : trace.split("\n")) {
            if (!line.contains("execve(")) {
                continue;
            }
            Matcher m = STRING.matcher(line);
            String program = null;
            java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
            while (m.find()) {
                byte[] s = decode(m.group(1));
                if (program == null) {
                    program = new String(s, StandardCharsets.UTF_8);
                }
                all.writeBytes(s);
                all.write(0);
            }
            byte[] argv = all.toByteArray();
            for (Map.Entry<String, byte[]> n : needles.entrySet()) {
                if (ArgvScan.indexOf(argv, n.getValue()) >= 0) {
                    out.add(n.getKey() + " in the argv of an exec of " + program + " (traced)");
                }
            }
        }
        return out;
    }

    private static byte[] decode(String hex) {
        byte[] b = new byte[hex.length() / 4];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(hex.substring(i * 4 + 2, i * 4 + 4), 16);
        }
        return b;
    }
}
