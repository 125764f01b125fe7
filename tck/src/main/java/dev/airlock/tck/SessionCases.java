package dev.airlock.tck;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.FileStat;
import dev.airlock.Payload;
import dev.airlock.session.Session;
import dev.airlock.session.SessionBusyException;
import dev.airlock.session.SessionScript;
import dev.airlock.shell.StdinScripts;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.airlock.tck.Remote.assertSucceeded;
import static dev.airlock.tck.Remote.q;
import static dev.airlock.tck.Remote.sh;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * (core) The kit's {@code Sessions} group: execs of one {@link Session} share the working
 * directory, exported variables and (bash) functions and aliases, output stays byte-exact, one
 * exec runs at a time, sessions do not see each other, and the snapshot is private and atomic.
 * The kit runs these as its nested {@code Sessions} class.
 */
abstract class SessionCases {
    private final EnvironmentCompatibilityKit kit;

    SessionCases(EnvironmentCompatibilityKit kit) {
        this.kit = kit;
    }

    private static ExecResult run(Session s, String command) {
        return s.exec(ExecRequest.of(command));
    }

    private static String out(Session s, String command) {
        ExecResult r = run(s, command);
        assertSucceeded(r, "the session's command `" + command + "`");
        return r.stdout().text();
    }

    @Promise("cd and export in a session carry over to its next exec")
    @Test
    void cdAndExportCarryOverToTheNextExec() {
        Environment env = kit.environment();
        String dir = kit.newDir(env, "session-cd");
        try (Session s = env.session()) {
            out(s, "mkdir -p " + q(dir + "/api") + " && cd " + q(dir + "/api") + " && export KIT_DEBUG='1 two'");
            assertEquals(dir + "/api\n1 two\n", out(s, "pwd; echo \"$KIT_DEBUG\""));
            assertEquals("\n", sh(env, "echo \"${KIT_DEBUG-}\""), "a plain exec saw the session's variable");
        }
    }

    @Promise("functions and aliases defined in a bash session carry over to its next exec")
    @Test
    void functionsAndAliasesCarryOverOnBash() {
        Environment env = kit.environment();
        EnvironmentCompatibilityKit.assumeCapability(env.target().hasBash(),
                "the target has no bash; sessions keep functions and aliases on bash only");
        try (Session s = env.session()) {
            out(s, "kit_greet() { printf 'hello %s\\n' \"$1\"; }\nalias kit_ll='echo aliased'");
            assertEquals("hello you\naliased\n", out(s, "kit_greet you\nkit_ll"));
        }
    }

    @Promise("a cd into a missing directory fails and keeps the session's state")
    @Test
    void cdIntoAMissingDirectoryFailsAndKeepsTheState() {
        Environment env = kit.environment();
        String dir = kit.newDir(env, "session-missing");
        try (Session s = env.session()) {
            out(s, "cd " + q(dir) + " && export KIT_KEPT=1");
            ExecResult r = run(s, "cd " + q(dir + "/missing"));
            assertNotEquals(0, r.exitCode(), "cd into a missing directory succeeded");
            assertFalse(r.stderr().text().isBlank(), "cd into a missing directory said nothing on stderr");
            assertEquals(dir + "\n1\n", out(s, "pwd; echo \"$KIT_KEPT\""));
        }
    }

    @Promise("a command failing half way keeps what it did, and exit N still saves the state from the EXIT trap")
    @Test
    void aCommandFailingHalfWayKeepsWhatItDidAndExitNSaves() {
        Environment env = kit.environment();
        String dir = kit.newDir(env, "session-half");
        try (Session s = env.session()) {
            ExecResult half = run(s, "cd " + q(dir) + " && export KIT_HALF=1 && false && export KIT_NEVER=1");
            assertEquals(1, half.exitCode());
            ExecResult exit = run(s, "export KIT_EXIT=7; exit 7; export KIT_NEVER=1");
            assertEquals(7, exit.exitCode(), "exit N in a session must still exit N");
            assertEquals(dir + "\n1 7 unset\n", out(s, "pwd; echo \"$KIT_HALF $KIT_EXIT ${KIT_NEVER-unset}\""));
        }
    }

    @Promise("a session exec's output and stdin stay byte-exact")
    @Test
    void outputAndStdinStayByteExact() {
        Environment env = kit.environment();
        Remote.requireByteExact(env.capabilities());
        Sample in = Sample.generated("session stdin", 200 * Sample.KIB + 7, 77, 16);
        try (Session s = env.session()) {
            out(s, "export KIT_X=1");
            ExecResult r = run(s, "printf 'a\\000b\\377'; printf 'no newline' >&2");
            assertArrayEquals(new byte[] {'a', 0, 'b', (byte) 0xff}, r.stdout().bytes(), "stdout of a session exec");
            assertEquals("no newline", r.stderr().text(), "stderr of a session exec");
            ExecResult cat = s.exec(ExecRequest.builder("cat").stdin(in.payload()).build());
            assertSucceeded(cat, "cat in a session");
            ByteCheck.assertSame(in, cat.stdout().open(), "stdin through a session exec");
            assertEquals(0, run(s, "export KIT_Y=2").stdout().size(), "a session exec printed a marker");
        }
    }

