package dev.airlock.vercel;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Payload;
import dev.airlock.WriteOptions;
import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The round trips a user pays per operation, counted on the emulator's call journal: a small write
 * is one upload and one command that checks, places and finishes it; a read is one download; a
 * short exec is a handful of calls, not a poll loop. Upper bounds on call counts (behaviour, not
 * time): a change that brings back a round trip per step fails here.
 */
class VercelRoundTripsTest {
    /**
     * A 4 KiB write: the upload into the staging dir and the one command that places it (2), after
     * the core's guard resolved the path on the target with one of its own scripts, a launch (3:
     * the command with its end, its two output files).
     */
    static final int WRITE_MAX = 5;
    /** A 4 KiB read: the download. */
    static final int READ_MAX = 1;
    /**
     * {@code exec true}: the command with its end (its variables sent with it, not staged), its two
     * output files, and the check for jobs left running (a command with its end).
     */
    static final int EXEC_MAX = 4;
    /** Open: the create, and the core's probe (a command with its end, its two output files). */
    static final int OPEN_MAX = 4;
    /** Close: the stop and the delete. */
    static final int CLOSE_MAX = 2;

    static VercelEmulatorFixture fixture;
    static Environment env;

    @BeforeAll
    static void open() {
        fixture = new VercelEmulatorFixture(FaultPlan.none());
        env = new VercelProvider().open(OpenContext.of(fixture.settings()));
        env.exec(ExecRequest.of("true"));
    }

    @AfterAll
    static void close() {
        if (env != null) {
            env.close();
        }
        fixture.close();
    }

