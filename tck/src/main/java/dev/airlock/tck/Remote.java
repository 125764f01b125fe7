package dev.airlock.tck;

import dev.airlock.Capabilities;
import dev.airlock.CapturedOutput;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.FileStat;
import dev.airlock.StdinMode;
import dev.airlock.shell.Shell;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The kit's small moves on a target, all through the public API so they work on any backend:
 * run a check, look for a process by the pid file it wrote, wait for a command to start.
 */
final class Remote {
    private Remote() {
    }

    static String q(String s) {
        return Shell.quote(s);
    }

    /** The HEREDOC rule: a backend that is not byte-exact fails the kit's core. */
    static void requireByteExact(Capabilities caps) {
        if (caps.stdinMode() == StdinMode.HEREDOC || !caps.byteExact()) {
            fail("the backend declares StdinMode." + caps.stdinMode() + ", which is not byte-exact (a heredoc adds a"
                    + " newline and cannot carry NUL bytes or large payloads); the kit's core requires PIPE or PAYLOAD stdin");
        }
    }

    static ExecResult succeed(Environment env, ExecRequest request, String what) {
        ExecResult r = env.exec(request);
        assertSucceeded(r, what);
        return r;
    }

    /** Runs one of the kit's own checks and returns its stdout. */
    static String sh(Environment env, String command) {
        return succeed(env, ExecRequest.of(command), "the check `" + firstLine(command) + "`").stdout().text();
    }

    static void assertSucceeded(ExecResult r, String what) {
        if (r.exitCode() != 0 || r.timedOut() || r.cancelled()) {
            fail(what + " exited " + r.exitCode() + (r.timedOut() ? " (timed out)" : "")
                    + (r.cancelled() ? " (cancelled)" : "") + "; stderr: " + head(r.stderr()));
        }
    }