    @Promise("a hundred commands in a row in one session each see the state the last one left")
    @Test
    @KitDeadline.Longer(10) // a hundred execs in a row: one case's deadline for every ten
    void aHundredSequentialCommandsKeepCounting() {
        Environment env = kit.environment();
        String dir = kit.newDir(env, "session-hundred");
        try (Session s = env.session()) {
            out(s, "cd " + q(dir) + "; KIT_N=0; export KIT_N");
            for (int i = 1; i < 100; i++) {
                String step = i % 10 == 0 ? "mkdir d" + i + " && cd d" + i + " && " : "";
                ExecResult r = run(s, step + "KIT_N=$((KIT_N + 1)); printf %s \"$KIT_N\"");
                assertSucceeded(r, "session command #" + i);
                assertEquals(String.valueOf(i), r.stdout().text(), "session command #" + i);
            }
            String path = dir;
            for (int i = 10; i < 100; i += 10) {
                path += "/d" + i;
            }
            assertEquals(path + " 99\n", out(s, "echo \"$PWD $KIT_N\""));
        }
    }

    @Promise("two sessions side by side never see each other's state")
    @Test
    void twoSessionsSideBySideDoNotSeeEachOther() {
        Environment env = kit.environment();
        String a = kit.newDir(env, "session-a");
        String b = kit.newDir(env, "session-b");
        try (Session one = env.session(); Session two = env.session()) {
            assertNotEquals(one.id(), two.id());
            out(one, "cd " + q(a) + "; export KIT_WHO=one; export KIT_ONLY_ONE=1");
            out(two, "cd " + q(b) + "; export KIT_WHO=two");
            assertEquals(a + " one unset\n", out(one, "echo \"$PWD $KIT_WHO ${KIT_ONLY_TWO-unset}\""));
            assertEquals(b + " two unset\n", out(two, "echo \"$PWD $KIT_WHO ${KIT_ONLY_ONE-unset}\""));
        }
    }

    @Promise("a session's saved state is private and holds no injected secret")
    @Test
    void theSnapshotIsPrivateAndHoldsNoInjectedSecret() throws IOException {
        Environment env = kit.environment();
        String secret = "kit-session-secret-" + StdinScripts.randomToken();
        try (Session s = env.session()) {
            assertSucceeded(s.exec(ExecRequest.builder("export KIT_OWN_TOKEN=kit-own-value; cd /")
                    .env("KIT_API_TOKEN", secret).build()), "a session exec with a secret variable");
            String snapshot = s.directory() + "/" + SessionScript.SNAPSHOT;
            FileStat st = env.files().stat(snapshot).orElseThrow(() -> new AssertionError("no snapshot at " + snapshot));
            assertEquals(0600, st.mode() & 07777, "the snapshot's mode");
            String text;
            try (InputStream in = env.files().read(snapshot)) {
                text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            assertFalse(text.contains(secret), "a variable injected for one exec was written to the snapshot");
            assertTrue(text.contains("kit-own-value"), "a variable the session exported itself was not kept");
            List<String> names = env.files().list(s.directory()).stream().map(FileStat::name).toList();
            assertEquals(List.of(SessionScript.SNAPSHOT), names, "the session directory holds more than its snapshot");
        }
    }

    @Promise("the execs of one session run one at a time while plain execs go on")
    @Test
    void execsOfOneSessionRunOneAtATimeWhilePlainExecsGoOn() throws Exception {
        Environment env = kit.environment();
        String dir = kit.newDir(env, "session-serial");
        String go = dir + "/go";
        String log = dir + "/log";
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (Session s = env.session()) {
            Execution one = s.start(ExecRequest.of("echo start1 >> " + q(log) + "; echo started\n"
                    + "while [ ! -e " + q(go) + " ]; do sleep 0.1; done; echo end1 >> " + q(log)));
            CompletableFuture<ExecResult> two = CompletableFuture.supplyAsync(
                    () -> s.exec(ExecRequest.of("echo start2 >> " + q(log))), pool);
            // A plain exec runs while the session is busy: it is the one that lets the first command end.
            sh(env, "sleep 1; touch " + q(go));
            assertEquals(0, one.await().exitCode());
            assertEquals(0, two.get(2, TimeUnit.MINUTES).exitCode());
            assertEquals("start1\nend1\nstart2\n", sh(env, "cat " + q(log)), "two execs of one session overlapped");
        } finally {
            pool.shutdownNow();
        }
    }

    @Promise("two different sessions run at the same time")
    @Test
    void twoSessionsRunAtTheSameTime() throws Exception {
        Environment env = kit.environment();
        String go = kit.newDir(env, "session-together") + "/go";
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Session one = env.session(); Session two = env.session()) {
            Execution waiting = one.start(ExecRequest.of("while [ ! -e " + q(go) + " ]; do sleep 0.1; done; echo one"));
            // The second session's exec is the one that lets the first end: it must not queue behind it.
            CompletableFuture<ExecResult> other = CompletableFuture.supplyAsync(() -> two.exec(ExecRequest.of("touch " + q(go))), pool);
            try {
                assertSucceeded(other.get(1, TimeUnit.MINUTES), "the second session's exec"); // within the kit's deadline
            } catch (java.util.concurrent.TimeoutException e) {
                sh(env, "touch " + q(go)); // let the first end, so the sessions can close
                fail("an exec of a second session waited for the first session's exec");
            }
            assertEquals("one\n", waiting.await().stdout().text());
        } finally {
            pool.shutdownNow();
        }
    }