    @Test
    void aSmallWriteIsOneUploadAndOneCommandAfterTheGuard() throws Exception {
        byte[] data = new byte[4096];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 31 + 7); // NULs and invalid UTF-8 among them
        }
        env.files().write("/tmp/rt/a.bin", Payload.of(new byte[] {1}), WriteOptions.defaults().withCreateParents(true));
        Map<String, Integer> calls = counted(() -> {
            env.files().write("/tmp/rt/a.bin", Payload.of(data), WriteOptions.defaults());
            return null;
        });
        assertTrue(total(calls) <= WRITE_MAX, () -> "a 4 KiB write took " + calls);
        try (InputStream in = env.files().read("/tmp/rt/a.bin")) {
            assertArrayEquals(data, in.readAllBytes(), "the bytes written");
        }
    }

    @Test
    void aSmallReadIsOneDownload() throws Exception {
        byte[] data = new byte[4096];
        Arrays.fill(data, (byte) 'r');
        env.files().write("/tmp/rt/r.txt", Payload.of(data), WriteOptions.defaults().withCreateParents(true));
        byte[][] got = new byte[1][];
        Map<String, Integer> calls = counted(() -> {
            try (InputStream in = env.files().read("/tmp/rt/r.txt")) {
                got[0] = in.readAllBytes();
            }
            return null;
        });
        assertArrayEquals(data, got[0]);
        assertTrue(total(calls) <= READ_MAX, () -> "a 4 KiB read took " + calls);
    }

    @Test
    void aShortExecIsAFewCalls() throws Exception {
        ExecResult[] r = new ExecResult[1];
        Map<String, Integer> calls = counted(() -> {
            r[0] = env.exec(ExecRequest.of("true"));
            return null;
        });
        assertEquals(0, r[0].exitCode());
        assertTrue(total(calls) <= EXEC_MAX, () -> "exec true took " + calls);
    }

    /**
     * Open is the create (whose answer says the session runs: no poll) and the core's probe; close
     * is the stop and the delete, the private dir going with the stopped session (no {@code rm -rf}
     * command of its own), and the sandbox is gone.
     */
    @Test
    void openIsTheCreateAndTheProbeAndCloseIsTheStopAndTheDelete() throws Exception {
        Environment[] e = new Environment[1];
        Map<String, Integer> open = counted(() -> {
            e[0] = new VercelProvider().open(OpenContext.of(fixture.settings()));
            return null;
        });
        String name = e[0].id();
        Map<String, Integer> close = counted(() -> {
            e[0].close();
            return null;
        });
        assertTrue(total(open) <= OPEN_MAX, () -> "open took " + open);
        assertTrue(total(close) <= CLOSE_MAX, () -> "close took " + close);
        assertFalse(fixture.emulator.sandboxNames().contains(name), "the sandbox is not deleted");
    }

    /**
     * A persistent sandbox's stop snapshots its file system: its private dir is removed by a
     * command before the stop, so no snapshot holds it.
     */
    @Test
    void aPersistentSandboxsPrivateDirIsRemovedBeforeItsStop() throws Exception {
        Environment p = new VercelProvider().open(OpenContext.of(fixture.settings().with("airlock.vercel.persistent", "true")));
        String privateDir = p.target().privateDir();
        int before = fixture.journal.size();
        p.close();
        List<CallJournal.Entry> after = fixture.journal.entries().subList(before, fixture.journal.size());
        long rm = after.stream().filter(x -> x.dispatch() && x.argv().contains(privateDir) && String.join(" ", x.argv()).contains("rm -rf"))
                .mapToLong(CallJournal.Entry::seq).min().orElse(Long.MAX_VALUE);
        long stop = after.stream().filter(x -> x.call().equals("session-stop")).mapToLong(CallJournal.Entry::seq).min().orElseThrow();
        assertTrue(rm < stop, () -> "the private dir " + privateDir + " was not removed before the stop: " + after);
    }

    /**
     * An attached sandbox goes on after the close: the environment's private dir and its output
     * dir are removed, in one call, and the sandbox stays.
     */
    @Test
    void anAttachedEnvironmentsCloseRemovesItsDirsInOneCall() throws Exception {
        Environment a = new VercelProvider().open(OpenContext.of(fixture.settings().with(VercelSettings.SANDBOX_ID, env.id())));
        String privateDir = a.target().privateDir();
        assertEquals("x", a.exec(ExecRequest.of("printf x")).stdout().text());
        String mine = "ls -d /tmp/.airlock-vercel-* | sort";
        String before = env.exec(ExecRequest.of(mine)).stdout().text();
        Map<String, Integer> close = counted(() -> {
            a.close();
            return null;
        });
        assertTrue(total(close) <= 1, () -> "an attached close took " + close);
        ExecResult gone = env.exec(ExecRequest.of("[ -e " + dev.airlock.shell.Shell.quotePath(privateDir) + " ] && echo left || echo gone"));
        assertEquals("gone\n", gone.stdout().text(), "the attached environment's private dir is left");
        String after = env.exec(ExecRequest.of(mine)).stdout().text();
        assertEquals(before.lines().count() - 1, after.lines().count(), () -> "its output dir is left: " + before + " -> " + after);
        assertTrue(fixture.emulator.sandboxNames().contains(env.id()), "the attached sandbox was deleted");
    }

    /**
     * The calls {@code op} made, by the emulator's name for them. Work started off the caller's path
     * by an earlier operation (a clean-up) is let land first, and calls that land after the
     * operation returned (its own clean-up) are counted as its own.
     */
    static Map<String, Integer> counted(java.util.concurrent.Callable<Void> op) throws Exception {
        settle();
        int before = fixture.journal.size();
        op.call();
        settle();
        List<CallJournal.Entry> all = fixture.journal.entries();
        Map<String, Integer> by = new TreeMap<>();
        for (CallJournal.Entry e : all.subList(before, all.size())) {
            if (!e.dispatch()) { // a command is journalled twice: its HTTP call, and its dispatch in the sandbox
                by.merge(e.call(), 1, Integer::sum);
            }
        }
        System.out.println("[round trips] " + by);
        return by;
    }

    /** Waits until no call arrived for a second. */
    private static void settle() throws InterruptedException {
        int seen = -1;
        while (seen != fixture.journal.size()) {
            seen = fixture.journal.size();
            Thread.sleep(1000);
        }
    }

    static int total(Map<String, Integer> calls) {
        return calls.values().stream().mapToInt(Integer::intValue).sum();
    }
}