    static String head(CapturedOutput out) {
        String s = out.size() > 2000 ? new String(out.bytes(), 0, 2000, StandardCharsets.UTF_8) + "..." : out.text();
        return s.isBlank() ? "(empty)" : s.strip();
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl) + " ...";
    }

    /**
     * A command whose grandchild ignores SIGTERM (so only a group SIGKILL ends it), writes its pid
     * to {@code pidFile}, and outlives everything; the command prints {@code started} and waits.
     */
    static String processTree(String pidFile) {
        return "f=" + q(pidFile) + "\n"
                + "sh -c 'trap \"\" TERM; sleep 600 & echo $! > \"$1\"; wait' kit \"$f\" >/dev/null 2>&1 &\n"
                + "while [ ! -s \"$f\" ]; do :; done\n"
                + "echo started\n"
                + "wait\n";
    }

    /**
     * Whether the process whose pid is in {@code pidFile} still lives on the target. A zombie, or
     * a process with SIGKILL pending (the kernel is tearing it down), counts as gone: neither runs
     * code again. Checked with a second exec, so it works wherever the backend runs.
     */
    static boolean alive(Environment env, String pidFile) {
        return aliveIfStarted(env, pidFile).orElseThrow(() -> new AssertionError("the test command never wrote its pid file "
                + pidFile + "; it did not start as expected"));
    }

    private static final Map<Environment, Boolean> VISIBLE = Collections.synchronizedMap(new WeakHashMap<>());

    /**
     * Whether one exec sees the processes of another that runs beside it ({@code kill -0} on its
     * pid), asked once per environment. Not where each command gets a process namespace of its own
     * (local bubblewrap): there a pid written by one exec means nothing to the next, so a check
     * that it is gone would pass whatever happened.
     */
    static boolean processesVisibleAcrossExecs(Environment env) {
        Boolean known = VISIBLE.get(env);
        if (known != null) {
            return known;
        }
        boolean visible;
        try {
            // A pid alone could name another process in the observer's own namespace (bwrap's pid 2
            // is every sandbox's shell): the observer looks for the probe's unique command line.
            String mark = "120." + (100000 + new java.util.Random().nextInt(900000));
            Started probe = start(env, ExecRequest.builder("d=$(mktemp -d) && echo $$ > \"$d/pid\" && echo \"$d\" && exec sleep " + mark),
                    "the process visibility probe");
            try {
                long until = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
                while (!probe.out().text().contains("\n") && System.nanoTime() < until) {
                    Thread.sleep(10);
                }
                String dir = probe.out().text().strip();
                visible = sh(env, "pid=$(cat -- " + q(dir + "/pid") + ")\n"
                        + "for _ in 1 2 3 4 5 6 7 8 9 10; do\n" // exec sleep may not have replaced the shell yet
                        + "  [ \"$(tr '\\0' ' ' < /proc/\"$pid\"/cmdline 2>/dev/null)\" = 'sleep " + mark + " ' ] && { echo seen; exit 0; }\n"
                        + "  sleep 0.2\n"
                        + "done\n"
                        + "echo unseen\n").strip().equals("seen");
                sh(env, "rm -rf -- " + q(dir));
            } finally {
                probe.execution().cancel();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while asking whether execs see each other's processes", e);
        }
        VISIBLE.put(env, visible);
        return visible;
    }

    /** {@link #alive}, or empty when the pid file was never written (the command was stopped before it got there). */
    static Optional<Boolean> aliveIfStarted(Environment env, String pidFile) {
        String out = sh(env, "pid=$(cat -- " + q(pidFile) + " 2>/dev/null)\n"
                + "[ -n \"$pid\" ] || { echo nopid; exit 0; }\n"
                + "kill -0 \"$pid\" 2>/dev/null || { echo gone; exit 0; }\n"
                + "[ -r /proc/\"$pid\"/stat ] || { echo alive; exit 0; }\n"
                + "st=$(sed 's/.*) //' /proc/\"$pid\"/stat 2>/dev/null)\n"
                + "[ -n \"$st\" ] || { echo gone; exit 0; }\n"
                + "case $(printf '%s' \"$st\" | cut -d' ' -f1) in Z|X|x) echo gone; exit 0;; esac\n"
                // PF_EXITING (0x4 in the flags field): it is in the kernel's exit path and never runs code again.
                + "fl=$(printf '%s' \"$st\" | cut -d' ' -f7)\n"
                + "[ -n \"$fl\" ] && [ $(( fl & 4 )) -ne 0 ] && { echo gone; exit 0; }\n"
                // SIGKILL pending: the kernel is tearing the process down; it never runs code again.
                + "for m in $(awk '/^(SigPnd|ShdPnd):/ { print $2 }' /proc/\"$pid\"/status 2>/dev/null); do\n"
                + "  [ $(( 0x$(printf '%s' \"$m\" | tail -c 3) & 256 )) -ne 0 ] && { echo gone; exit 0; }\n"
                + "done\n"
                + "echo alive\n").strip();
        return out.equals("nopid") ? Optional.empty() : Optional.of(out.equals("alive"));
    }

    /** Fails when {@code dir} holds any staged file ({@code .airlock-*}) or is missing entries it should not. */
    static void assertNothingStaged(Environment env, String when) {
        List<String> left = env.files().list(env.target().stagingDir()).stream()
                .map(FileStat::name).filter(n -> n.startsWith(".airlock-")).toList();
        assertTrue(left.isEmpty(), "staged files left in " + env.target().stagingDir() + " " + when + ": " + left);
    }

    /** Starts a command with its output streamed to {@link Sink}s and waits until it printed something. */
    static Started start(Environment env, ExecRequest.Builder request, String what) throws InterruptedException {
        Sink out = new Sink();
        Sink err = new Sink();
        Execution e = env.start(request.output(out, err).build());
        long until = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!out.first.await(20, TimeUnit.MILLISECONDS)) {
            if (e.isDone()) {
                ExecResult r = e.await();
                fail(what + " ended before it printed anything: exit " + r.exitCode() + ", stderr: " + err.text());
            }
            if (System.nanoTime() > until) {
                e.cancel();
                fail(what + " printed nothing for 2 minutes");
            }
        }
        return new Started(e, out, err);
    }

    record Started(Execution execution, Sink out, Sink err) {
        ExecResult await() throws InterruptedException {
            return execution.await();
        }
    }

    /** A caller's output stream: keeps the first MiB and signals the first byte. */
    static final class Sink extends OutputStream {
        private final ByteArrayOutputStream kept = new ByteArrayOutputStream();
        final CountDownLatch first = new CountDownLatch(1);

        @Override
        public synchronized void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            kept.write(b, off, Math.max(0, Math.min(len, (1 << 20) - kept.size())));
            if (len > 0) {
                first.countDown();
            }
        }

        synchronized String text() {
            return kept.toString(StandardCharsets.UTF_8);
        }
    }
}