    @Promise("a busy session fails at once with a clear exception when the exec must not wait")
    @Test
    void aBusySessionFailsFastWhenItMustNotWait() throws Exception {
        try (Environment env = kit.open(Map.of("airlock.session.wait", "false"))) {
            String go = env.target().scratchDir() + "/session-go-" + StdinScripts.randomToken();
            try (Session s = env.session()) {
                Remote.Sink started = new Remote.Sink();
                Execution busy = s.start(ExecRequest.builder("echo started; while [ ! -e " + q(go) + " ]; do sleep 0.1; done")
                        .output(started, new Remote.Sink()).build());
                assertTrue(started.first.await(2, TimeUnit.MINUTES), "the session's first command never started");
                SessionBusyException e = assertThrows(SessionBusyException.class, () -> s.start(ExecRequest.of("true")));
                assertTrue(e.getMessage().contains("airlock.session.wait"), e.getMessage());
                sh(env, "touch " + q(go));
                assertEquals(0, busy.await().exitCode());
                assertEquals("free\n", out(s, "echo free"), "the session stayed busy after its command ended");
            }
        }
    }

    @Promise("four writers and four readers of one session never see a torn state snapshot")
    @Test
    @KitDeadline.Longer(4) // sixteen session execs in a row and the readers' execs among them
    void fourWritersAndFourReadersNeverSeeATornSnapshot() throws Exception {
        Environment env = kit.environment();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicInteger seen = new AtomicInteger();
        try (Session s = env.session()) {
            String snapshot = s.directory() + "/" + SessionScript.SNAPSHOT;
            List<CompletableFuture<Void>> writers = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                String gen = "w" + w;
                writers.add(CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < 4; i++) {
                        String v = gen + "-" + i;
                        assertSucceeded(run(s, "KIT_GEN=" + v + "; KIT_PAY=$(i=0; while [ $i -lt 2000 ]; do printf"
                                + " 0123456789abcdef; i=$((i + 1)); done)" + v + "; export KIT_GEN KIT_PAY"), "writer " + v);
                    }
                }, pool));
            }
            List<CompletableFuture<Void>> readers = new ArrayList<>();
            for (int r = 0; r < 4; r++) {
                readers.add(CompletableFuture.runAsync(() -> {
                    while (writing.get()) {
                        if (checkSnapshot(env, snapshot)) {
                            seen.incrementAndGet();
                        }
                    }
                }, pool));
            }
            try {
                CompletableFuture.allOf(writers.toArray(new CompletableFuture[0])).get(5, TimeUnit.MINUTES);
            } finally {
                writing.set(false);
            }
            CompletableFuture.allOf(readers.toArray(new CompletableFuture[0])).get(2, TimeUnit.MINUTES);
            assertTrue(checkSnapshot(env, snapshot), "no snapshot after the writers ended");
        } finally {
            pool.shutdownNow();
        }
        System.out.println("[airlock-tck] sessions: the readers saw " + seen.get() + " complete snapshots while 4 writers saved");
    }

    /** The value of {@code export NAME='value'} in a snapshot (the kit's values hold no quote), or null. */
    private static String value(String snapshot, String name) {
        String start = "export " + name + "='";
        int i = snapshot.indexOf(start);
        if (i < 0) {
            return null;
        }
        int from = i + start.length();
        int end = snapshot.indexOf('\'', from);
        return end < 0 ? "" : snapshot.substring(from, end);
    }

    /** False when there is none yet; fails on a torn snapshot or one whose variables disagree. */
    private static boolean checkSnapshot(Environment env, String snapshot) {
        String text;
        try (InputStream in = env.files().read(snapshot)) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (dev.airlock.NoSuchPathException e) {
            return false;
        } catch (IOException e) {
            throw new AssertionError("reading the snapshot failed: " + e.getMessage(), e);
        }
        if (!text.endsWith(SessionScript.COMPLETE + "\n")) {
            fail("a reader saw a torn snapshot (" + text.length() + " bytes)");
        }
        String gen = value(text, "KIT_GEN");
        String pay = value(text, "KIT_PAY");
        if ((gen == null) != (pay == null)) {
            fail("a snapshot holds one of the writers' two variables only");
        }
        if (gen != null) {
            assertEquals("0123456789abcdef".repeat(2000) + gen, pay, "a snapshot's variable was cut, or it mixes two saves");
        }
        return true;
    }
}
