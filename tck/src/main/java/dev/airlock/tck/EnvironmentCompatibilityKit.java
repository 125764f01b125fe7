package dev.airlock.tck;

import dev.airlock.spi.BulkInputStream;
import dev.airlock.AirlockException;
import dev.airlock.Capabilities;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.FileStat;
import dev.airlock.NetworkMode;
import dev.airlock.NoSuchPathException;
import dev.airlock.Payload;
import dev.airlock.PayloadStrategy;
import dev.airlock.RemoteFiles;
import dev.airlock.StagingException;
import dev.airlock.StdinMode;
import dev.airlock.WriteOptions;
import dev.airlock.event.ExecListener;
import dev.airlock.event.ExecState;
import dev.airlock.event.ExecTransition;
import dev.airlock.safety.ApprovalChannel;
import dev.airlock.settings.Settings;
import dev.airlock.shell.StdinScripts;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static dev.airlock.tck.Remote.alive;
import static dev.airlock.tck.Remote.assertNothingStaged;
import static dev.airlock.tck.Remote.assertSucceeded;
import static dev.airlock.tck.Remote.q;
import static dev.airlock.tck.Remote.requireByteExact;
import static dev.airlock.tck.Remote.sh;
import static dev.airlock.tck.Remote.succeed;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The compatibility kit: what every Airlock backend, ours or a plugin's, must do. A backend's test
 * extends it and says how to open a fresh environment:
 *
 * <pre>{@code
 * class AcmeCompatibilityTest extends EnvironmentCompatibilityKit {
 *     @Override
 *     protected Settings settings() {
 *         return Settings.of("airlock.acme.endpoint", "http://127.0.0.1:8080");
 *     }
 *
 *     @Override
 *     protected Environment openEnvironment(OpenContext context) {
 *         return new AcmeProvider().open(context);
 *     }
 * }
 * }</pre>
 *
 * <p>Every group but {@link StagedStdin} and {@link Attach} is the mandatory core: it never skips on
 * a capability ({@link ExitStatus} skips, saying why, only where the transport itself is within the
 * command's reach: see {@link #parentWithinReach}). A backend whose stdin is {@link StdinMode#HEREDOC} fails the core, because it is not
 * byte-exact. The optional groups follow {@link Environment#capabilities()} and print why they skip.
 * Checks after a {@code close()} look at the machine through a fresh environment when it sees the
 * same files (local, ssh to one host); sandboxes that can be attached to are checked by closing an
 * attached environment and looking from the owner ({@link Attach}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
@org.junit.jupiter.api.extension.ExtendWith(KitDeadline.class) // each case's own short deadline, naming the broken promise
@org.junit.jupiter.api.extension.ExtendWith(KitSelection.class) // -Dairlock.kit=Group[#case],... and -Dairlock.kit.failFast=true
public abstract class EnvironmentCompatibilityKit {
    private static final String TAG = "[airlock-tck] ";
    private static final String CANCEL = "airlock.cancel";

    private final AtomicLong names = new AtomicLong();
    private Environment shared;

    /** The backend's own settings (endpoint, image, credentials...); the kit layers its per-case settings on top. */
    protected abstract Settings settings();

    /**
     * Opens a fresh environment of the backend under test with exactly this context: its settings
     * are {@link #settings()} with the kit's extras on top ({@code airlock.cancel=sandbox}, caps...),
     * its listeners must be passed to the environment (the kit parks transitions with them).
     */
    protected abstract Environment openEnvironment(OpenContext context);

    /**
     * A second environment on the same sandbox as {@code to}, which does not own it (closing it
     * leaves the sandbox running). Backends that can attach override this; the default cannot.
     */
    protected Optional<Environment> attach(Environment to) {
        return Optional.empty();
    }

    /** What an {@link ExitStatus} case does to the command's parent process. */
    protected enum ParentAttack {
        /** Writes {@code exit_group(0)} into its code through {@code /proc/PID/mem}. */
        REWRITE,
        /** {@code kill -9}. */
        KILL,
        /** {@code kill -STOP}. */
        STOP
    }

    /**
     * Why, on this backend, a command's {@code attack} on its parent cannot leave its exit status
     * intact, or empty (the default): the launcher execs into the command's shell, so no process
     * of the command's reach stands between it and the transport. {@link ExitStatus} skips with
     * this reason; only a backend whose transport itself is within the command's reach says so
     * (ssh: sshd's session process, which runs as the login user). A backend whose commands are
     * this JVM's own children is found and skipped by the kit itself.
     */
    protected Optional<String> parentWithinReach(ParentAttack attack) {
        return Optional.empty();
    }

    /**
     * Whether this backend's commands, with {@code airlock.network=on}, share this JVM's host network,
     * so a server on the host's loopback answers them (local, where commands are host processes). The
     * default is false: a container's or a cloud sandbox's loopback is its own, and {@link NetworkPolicy}
     * then skips its "on reaches the host" case, saying so.
     */
    protected boolean sharesHostLoopback() {
        return false;
    }

    /**
     * Removes a snapshot a {@link Snapshots} case took (by its id), so a run leaves no image
     * behind. The default removes nothing and says so; a backend that takes snapshots overrides it.
     */
    protected void discardSnapshot(String id) {
        System.out.println(TAG + "note: snapshot " + id + " is left for the backend's own cleanup (discardSnapshot is not overridden)");
    }

    /** Credentials the backend uses (tokens, passwords): none may ever appear in a process's argv on this machine. */
    protected Collection<String> secrets() {
        return List.of();
    }

    /** The environment most cases share, opened on first use with {@link #settings()} alone. */
    protected final synchronized Environment environment() {
        if (shared == null) {
            shared = open(Map.of());
            System.out.println(TAG + shared.name() + ": " + shared.capabilities() + " on " + shared.target());
        }
        return shared;
    }

    /** A fresh environment with {@code extra} settings on top of {@link #settings()} and these listeners. */
    protected final Environment open(Map<String, String> extra, ExecListener... listeners) {
        OpenContext context = OpenContext.builder(settings().with(extra)).listeners(List.of(listeners)).build();
        Environment env = openEnvironment(context);
        assertNotNull(env, "openEnvironment returned null");
        return env;
    }

    @AfterAll
    final void closeSharedEnvironment() {
        if (shared != null) {
            shared.close();
            shared = null;
        }
    }

    /** Marks the {@code sleep 600} processes this kit's cases start, so {@link #reapTrees} finds what outlived them. */
    private final String treeMark = "AIRLOCK_KIT_TREE=" + StdinScripts.randomToken();
    private final java.util.concurrent.atomic.AtomicBoolean treesStarted = new java.util.concurrent.atomic.AtomicBoolean();

    /** {@link Remote#processTree}, its processes marked so they are reaped after the case even when the backend failed to kill them. */
    final String tree(String pidFile) {
        return marked(Remote.processTree(pidFile));
    }

    /** {@code command} with every process it starts marked for {@link #reapTrees}. */
    final String marked(String command) {
        treesStarted.set(true);
        return "export " + treeMark + "\n" + command;
    }

    /**
     * A case that failed because the backend did not kill a tree must not leave it running on the
     * author's machine: each marked {@code sleep 600} still running is SIGKILLed, found through
     * {@code /proc} by its command line and its environment's mark (best effort: where the shared
     * environment sees the case's processes, as on local and ssh).
     */
    @AfterEach
    final void reapTrees() {
        if (!treesStarted.getAndSet(false)) {
            return;
        }
        String script = "for d in /proc/[0-9]*; do\n"
                + "  [ \"$(tr '\\0' ' ' < \"$d/cmdline\" 2>/dev/null)\" = 'sleep 600 ' ] || continue\n"
                + "  tr '\\0' '\\n' < \"$d/environ\" 2>/dev/null | grep -qx " + q(treeMark) + " && kill -KILL \"${d#/proc/}\" 2>/dev/null\n"
                + "done\nexit 0\n";
        try {
            environment().exec(ExecRequest.builder(script).timeout(Duration.ofSeconds(30)).build());
        } catch (RuntimeException e) {
            System.out.println(TAG + "could not reap the process trees of the case: " + e.getMessage());
        }
    }

    /** Skips a case the backend's capabilities rule out, printing why (a skip never passes silently). */
    protected static void assumeCapability(boolean condition, String reason) {
        if (!condition) {
            System.out.println(TAG + "skipped: " + reason);
            Assumptions.abort(reason);
        }
    }

    /** A new empty directory on the target, inside the environment's private scratch dir. */
    final String newDir(Environment env, String label) {
        String dir = env.target().scratchDir() + "/kit-" + label + "-" + names.incrementAndGet();
        env.files().mkdirs(dir);
        return dir;
    }

    /**
     * An environment that can look at {@code env}'s machine once {@code env} is closed: a fresh one
     * that sees {@code env}'s files (local, ssh); empty with a printed note otherwise (a sandbox
     * the environment owned is gone with it; {@link Attach} covers closing an attached one).
     */
    private Optional<Environment> observer(Environment env) {
        String marker = env.target().scratchDir() + "/kit-observer-" + StdinScripts.randomToken();
        env.files().write(marker, new byte[] {1});
        Environment fresh = open(Map.of());
        boolean sameMachine;
        try {
            sameMachine = fresh.files().stat(marker).isPresent();
        } catch (RuntimeException e) {
            fresh.close();
            throw e;
        }
        if (sameMachine) {
            return Optional.of(fresh);
        }
        fresh.close();
        System.out.println(TAG + "note: a fresh " + env.name() + " environment does not see another's files, so the"
                + " machine cannot be looked at after close; process and file checks after close are left to the attach group");
        return Optional.empty();
    }

    private static void assertGoneAfterClose(Environment observer, Environment closed, List<String> pidFiles) {
        assertTrue(observer.files().stat(closed.target().privateDir()).isEmpty(),
                "close() left the private dir " + closed.target().privateDir() + " (staged and output files) behind");
        for (String pid : pidFiles) {
            assertGone(observer, pid, "a process started by a command outlived close() of its environment");
        }
    }

    /**
     * Fails when the process whose pid is in {@code pidFile} still runs; skips the case (after
     * everything else it checked) where one exec cannot see another's processes, since there the
     * check would pass whatever happened: each command has a process namespace of its own, which
     * the kernel ends with it (bubblewrap's {@code --unshare-pid}), and the backend's own tests
     * judge its process trees from the host.
     */
    private static void assertGone(Environment env, String pidFile, String message) {
        assumeCapability(Remote.processesVisibleAcrossExecs(env), "one exec cannot see another's processes here"
                + " (a process namespace per command), so whether this one is gone cannot be judged from inside");
        assertFalse(alive(env, pidFile), message);
    }

    // ====================================================================================== exec

    /** (core) Commands run with their exit codes, cwd and environment intact. */
    @Nested
    class Exec {

        @Promise("the exec's exit code is the command's own (exit N gives N), neither timed out nor cancelled")
        @ParameterizedTest(name = "exit {0}")
        @ValueSource(ints = {0, 1, 7, 255})
        void exitCodeIsTheCommands(int code) {
            ExecResult r = environment().exec(ExecRequest.of("exit " + code));
            assertEquals(code, r.exitCode());
            assertFalse(r.timedOut() || r.cancelled(), "a plain exit is neither timed out nor cancelled");
            assertEquals(code == 0, r.succeeded());
        }

        @Promise("a shell killed by signal N exits 128+N and runs nothing after the signal")
        @ParameterizedTest(name = "SIG{0} -> 128+{1}")
        @CsvSource({"HUP, 1", "KILL, 9", "TERM, 15"})
        void shellKilledBySignalExits128PlusN(String signal, int number) {
            // The shell itself dies of the signal: `kill $$`, not `exit 143`.
            ExecResult r = environment().exec(ExecRequest.of("echo before\nkill -s " + signal + " $$\necho after"));
            assertEquals(128 + number, r.exitCode(), "a shell killed by SIG" + signal + " must exit 128+" + number
                    + "; stderr: " + Remote.head(r.stderr()));
            assertEquals("before\n", r.stdout().text(), "the shell must die at the signal, not carry on");
            assertFalse(r.timedOut() || r.cancelled());
        }

        @Promise("a working directory that cannot be entered exits 126 and runs nothing")
        @Test
        void missingWorkingDirectoryExits126AndRunsNothing() {
            Environment env = environment();
            String dir = newDir(env, "cwd");
            String marker = dir + "/ran";
            ExecResult r = env.exec(ExecRequest.builder("touch " + q(marker)).cwd(dir + "/missing").build());
            assertEquals(ExecResult.EXIT_CANNOT_ENTER_CWD, r.exitCode(), "a cwd that cannot be entered must exit 126");
            assertTrue(env.files().stat(marker).isEmpty(), "the command ran although its cwd could not be entered");
        }

        @Promise("the command runs in the requested working directory, whatever characters its name holds (quote it)")
        @ParameterizedTest(name = "cwd \"{0}\"")
        @ValueSource(strings = {"dir with spaces", "it's \"quoted\"", "new\nline", "-leading-dash", "ünïcødé $HOME *"})
        void workingDirectoryIsHonoured(String name) {
            Environment env = environment();
            String dir = newDir(env, "cwd") + "/" + name;
            env.files().mkdirs(dir);
            ExecResult r = succeed(env, ExecRequest.builder("pwd; touch here").cwd(dir).build(), "pwd in " + dir);
            assertEquals(dir + "\n", r.stdout().text());
            assertTrue(env.files().stat(dir + "/here").isPresent(), "a relative path did not land in the cwd");
        }

        @Promise("a working directory of ~ is Target.home()")
        @Test
        void tildeWorkingDirectoryIsTheEnvironmentsHome() {
            Environment env = environment();
            ExecResult r = succeed(env, ExecRequest.builder("pwd").cwd("~").build(), "pwd in ~");
            assertEquals(env.target().home() + "\n", r.stdout().text(), "~ must expand to Target.home()");
        }

        @Promise("environment values arrive unchanged: quotes, newlines, empty and 32 KiB values, shell metacharacters (never put them into a script unquoted)")
        @Test
        void environmentValuesArriveExactly() {
            Map<String, String> vars = new LinkedHashMap<>();
            vars.put("KIT_SPACES", "  with  spaces  ");
            vars.put("KIT_QUOTES", "it's \"double\" and 'single'");
            vars.put("KIT_EQUALS", "a=b==c=");
            vars.put("KIT_NEWLINES", "line1\nline2\n\n");
            vars.put("KIT_EMPTY", "");
            vars.put("KIT_SHELL", "$HOME `id` $(id) \\ ; | & > < * ?");
            vars.put("KIT_DASH", "-n");
            vars.put("KIT_UNICODE", "ünïcødé ✓ 漢字");
            vars.put("_kit_lower_9", "lower case name");
            vars.put("KIT_LONG", "x".repeat(32 * 1024));
            StringBuilder cmd = new StringBuilder("printf '%s\\0'");
            vars.keySet().forEach(k -> cmd.append(" \"$").append(k).append('"'));
            ExecResult r = succeed(environment(), ExecRequest.builder(cmd.toString()).env(vars).build(), "printf of env values");
            String[] got = r.stdout().text().split("\0", -1);
            List<String> want = new ArrayList<>(vars.values());
            assertEquals(want.size() + 1, got.length, "one value per variable");
            for (int i = 0; i < want.size(); i++) {
                String name = new ArrayList<>(vars.keySet()).get(i);
                assertEquals(want.get(i), got[i], "the value of " + name + " changed on the way");
            }
        }

        @Promise("a command given no stdin reads end-of-input at once and never waits for input (give it /dev/null or a closed pipe)")
        @Test
        void noStdinMeansEndOfInputAtOnce() {
            ExecResult r = environment().exec(ExecRequest.builder("cat; if read -r x; then echo line; else echo eof; fi")
                    .timeout(Duration.ofMinutes(2)).build());
            assertFalse(r.timedOut(), "a command without stdin waited for input instead of reading end-of-input");
            assertEquals(0, r.exitCode());
            assertEquals("eof\n", r.stdout().text(), "cat must print nothing and read must see end-of-input");
        }

        @Promise("a script longer than Capabilities.argvLimit() runs, with its stdin, and leaves nothing staged")
        @Test
        void scriptLongerThanTheArgvLimitRuns() {
            Environment env = environment();
            int limit = env.capabilities().argvLimit();
            String filler = "x".repeat(Math.min(limit + 4096, 4 << 20));
            ExecResult r = succeed(env, ExecRequest.of(": '" + filler + "'\necho long-ok"), "a script over the argv limit");
            assertEquals("long-ok\n", r.stdout().text());
            Sample s = Sample.generated("100 KiB", 100 * Sample.KIB, 100, 4);
            ExecResult cat = succeed(env, ExecRequest.builder(": '" + filler + "'\ncat").stdin(s.payload()).build(),
                    "a script over the argv limit reading stdin");
            ByteCheck.assertSame(s, cat.stdout().open(), "stdin of a staged script -> stdout");
            assertNothingStaged(env, "after a long script ran");
        }
    }

    // ===================================================================================== stdin

    /** (core) Stdin arrives byte-exact, ends when it should, and is never run as code. */
    @Nested
    class Stdin {

        @Promise("the backend's stdin mode is byte-exact (PIPE or PAYLOAD, never HEREDOC)")
        @Test
        void stdinModeIsByteExact() {
            requireByteExact(environment().capabilities());
        }

        @Promise("stdin reaches the command byte-exact: cat prints it back unchanged and nothing on stderr")
        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.airlock.tck.Sample#standard")
        void stdinToStdout(Sample s) {
            Environment env = environment();
            requireByteExact(env.capabilities());
            ExecResult r = succeed(env, ExecRequest.builder("cat").stdin(s.payload()).build(), "cat");
            ByteCheck.assertSame(s, r.stdout().open(), "stdin -> stdout");
            assertEquals(0, r.stderr().size(), () -> "unexpected stderr: " + Remote.head(r.stderr()));
        }

        @Promise("stdin reaches the command byte-exact: cat > file writes exactly it")
        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.airlock.tck.Sample#standard")
        void stdinToFile(Sample s) {
            Environment env = environment();
            requireByteExact(env.capabilities());
            String f = newDir(env, "stdin") + "/in.bin";
            succeed(env, ExecRequest.builder("cat > " + q(f)).stdin(s.payload()).build(), "cat > file");
            ByteCheck.assertSame(s, env.files().read(f), "stdin -> a file (read back with files().read)");
            env.files().delete(f);
        }

        @Promise("64 MiB of stdin streams through to a caller's sink byte-exact (stream it, never hold it whole)")
        @Test
        void stdinOf64MiBStreamsThrough() {
            Environment env = environment();
            requireByteExact(env.capabilities());
            Sample s = Sample.huge();
            ByteCheck out = new ByteCheck(s);
            Remote.Sink err = new Remote.Sink();
            ExecResult r = env.exec(ExecRequest.builder("cat").stdin(s.payload()).output(out, err).build());
            assertEquals(0, r.exitCode(), () -> "cat exited " + r.exitCode() + ": " + err.text());
            out.assertMatches("stdin -> stdout streamed to a caller's sink");
        }

        @Promise("stdin of unknown length (a stream without a size) arrives byte-exact and ends")
        @ParameterizedTest(name = "{0}")
        @ValueSource(strings = {"empty", "8 MiB"})
        void stdinOfUnknownLength(String which) {
            Environment env = environment();
            requireByteExact(env.capabilities());
            Sample s = Sample.standard().stream().filter(x -> x.name().equals(which)).findFirst().orElseThrow();
            ExecResult r = succeed(env, ExecRequest.builder("cat").stdin(s.unknownLengthPayload()).build(), "cat");
            ByteCheck.assertSame(s, r.stdout().open(), "stdin of unknown length -> stdout");
        }

        @Promise("a command that reads part of its stdin, or none, ends normally: unread stdin must not hold the exec")
        @ParameterizedTest(name = "command `{0}`")
        @ValueSource(strings = {"true", "head -c 10", "head -c 1048576 > /dev/null; echo read-some"})
        void aCommandThatReadsPartOfItsStdinEndsNormally(String command) {
            Environment env = environment();
            Sample s = Sample.generated("8 MiB", 8 * Sample.MIB, 88, 0);
            ExecResult r = env.exec(ExecRequest.builder(command).stdin(s.payload()).timeout(Duration.ofMinutes(2)).build());
            assertFalse(r.timedOut(), "unread stdin made the command hang");
            assertEquals(0, r.exitCode(), () -> "stderr: " + Remote.head(r.stderr()));
            if (command.equals("head -c 10")) {
                ByteCheck.assertSame(s.prefix(10), r.stdout().open(), "the part of stdin that was read");
            }
        }

        @Promise("stdin the command does not read is never run as shell code (never append stdin to the script)")
        @ParameterizedTest(name = "command `{0}`")
        @ValueSource(strings = {"true", "exit 3", "echo x; exit 0", "read -r first"})
        void unreadStdinIsNeverRunAsShellCode(String command) {
            Environment env = environment();
            String marker = newDir(env, "unread") + "/executed";
            String evil = "touch " + q(marker) + "\n";
            env.exec(ExecRequest.builder(command).stdin(Payload.ofUtf8("first line\n" + evil + evil)).build());
            assertTrue(env.files().stat(marker).isEmpty(), "stdin the command did not read was run as shell code");
        }

        @Promise("a payload that breaks fails the exec, and the command never takes its first part for the whole (launch under setsid, so the core kills the group before closing stdin)")
        @ParameterizedTest(name = "{0}")
        @ValueSource(strings = {"source fails after 100 KiB", "stream shorter than its declared length"})
        void brokenPayloadNeverLooksComplete(String how) {
            Environment env = environment();
            String dir = newDir(env, "broken");
            Payload p = how.startsWith("source")
                    ? Payload.ofStream(new FailingStream(100 * 1024), 1 << 20)
                    : Payload.ofStream(new ByteArrayInputStream(new byte[100]), 1000);
            String done = dir + "/done";
            AirlockException e = assertThrows(AirlockException.class, () -> env.exec(ExecRequest.builder(
                    "cat > " + q(dir + "/in") + " && touch " + q(done)).stdin(p).build()),
                    "a payload that broke must fail the exec, not end the command's input early");
            assertEquals(1, e.getMessage().lines().count(), "error messages are one line: " + e.getMessage());
            assertTrue(env.files().stat(done).isEmpty(), "the command took a broken payload's first part for the whole"
                    + " (the core kills its process group before closing its stdin; launch must start it under setsid)");
        }
    }

    // ==================================================================================== output

    /** (core) Stdout and stderr arrive byte-exact, apart, and within the capture cap. */
    @Nested
    class Output {

        @Promise("a file printed to stdout arrives byte-exact")
        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.airlock.tck.Sample#standard")
        void fileToStdout(Sample s) {
            Environment env = environment();
            requireByteExact(env.capabilities());
            String f = newDir(env, "out") + "/file.bin";
            env.files().write(f, s.payload());
            ExecResult r = succeed(env, ExecRequest.of("cat -- " + q(f)), "cat file");
            ByteCheck.assertSame(s, r.stdout().open(), "a file -> stdout");
            env.files().delete(f);
        }

        @Promise("stdin copied to stderr arrives byte-exact on stderr, with nothing on stdout")
        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.airlock.tck.Sample#standard")
        void stdinToStderr(Sample s) {
            Environment env = environment();
            requireByteExact(env.capabilities());
            ExecResult r = succeed(env, ExecRequest.builder("cat >&2").stdin(s.payload()).build(), "cat >&2");
            ByteCheck.assertSame(s, r.stderr().open(), "stdin -> stderr");
            assertEquals(0, r.stdout().size(), "nothing was written to stdout");
        }

        @Promise("stdout and stderr stay apart and byte-exact while both carry 8 MiB at once (drain both streams at the same time)")
        @Test
        void stdoutAndStderrStayApartAt8MiBEachInterleaved() {
            Environment env = environment();
            requireByteExact(env.capabilities());
            int block = 64 * 1024;
            Sample whole = Sample.generated("16 MiB source", 16 * Sample.MIB, 1616, 8);
            String f = newDir(env, "apart") + "/source.bin";
            env.files().write(f, whole.payload());
            // Alternate 64 KiB blocks to stdout and stderr, so both pipes are busy at once.
            String script = "f=" + q(f) + "\ni=0\nwhile [ $i -lt " + (whole.size() / block / 2) + " ]; do\n"
                    + "  dd if=\"$f\" bs=" + block + " skip=$((2*i)) count=1 2>/dev/null\n"
                    + "  { dd if=\"$f\" bs=" + block + " skip=$((2*i+1)) count=1 2>/dev/null; } >&2\n"
                    + "  i=$((i+1))\ndone\n";
            ExecResult r = env.exec(ExecRequest.builder(script).captureLimit(16 * Sample.MIB).build());
            assertEquals(0, r.exitCode());
            ByteCheck.assertSame(whole.alternateBlocks(block, 0), r.stdout().open(), "stdout");
            ByteCheck.assertSame(whole.alternateBlocks(block, 1), r.stderr().open(), "stderr");
            env.files().delete(f);
        }

        @Promise("a capture limit keeps the output up to the cap and counts every byte it drops")
        @ParameterizedTest(name = "cap {1} of {0} bytes to {2}")
        @CsvSource({"5000, 1000, stdout", "5000, 1000, stderr", "5000, 0, stdout", "5242880, 3145728, stdout",
                "4096, 4096, stderr", "100, 1000, stdout"})
        void captureCapCountsDroppedBytesAndKeepsTheRest(long size, long cap, String stream) {
            Environment env = environment();
            requireByteExact(env.capabilities());
            Sample s = Sample.generated(size + " bytes", size, size ^ cap, 8);
            ExecResult r = env.exec(ExecRequest.builder(stream.equals("stdout") ? "cat" : "cat >&2")
                    .stdin(s.payload()).captureLimit(cap).build());
            assertEquals(0, r.exitCode());
            var kept = stream.equals("stdout") ? r.stdout() : r.stderr();
            var other = stream.equals("stdout") ? r.stderr() : r.stdout();
            ByteCheck.assertSame(s.prefix(cap), kept.open(), "the kept part of " + stream);
            assertEquals(Math.max(0, size - cap), kept.dropped(), "bytes beyond the cap must be counted as dropped");
            assertEquals(0, other.size() + other.dropped(), "the other stream got nothing");
        }

        @Promise("a caller's output sinks get every byte, flushed, before the exec returns")
        @Test
        void callersSinksGetEverythingFlushed() {
            Environment env = environment();
            Sample s = Sample.generated("300 KiB", 300 * Sample.KIB, 300, 8);
            ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
            ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
            // Buffered sinks: the bytes reach the arrays only if the core flushes before await returns.
            BufferedOutputStream out = new BufferedOutputStream(outBytes, 1 << 20);
            BufferedOutputStream err = new BufferedOutputStream(errBytes, 1 << 20);
            ExecResult r = env.exec(ExecRequest.builder("cat; echo done >&2").stdin(s.payload()).output(out, err).build());
            assertEquals(0, r.exitCode());
            ByteCheck.assertSame(s, new ByteArrayInputStream(outBytes.toByteArray()), "stdout to a caller's sink (flushed)");
            assertEquals("done\n", errBytes.toString(StandardCharsets.UTF_8));
        }
    }

    // ===================================================================================== files

    /** (core) Files are written atomically and byte-exact, and every operation takes any path. */
    @Nested
    class Files {

        @Promise("files().write then files().read give back the same bytes")
        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.airlock.tck.Sample#standard")
        void writeThenRead(Sample s) {
            Environment env = environment();
            requireByteExact(env.capabilities());
            String f = newDir(env, "files") + "/data.bin";
            env.files().write(f, s.payload());
            ByteCheck.assertSame(s, env.files().read(f), "files().write -> files().read");
            assertEquals(s.size(), env.files().stat(f).orElseThrow().size());
            env.files().delete(f);
        }

        @Promise("a 64 MiB file is written and read back byte-exact (stream it, never hold it whole)")
        @Test
        void writeAndReadOf64MiB() {
            Environment env = environment();
            requireByteExact(env.capabilities());
            Sample s = Sample.huge();
            String f = newDir(env, "files") + "/huge.bin";
            try {
                env.files().write(f, s.payload());
                ByteCheck.assertSame(s, env.files().read(f), "files().write -> files().read");
            } finally {
                env.files().delete(f);
            }
        }

        @Promise("a write from a stream of unknown length stores every byte")
        @Test
        void writeFromAStreamOfUnknownLength() {
            Environment env = environment();
            requireByteExact(env.capabilities());
            Sample s = Sample.generated("3 MiB", 3 * Sample.MIB, 3, 4);
            String f = newDir(env, "files") + "/stream.bin";
            env.files().write(f, s.unknownLengthPayload());
            ByteCheck.assertSame(s, env.files().read(f), "files().write of a stream of unknown length");
        }

        @Promise("a write is atomic: a reader polling the path sees the old or the new content, never a part (write a temporary file, then rename it)")
        @Test
        void writeIsAtomicForAReaderPollingThePath() throws Exception {
            Environment env = environment();
            String dir = newDir(env, "atomic");
            String f = dir + "/target.bin";
            String stop = dir + "/stop";
            Sample v1 = Sample.generated("v1", 4 * Sample.MIB, 41, 0);
            Sample v2 = Sample.generated("v2", 4 * Sample.MIB, 42, 0);
            env.files().write(f, v2.payload());
            String sum2 = sh(env, "cksum < " + q(f));
            env.files().write(f, v1.payload());
            String sum1 = sh(env, "cksum < " + q(f));
            Remote.Started reader = Remote.start(env, ExecRequest.builder(
                    "while [ ! -e " + q(stop) + " ]; do cksum < " + q(f) + "; done"), "the polling reader");
            for (int i = 0; i < 6; i++) {
                env.files().write(f, (i % 2 == 0 ? v2 : v1).payload());
            }
            env.files().write(stop, new byte[0]);
            ExecResult r = reader.await();
            assertEquals(0, r.exitCode(), () -> "the reader failed: " + reader.err().text());
            Set<String> seen = new TreeSet<>(reader.out().text().lines().toList());
            Set<String> whole = Set.of(sum1.strip(), sum2.strip());
            for (String s : seen) {
                assertTrue(whole.contains(s), "a reader saw a partial file (cksum " + s + "; whole versions: " + whole + ")");
            }
            List<String> left = env.files().list(dir).stream().map(FileStat::name).toList();
            assertEquals(List.of("stop", "target.bin"), left, "writes left temporary files behind");
        }

        @Promise("a write keeps an existing file's mode and sets a mode WriteOptions gives")
        @Test
        void existingModeIsKeptAndAnExplicitModeIsSet() {
            Environment env = environment();
            String f = newDir(env, "mode") + "/script.sh";
            env.files().write(f, Payload.ofUtf8("one"), WriteOptions.mode(0751));
            assertEquals(0751, env.files().stat(f).orElseThrow().mode());
            env.files().write(f, "two".getBytes(StandardCharsets.UTF_8));
            assertEquals(0751, env.files().stat(f).orElseThrow().mode(), "a rewrite must keep the existing mode");
            assertEquals("two", read(env, f));
            env.files().write(f, Payload.ofUtf8("three"), WriteOptions.mode(0600));
            assertEquals(0600, env.files().stat(f).orElseThrow().mode());
        }

        @Promise("writing onto a directory fails and changes nothing")
        @Test
        void writingOntoADirectoryFailsAndChangesNothing() {
            Environment env = environment();
            String dir = newDir(env, "ontodir");
            env.files().write(dir + "/d/inside", new byte[] {1});
            assertThrows(AirlockException.class, () -> env.files().write(dir + "/d", new byte[] {2}));
            assertTrue(env.files().stat(dir + "/d").orElseThrow().isDirectory());
            assertArrayEquals(new byte[] {1}, readBytes(env, dir + "/d/inside"));
            assertEquals(List.of("d"), env.files().list(dir).stream().map(FileStat::name).toList(), "no temporary file is left");
        }

        @Promise("a write creates missing parent directories unless WriteOptions refuses it")
        @Test
        void parentsAreCreatedUnlessRefused() {
            Environment env = environment();
            String dir = newDir(env, "parents");
            env.files().write(dir + "/a/b/c/file.txt", "deep".getBytes(StandardCharsets.UTF_8));
            assertEquals("deep", read(env, dir + "/a/b/c/file.txt"));
            assertTrue(env.files().stat(dir + "/a/b").orElseThrow().isDirectory());
            assertThrows(NoSuchPathException.class, () -> env.files().write(dir + "/x/y/file.txt",
                    Payload.ofUtf8("no"), WriteOptions.defaults().withCreateParents(false)));
            assertTrue(env.files().stat(dir + "/x").isEmpty(), "a refused write created directories");
        }

        @Promise("a write to a symlink writes through to its target and keeps the link")
        @Test
        void symlinkedTargetIsWrittenThrough() {
            Environment env = environment();
            String dir = newDir(env, "link");
            env.files().mkdirs(dir + "/real");
            env.files().write(dir + "/real/file.txt", "old".getBytes(StandardCharsets.UTF_8));
            sh(env, "cd -- " + q(dir) + " && ln -s real/file.txt link");
            env.files().write(dir + "/link", "new through the link".getBytes(StandardCharsets.UTF_8));
            assertEquals(FileStat.Type.SYMLINK, env.files().stat(dir + "/link").orElseThrow().type(), "the link must stay a link");
            assertEquals("new through the link", read(env, dir + "/real/file.txt"));
            assertEquals("new through the link", read(env, dir + "/link"));
        }

        @Promise("paths with spaces, quotes, newlines, a leading dash or unicode work in every file operation (quote them, end options with --)")
        @Test
        void awkwardNamesWorkInEveryOperation() {
            Environment env = environment();
            String dir = newDir(env, "names");
            List<String> names = List.of("with space", "it's \"quoted\"", "new\nline", "-leading-dash", "--",
                    "*glob?[x]", "$HOME `id` \\back", "ünïcødé ✓", " leading space", "trailing space ", ".hidden");
            for (String n : names) {
                byte[] content = n.getBytes(StandardCharsets.UTF_8);
                env.files().write(dir + "/" + n, content);
                assertArrayEquals(content, readBytes(env, dir + "/" + n), "read back " + printable(n));
                FileStat st = env.files().stat(dir + "/" + n).orElseThrow(() -> new AssertionError("stat " + printable(n)));
                assertEquals(n, st.name());
                assertEquals(content.length, st.size());
            }
            assertEquals(new TreeSet<>(names), new TreeSet<>(env.files().list(dir).stream().map(FileStat::name).toList()));
            for (String n : names) {
                assertTrue(env.files().delete(dir + "/" + n), "delete " + printable(n));
            }
            assertEquals(List.of(), env.files().list(dir));
        }

        @Promise("stat reports type, size and mode, and describes a symlink itself, not its target")
        @Test
        void statReportsTypeSizeAndModeWithoutFollowingLinks() {
            Environment env = environment();
            String dir = newDir(env, "stat");
            env.files().write(dir + "/f", Payload.ofUtf8("12345"), WriteOptions.mode(0640));
            env.files().mkdirs(dir + "/d");
            sh(env, "cd -- " + q(dir) + " && ln -s d dlink && ln -s f flink");
            FileStat f = env.files().stat(dir + "/f").orElseThrow();
            assertEquals(FileStat.Type.FILE, f.type());
            assertEquals(5, f.size());
            assertEquals(0640, f.mode());
            assertEquals("f", f.name());
            assertEquals(FileStat.Type.DIRECTORY, env.files().stat(dir + "/d").orElseThrow().type());
            assertEquals(FileStat.Type.SYMLINK, env.files().stat(dir + "/dlink").orElseThrow().type());
            assertEquals(FileStat.Type.SYMLINK, env.files().stat(dir + "/flink").orElseThrow().type());
            assertTrue(env.files().stat(dir + "/missing").isEmpty());
        }

        @Promise("list returns every entry, hidden ones too, sorted by name")
        @Test
        void listIsSortedAndIncludesHiddenEntries() {
            Environment env = environment();
            String dir = newDir(env, "list");
            env.files().write(dir + "/b.txt", new byte[3]);
            env.files().write(dir + "/.hidden", new byte[1]);
            env.files().write(dir + "/..dots", new byte[0]);
            env.files().mkdirs(dir + "/a-dir");
            List<FileStat> l = env.files().list(dir);
            assertEquals(List.of("..dots", ".hidden", "a-dir", "b.txt"), l.stream().map(FileStat::name).toList());
            assertEquals(FileStat.Type.DIRECTORY, l.get(2).type());
            assertEquals(3, l.get(3).size());
            assertEquals(dir + "/b.txt", l.get(3).path());
            assertThrows(NoSuchPathException.class, () -> env.files().list(dir + "/missing"));
            assertThrows(AirlockException.class, () -> env.files().list(dir + "/b.txt"), "listing a file is an error");
        }

        @Promise("delete removes files, whole trees and links, never a link's target")
        @Test
        void deleteRemovesFilesTreesAndLinksButNotLinkTargets() {
            Environment env = environment();
            String dir = newDir(env, "delete");
            env.files().write(dir + "/f", new byte[1]);
            env.files().write(dir + "/tree/a/b/c", new byte[1]);
            env.files().write(dir + "/kept/inside", new byte[1]);
            sh(env, "cd -- " + q(dir) + " && ln -s kept link");
            assertTrue(env.files().delete(dir + "/f"));
            assertFalse(env.files().delete(dir + "/f"), "deleting what is gone reports false");
            assertTrue(env.files().delete(dir + "/tree"));
            assertTrue(env.files().stat(dir + "/tree").isEmpty());
            assertTrue(env.files().delete(dir + "/link"));
            assertTrue(env.files().stat(dir + "/kept/inside").isPresent(), "deleting a link must not touch its target");
        }

        @Promise("mkdirs creates missing parents and accepts a directory that exists")
        @Test
        void mkdirsCreatesParentsAndAcceptsAnExistingDirectory() {
            Environment env = environment();
            String dir = newDir(env, "mkdirs") + "/one/two three/-four";
            env.files().mkdirs(dir);
            env.files().mkdirs(dir);
            assertTrue(env.files().stat(dir).orElseThrow().isDirectory());
        }

        @Promise("copyIn and copyOut keep every file's content and mode")
        @Test
        void copyInAndCopyOutKeepContentAndModes() throws IOException {
            Environment env = environment();
            requireByteExact(env.capabilities());
            byte[] all = new byte[256];
            for (int i = 0; i < all.length; i++) {
                all[i] = (byte) i;
            }
            List<Tar.Entry> tree = List.of(
                    Tar.Entry.dir("a", 0755),
                    Tar.Entry.file("a/run.sh", 0755, "#!/bin/sh\necho hi\n".getBytes(StandardCharsets.UTF_8)),
                    Tar.Entry.dir("a/private", 0700),
                    Tar.Entry.file("a/private/key", 0600, new byte[] {0, 1, 0, (byte) 0xff, '\n'}),
                    Tar.Entry.file("a/empty", 0644, new byte[0]),
                    Tar.Entry.file("a/all-bytes", 0640, all),
                    Tar.Entry.file("name with space", 0604, "x".getBytes(StandardCharsets.UTF_8)));
            String dest = newDir(env, "copy") + "/dest";
            env.files().copyIn(dest, new ByteArrayInputStream(Tar.write(tree)));
            for (Tar.Entry e : tree) {
                FileStat st = env.files().stat(dest + "/" + e.path()).orElseThrow(() -> new AssertionError("copyIn lost " + e.path()));
                assertEquals(e.mode(), st.mode(), "copyIn changed the mode of " + e.path());
                if (!e.isDirectory()) {
                    assertArrayEquals(e.content(), readBytes(env, dest + "/" + e.path()), "copyIn changed " + e.path());
                }
            }
            List<Tar.Entry> back;
            try (InputStream in = env.files().copyOut(dest)) {
                back = Tar.read(in);
            }
            Map<String, Tar.Entry> byPath = new LinkedHashMap<>();
            back.forEach(e -> byPath.put(e.path(), e));
            for (Tar.Entry e : tree) {
                Tar.Entry got = byPath.get(e.path());
                assertNotNull(got, "copyOut lost " + e.path() + "; it held " + byPath.keySet());
                assertEquals(e.mode(), got.mode(), "copyOut changed the mode of " + e.path());
                if (!e.isDirectory()) {
                    assertArrayEquals(e.content(), got.content(), "copyOut changed " + e.path());
                }
            }
            assertThrows(NoSuchPathException.class, () -> env.files().copyOut(dest + "/missing"));
        }

        @Promise("an operation on a missing path throws NoSuchPathException")
        @Test
        void missingPathsRaiseNoSuchPath() {
            Environment env = environment();
            String dir = newDir(env, "missing");
            NoSuchPathException e = assertThrows(NoSuchPathException.class, () -> env.files().read(dir + "/nope"));
            assertTrue(e.getMessage().contains(dir + "/nope"), "the message names the path: " + e.getMessage());
            assertThrows(AirlockException.class, () -> env.files().read(dir), "reading a directory is an error");
        }

        @Promise("closing a read early ends the transfer and leaves the environment usable")
        @Test
        void closingAReadEarlyLeavesTheEnvironmentUsable() throws IOException {
            Environment env = environment();
            String f = newDir(env, "early") + "/big.bin";
            env.files().write(f, Sample.generated("8 MiB", 8 * Sample.MIB, 9, 0).payload());
            try (InputStream in = env.files().read(f)) {
                assertEquals(1024, in.readNBytes(1024).length);
            }
            assertEquals("still here\n", sh(env, "echo still here"));
        }
    }

    private static String read(Environment env, String path) {
        return new String(readBytes(env, path), StandardCharsets.UTF_8);
    }

    private static byte[] readBytes(Environment env, String path) {
        try (InputStream in = env.files().read(path)) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new AssertionError("reading " + path + " failed: " + e.getMessage(), e);
        }
    }

    private static String printable(String s) {
        return s.replace("\n", "\\n");
    }

    // ========================================================================= timeouts and cancel

    /** (core) Timeouts and cancels kill whole trees; nothing cancelled before dispatch ever runs. */
    @Nested
    class TimeoutsAndCancel {

        @Promise("a timeout kills the command and every process it started (launch must start the command in its own session and process group, setsid, so the core's group kill reaches the tree)")
        @Test
        void timeoutKillsTheCommandAndEverythingItStarted() {
            Environment env = environment();
            String pid = newDir(env, "timeout") + "/pid";
            ExecResult r = env.exec(ExecRequest.builder(tree(pid)).timeout(Duration.ofSeconds(3)).build());
            assertEquals(ExecResult.EXIT_TIMEOUT, r.exitCode());
            assertTrue(r.timedOut());
            assertFalse(r.cancelled());
            assertEquals("started\n", r.stdout().text(), "output written before the timeout is kept");
            assertGone(env, pid, "a grandchild outlived the timeout");
        }

        @Promise("no process of a timed-out exec still runs when its result returns (setsid at launch; a transport whose output ends at the command's exit says so with Backend.outputEndsAtExit)")
        @Test
        void noProcessOfATimedOutExecOutlivesItsResult() {
            // The timeout's kill runs on another thread than the caller's: repeat a short one to
            // catch a result that is returned before the tree's SIGKILL went out.
            Environment env = environment();
            assumeCapability(Remote.processesVisibleAcrossExecs(env), "one exec cannot see another's processes here"
                    + " (a process namespace per command), so whether they are gone cannot be judged from inside");
            String dir = newDir(env, "timeouts");
            int checked = 0;
            for (int i = 0; i < 8; i++) {
                String pid = dir + "/pid" + i;
                ExecResult r = env.exec(ExecRequest.builder(tree(pid)).timeout(Duration.ofMillis(300)).build());
                assertTrue(r.timedOut());
                Optional<Boolean> alive = Remote.aliveIfStarted(env, pid);
                assertFalse(alive.orElse(false), "a grandchild was still running when the timed-out exec #" + i + " returned");
                checked += alive.isPresent() ? 1 : 0;
            }
            System.out.println(TAG + "short timeouts: " + checked + " of 8 had started their grandchild");
        }

        /**
         * One rule on every backend: what a command leaves running ends with it (after the output
         * grace), whether the job holds the command's output or sent its own elsewhere. To keep a
         * server, {@code start} it and keep the execution.
         */
        @Promise("a background job the command leaves running ends with its exec (setsid at launch, so the group kill at the end reaches it)")
        @ParameterizedTest(name = "sleep 600 {0} &")
        @ValueSource(strings = {"", ">/dev/null 2>&1"})
        void backgroundJobsEndWithTheirExec(String redirect) {
            Environment env = environment();
            assumeCapability(Remote.processesVisibleAcrossExecs(env), "one exec cannot see another's processes here"
                    + " (a process namespace per command, which ends with it), so whether they are gone cannot be judged from inside");
            String pid = newDir(env, "jobs") + "/pid";
            ExecResult r = env.exec(ExecRequest.of(marked("sleep 600 " + redirect + " & echo $! > " + q(pid) + "; echo hi; exit 3")));
            assertEquals(3, r.exitCode(), () -> "the command's own exit code; stderr: " + Remote.head(r.stderr()));
            assertEquals("hi\n", r.stdout().text());
            assertFalse(Remote.alive(env, pid), "a background job (sleep 600 " + redirect + " &) outlived its exec's result");
        }

        @Promise("cancel kills the command and every process it started (setsid at launch, so the core's group kill reaches the tree)")
        @Test
        void cancelKillsTheCommandAndEverythingItStarted() throws InterruptedException {
            Environment env = environment();
            String pid = newDir(env, "cancel") + "/pid";
            Remote.Started s = Remote.start(env, ExecRequest.builder(tree(pid)), "the process tree");
            s.execution().cancel();
            ExecResult r = s.await();
            assertEquals(ExecResult.EXIT_CANCELLED, r.exitCode());
            assertTrue(r.cancelled());
            assertFalse(r.timedOut());
            assertDoesNotThrow(s.execution()::cancel, "a second cancel is a no-op");
            assertEquals(ExecResult.EXIT_CANCELLED, s.await().exitCode());
            assertGone(env, pid, "a grandchild outlived the cancel");
        }

        @Promise("interrupting the thread that waits for the exec cancels it and kills its whole tree (setsid at launch)")
        @Test
        void interruptingTheCallerCancels() throws InterruptedException {
            Environment env = environment();
            String dir = newDir(env, "interrupt");
            String pid = dir + "/pid";
            AtomicReference<Object> outcome = new AtomicReference<>();
            Thread caller = new Thread(() -> {
                try {
                    outcome.set(env.exec(ExecRequest.of(tree(pid))));
                } catch (RuntimeException e) {
                    outcome.set(e);
                }
            }, "airlock-tck-caller");
            caller.start();
            awaitFile(env, pid);
            caller.interrupt();
            caller.join(TimeUnit.MINUTES.toMillis(2));
            assertFalse(caller.isAlive(), "exec did not return after its thread was interrupted");
            assertTrue(outcome.get() instanceof ExecResult, "exec must return the cancelled result, got " + outcome.get());
            assertTrue(((ExecResult) outcome.get()).cancelled());
            assertGone(env, pid, "a grandchild outlived the interrupt");
        }

        @Promise("an exec cancelled before dispatch never runs its command")
        @ParameterizedTest(name = "held at {0} -> {1}")
        @CsvSource({"NEW, STAGING", "STAGING, STAGED"})
        void cancelBeforeDispatchNeverRunsTheCommand(ExecState from, ExecState to) throws InterruptedException {
            Park park = new Park(from, to);
            try (Environment env = open(Map.of(), park)) {
                String marker = env.target().scratchDir() + "/side-effect";
                boolean stages = stagesStdin(env.capabilities()) || !env.capabilities().nativeEnv();
                Execution e = env.start(ExecRequest.builder("touch " + q(marker) + "; cat").env("KIT_STAGED", "env")
                        .stdin(Payload.ofUtf8("staged input")).build());
                park.awaitParked();
                // Held where the test says: before anything is staged, or after staging finished.
                List<String> held = stagedNames(env);
                if (to == ExecState.STAGING) {
                    assertEquals(List.of(), held, "held at NEW -> STAGING, yet something was staged");
                } else if (stages) {
                    assertFalse(held.isEmpty(), "held at STAGING -> STAGED on a backend that stages, yet nothing was staged");
                }
                e.cancel(); // reports -> CANCELLED, which lets the held flow go; returns after its cleanup
                assertNothingStaged(env, "when cancel() returned (before await)");
                assertEquals(List.of(to + " -> CANCELLED"), park.afterHold(),
                        "the exec was not held at " + from + " -> " + to + " until the cancel came");
                ExecResult r = e.await();
                assertTrue(r.cancelled());
                assertEquals(ExecResult.EXIT_CANCELLED, r.exitCode());
                assertFalse(park.dispatched(), "an exec cancelled before dispatch was dispatched");
                assertTrue(env.files().stat(marker).isEmpty(), "an exec cancelled before dispatch ran");
                assertNothingStaged(env, "after a cancel before dispatch");
            }
        }

        @Promise("an exec cancelled while held in NEW never stages anything and never runs")
        @Test
        void cancelWhileHeldInNewNeverStagesOrRuns() throws InterruptedException {
            // Held in NEW for real: the command guard asks a human before anything is staged, and the
            // human does not answer until the cancel. (The command exits before its write, should it run.)
            CountDownLatch asked = new CountDownLatch(1);
            CountDownLatch answer = new CountDownLatch(1);
            ApprovalChannel slowHuman = (request, timeout) -> {
                asked.countDown();
                try {
                    answer.await(2, TimeUnit.MINUTES);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return ApprovalChannel.Decision.DENY;
            };
            List<ExecTransition> seen = new CopyOnWriteArrayList<>();
            ExecListener record = ExecListener.ofTransitions(t -> {
                if (!t.internal()) {
                    seen.add(t);
                }
            });
            OpenContext context = OpenContext.builder(settings().with(Map.of("airlock.guard", "on")))
                    .listeners(List.of(record)).approvalChannel(slowHuman).build();
            try (Environment env = openEnvironment(context)) {
                String marker = env.target().scratchDir() + "/side-effect";
                // eval of a file's text: the guard cannot read what it runs, so it asks, in every isolation
                Execution e = env.start(ExecRequest.builder("touch " + q(marker) + "; exit 0\neval \"$(cat kit-command.txt)\"; cat")
                        .env("KIT_STAGED", "env").stdin(Payload.ofUtf8("staged input")).build());
                assertTrue(asked.await(2, TimeUnit.MINUTES), "the command guard (airlock.guard=on) never asked about"
                        + " a command it cannot read (eval of a file's text); does the backend pass OpenContext's approval channel to the core?");
                assertEquals(List.of(), seen, "the exec left NEW while the guard was still asking");
                assertEquals(List.of(), stagedNames(env), "something was staged while the exec was held in NEW");
                e.cancel();
                answer.countDown();
                assertNothingStaged(env, "when cancel() returned (before await)");
                assertEquals(List.of("NEW -> CANCELLED"), seen.stream().map(t -> t.from() + " -> " + t.to()).toList(),
                        "a cancel in NEW must end the exec there");
                ExecResult r = e.await();
                assertTrue(r.cancelled());
                assertEquals(ExecResult.EXIT_CANCELLED, r.exitCode());
                assertTrue(env.files().stat(marker).isEmpty(), "an exec cancelled in NEW ran");
                assertNothingStaged(env, "after a cancel in NEW");
            } finally {
                answer.countDown();
            }
        }

        private List<String> stagedNames(Environment env) {
            return env.files().list(env.target().stagingDir()).stream()
                    .map(FileStat::name).filter(n -> n.startsWith(".airlock-")).toList();
        }

        @Promise("a cancel during dispatch kills the command and its tree once it starts (setsid at launch)")
        @Test
        void cancelDuringDispatchKillsTheCommand() throws InterruptedException {
            // Held at the commit point: the command is about to be sent, so a cancel must become a kill.
            Park park = new Park(ExecState.STAGED, ExecState.DISPATCHED);
            try (Environment env = open(Map.of(), park)) {
                String pid = env.target().scratchDir() + "/pid";
                Execution e = env.start(ExecRequest.builder(tree(pid)).build());
                park.awaitParked();
                e.cancel();
                park.release();
                ExecResult r = e.await(Duration.ofMinutes(2)).orElseThrow(() ->
                        new AssertionError("a command cancelled during its dispatch kept running"));
                assertTrue(r.cancelled());
                assertEquals(ExecResult.EXIT_CANCELLED, r.exitCode());
                assertFalse(Remote.aliveIfStarted(env, pid).orElse(false), "a grandchild outlived a cancel during dispatch");
            }
        }

        @Promise("a cancel after the exec ended changes nothing in its result")
        @Test
        void cancelAfterTheEndChangesNothing() throws InterruptedException {
            Environment env = environment();
            Execution e = env.start(ExecRequest.of("echo done"));
            ExecResult first = e.await();
            e.cancel();
            ExecResult again = e.await();
            assertEquals(0, again.exitCode());
            assertFalse(again.cancelled());
            assertEquals(first.stdout().text(), again.stdout().text());
            assertEquals("ok\n", sh(env, "echo ok"));
        }

        @Promise("cancelling one exec leaves the environment's other execs running")
        @Test
        void cancelExecLeavesOtherExecsRunning() throws InterruptedException {
            try (Environment env = open(Map.of(CANCEL, "exec"))) {
                String go = env.target().scratchDir() + "/go";
                Remote.Started victim = Remote.start(env, ExecRequest.builder(marked("echo started; exec sleep 600")), "the victim");
                Remote.Started other = Remote.start(env, ExecRequest.builder(
                        "echo started; while [ ! -e " + q(go) + " ]; do sleep 1; done; echo finished"), "the other exec");
                victim.execution().cancel();
                assertTrue(victim.await().cancelled());
                env.files().write(go, new byte[0]);
                ExecResult r = other.await();
                assertEquals(0, r.exitCode(), () -> "the other exec did not finish normally: " + other.err().text());
                assertFalse(r.cancelled());
                assertEquals("started\nfinished\n", other.out().text());
                assertEquals("ok\n", sh(env, "echo ok"), "the environment must stay usable after airlock.cancel=exec");
            }
        }

        @Promise("with airlock.cancel=sandbox a cancel stops the sandbox exactly once and no process of the command outlives it (setsid at launch)")
        @Test
        void cancelSandboxStopsTheSandboxExactlyOnce() throws InterruptedException {
            Events events = new Events();
            Environment env = open(Map.of(CANCEL, "sandbox"), events);
            Optional<Environment> observer = Optional.empty();
            try {
                observer = observer(env);
                String dir = observer.map(o -> newDir(o, "sandbox")).orElseGet(() -> newDir(env, "sandbox"));
                Remote.Started a = Remote.start(env, ExecRequest.builder(tree(dir + "/a")), "exec a");
                Remote.Started b = Remote.start(env, ExecRequest.builder(tree(dir + "/b")), "exec b");
                a.execution().cancel();
                assertTrue(a.await().cancelled());
                assertTrue(b.await().cancelled(), "stopping the sandbox must end its other execs");
                assertThrows(EnvironmentClosedException.class, () -> env.exec(ExecRequest.of("true")),
                        "a stopped sandbox must refuse further execs");
                env.close(); // returns once the stop has finished
                env.close();
                assertDoesNotThrow(a.execution()::cancel, "cancel after the stop is a no-op");
                assertDoesNotThrow(b.execution()::cancel, "cancel after the stop is a no-op");
                assertEquals(1, events.count("close"), "the sandbox must be stopped exactly once");
                if (observer.isPresent()) {
                    assertGoneAfterClose(observer.get(), env, List.of(dir + "/a", dir + "/b"));
                }
            } finally {
                env.close();
                observer.ifPresent(Environment::close);
            }
        }

        @Promise("close() during running execs ends them, stops once and leaves no process or private file behind (setsid at launch)")
        @Test
        void closeDuringRunningExecsStopsOnceAndLeavesNothing() throws Exception {
            Events events = new Events();
            // Held after staging: on PAYLOAD backends a staged file exists when close() comes.
            Park park = new Park(ExecState.STAGING, ExecState.STAGED);
            Environment env = open(Map.of(), park, events);
            Optional<Environment> observer = Optional.empty();
            ExecutorService closers = Executors.newFixedThreadPool(4);
            try {
                observer = observer(env);
                String dir = observer.map(o -> newDir(o, "close")).orElseGet(() -> newDir(env, "close"));
                String marker = dir + "/parked-ran";
                Execution parked = env.start(ExecRequest.builder("touch " + q(marker)).stdin(Payload.ofUtf8("x")).build());
                park.awaitParked();
                Remote.Started tree = Remote.start(env, ExecRequest.builder(tree(dir + "/tree")), "the process tree");
                Remote.Started reader = Remote.start(env, ExecRequest.builder(
                        marked("cat > /dev/null; sh -c 'echo $$ > \"$1\"; exec sleep 600' kit " + q(dir + "/reader") + " & echo started; wait"))
                        .stdin(Sample.generated("1 MiB", Sample.MIB, 11, 0).payload()), "the reader");
                awaitFile(env, dir + "/reader");
                List<Future<?>> closing = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    closing.add(closers.submit(env::close)); // racing closers: one stop, all return
                }
                for (Future<?> f : closing) {
                    f.get();
                }
                for (Execution e : List.of(parked, tree.execution(), reader.execution())) {
                    ExecResult r = e.await(Duration.ofMinutes(1)).orElseThrow(() -> new AssertionError("an exec outlived close()"));
                    assertTrue(r.cancelled(), "close() must cancel running execs");
                }
                assertEquals(1, events.count("close"), "close() must stop the sandbox exactly once");
                if (observer.isPresent()) {
                    assertTrue(observer.get().files().stat(marker).isEmpty(), "an exec held before dispatch ran after close()");
                    assertGoneAfterClose(observer.get(), env, List.of(dir + "/tree", dir + "/reader"));
                }
            } finally {
                closers.shutdownNow();
                env.close();
                observer.ifPresent(Environment::close);
            }
        }

        private void awaitFile(Environment env, String path) throws InterruptedException {
            for (int i = 0; i < 1200; i++) {
                if (env.files().stat(path).map(s -> s.size() > 0).orElse(false)) {
                    return;
                }
                Thread.sleep(100);
            }
            fail(path + " did not appear within 2 minutes");
        }
    }

    // =============================================================================== concurrency

    /** (core) One environment serves many execs and file operations at once, each byte-exact. */
    @Nested
    class Concurrency {

        @Promise("sixteen execs at once on one environment each get their own output, byte-exact")
        @Test
        void sixteenConcurrentExecsAreEachByteExact() throws InterruptedException {
            Environment env = environment();
            requireByteExact(env.capabilities());
            List<Sample> samples = new ArrayList<>();
            List<Execution> running = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                Sample s = Sample.generated("exec #" + i, 256 * Sample.KIB + i * 4099L, 1000 + i, 8);
                samples.add(s);
                running.add(env.start(ExecRequest.builder(i % 2 == 0 ? "cat" : "cat >&2").stdin(s.payload()).build()));
            }
            for (int i = 0; i < 16; i++) {
                ExecResult r = running.get(i).await();
                assertEquals(0, r.exitCode(), "exec #" + i);
                ByteCheck.assertSame(samples.get(i), (i % 2 == 0 ? r.stdout() : r.stderr()).open(), "concurrent exec #" + i);
            }
        }

        @Promise("concurrent file writes and reads on one environment are each byte-exact")
        @Test
        void concurrentFileWritesAndReadsAreEachByteExact() throws Exception {
            Environment env = environment();
            requireByteExact(env.capabilities());
            String dir = newDir(env, "concurrent");
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<CompletableFuture<Void>> all = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    Sample s = Sample.generated("file #" + i, 512 * Sample.KIB + i, 2000 + i, 4);
                    String f = dir + "/f" + i;
                    all.add(CompletableFuture.runAsync(() -> {
                        env.files().write(f, s.payload());
                        ByteCheck.assertSame(s, env.files().read(f), "concurrent write/read #" + f);
                    }, pool));
                }
                CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).get(5, TimeUnit.MINUTES);
            } finally {
                pool.shutdownNow();
            }
        }
    }

    // =================================================================================== secrecy

    /** (core) Payloads, env values and credentials never appear in any process's argv on this machine. */
    @Nested
    class Secrecy {

        @Promise("no argv on this machine holds a stdin payload, an env value or a credential, raw or encoded (hex, base64): pass them through stdin, a file or the process environment")
        @Test
        void noArgvOnThisMachineHoldsAPayloadAnEnvValueOrAToken() throws Exception {
            assumeCapability(ArgvScan.supported(), "this JVM's host has no readable /proc, so argv cannot be scanned here");
            String token = StdinScripts.randomToken();
            Map<String, String> secrets = new LinkedHashMap<>();
            secrets.put("the stdin payload", "kit-stdin-" + token);
            secrets.put("an env value", "kit-env-" + token);
            secrets.put("a file's content", "kit-file-" + token);
            secrets.put("a secret setting", "kit-setting-" + token);
            int n = 0;
            for (String s : secrets()) {
                secrets.put("backend credential #" + (++n), s);
            }
            String sighting = "kit-sighting-" + token;
            try (Environment env = open(Map.of("airlock.tck.api-token", secrets.get("a secret setting")));
                 ArgvScan scan = new ArgvScan(secrets, sighting)) {
                String dir = newDir(env, "secrecy");
                String go = dir + "/go";
                Remote.Started s = Remote.start(env, ExecRequest.builder(": " + sighting + "\n"
                                + "cat > " + q(dir + "/in") + "\necho started\n"
                                + "while [ ! -e " + q(go) + " ]; do sleep 1; done\n"
                                + "printf %s \"$KIT_SECRET\"")
                        .env("KIT_SECRET", secrets.get("an env value"))
                        .stdin(Payload.ofUtf8(secrets.get("the stdin payload"))), "the secret-holding command");
                env.files().write(dir + "/file", secrets.get("a file's content").getBytes(StandardCharsets.UTF_8));
                assertEquals(secrets.get("a file's content"), read(env, dir + "/file"));
                env.files().write(go, new byte[0]);
                ExecResult r = s.await();
                assertEquals(0, r.exitCode());
                assertEquals("started\n" + secrets.get("an env value"), s.out().text());
                scan.close();
                System.out.println(TAG + "secrecy: " + scan.summary() + "; the backend's processes "
                        + (scan.sighted() ? "run on this machine" : "were not seen on this machine"));
                assertEquals(Set.of(), scan.hits(), "secrets appeared in argv on this machine");
            }
        }

        @Promise("requests and error messages never print env values or stdin")
        @Test
        void requestsAndErrorsNeverPrintEnvValuesOrStdin() {
            String secret = "kit-never-print-" + StdinScripts.randomToken();
            ExecRequest r = ExecRequest.builder("true").env("KIT_SECRET", secret).stdin(Payload.ofUtf8(secret)).build();
            assertFalse(r.toString().contains(secret), "ExecRequest.toString shows a secret");
            ConfigurationException e = assertThrows(ConfigurationException.class,
                    () -> ExecRequest.builder("true").env("KIT_SECRET", secret + "\0").build());
            assertFalse(e.getMessage().contains(secret), "an error message shows an env value");
        }
    }

    // ==================================================================================== errors

    /** (core) Bad input and closed environments fail with the right exception and a one-line reason. */
    @Nested
    class Errors {

        @Promise("an invalid environment variable name is rejected at once with one clear exception")
        @ParameterizedTest(name = "name \"{0}\"")
        @ValueSource(strings = {"1ABC", "A-B", "A B", "", "A=B", "É", "A\nB"})
        void invalidEnvNamesAreRejected(String name) {
            ConfigurationException e = assertThrows(ConfigurationException.class,
                    () -> environment().exec(ExecRequest.builder("true").env(name, "v").build()));
            assertTrue(e.getMessage().contains("environment variable"), "the message says what is wrong: " + e.getMessage());
            assertEquals(1, e.getMessage().lines().count(), "one line: " + e.getMessage());
        }

        @Promise("a command holding NUL is rejected at once with one clear exception")
        @Test
        void nulInTheCommandIsRejected() {
            assertThrows(ConfigurationException.class, () -> environment().exec(ExecRequest.of("echo a\0b")));
        }

        @Promise("a closed environment refuses every exec and file operation with EnvironmentClosedException")
        @Test
        void aClosedEnvironmentRefusesEverything() {
            Environment env = open(Map.of());
            RemoteFiles files = env.files();
            String dir = env.target().scratchDir();
            env.close();
            assertThrows(EnvironmentClosedException.class, () -> env.exec(ExecRequest.of("true")));
            assertThrows(EnvironmentClosedException.class, () -> env.start(ExecRequest.of("true")));
            assertThrows(EnvironmentClosedException.class, () -> files.read(dir + "/x"));
            assertThrows(EnvironmentClosedException.class, () -> files.write(dir + "/x", new byte[1]));
            assertThrows(EnvironmentClosedException.class, () -> files.stat(dir));
            assertDoesNotThrow(env::close, "close is idempotent");
        }

        @Promise("the error for a missing path names the path")
        @Test
        void missingPathsNameThePath() {
            Environment env = environment();
            String dir = newDir(env, "errors") + "/missing";
            assertThrows(NoSuchPathException.class, () -> env.files().read(dir + "/f"));
            assertThrows(NoSuchPathException.class, () -> env.files().list(dir));
            assertThrows(NoSuchPathException.class, () -> env.files().copyOut(dir));
            assertFalse(env.files().delete(dir));
        }
    }

    // =========================================================================== launcher record

    /**
     * (core) The launcher record the core's prefix prints right before the command: output before
     * it (a login's startup files) is not the command's, and nothing the command prints after it
     * can forge it; the exit code comes from the transport.
     */
    @Nested
    class LauncherRecord {

        @Promise("output the transport prints before the launcher record (a login banner) is dropped, never taken for the command's")
        @Test
        void outputBeforeTheRecordIsNotTheCommands() {
            // `cd` through CDPATH prints the directory it entered, before the record: noise, like a
            // ~/.bashrc that prints, which must neither reach stdout nor be taken for the record.
            Environment env = environment();
            String dir = newDir(env, "cdpath");
            String sub = "kit-noise-" + names.incrementAndGet();
            env.files().mkdirs(dir + "/" + sub);
            ExecResult r = env.exec(ExecRequest.builder("pwd; exit 5").cwd(sub).env("CDPATH", dir).build());
            assertEquals(5, r.exitCode(), "the command's own exit code; stderr: " + Remote.head(r.stderr()));
            assertEquals(dir + "/" + sub + "\n", r.stdout().text(), "what the shell printed before the record reached stdout");
        }

        @Promise("a launcher record the command prints itself is its output and never its exit code")
        @Test
        void aForgedRecordIsOutputAndNeverTheExitCode() {
            // The command looks for its own launcher's nonce where a process can see it (its argv), and
            // prints records with it and with a made-up one, then exits 7.
            String forge = "n=$(tr '\\000' '\\n' < /proc/$$/cmdline 2>/dev/null | grep -o \"ok.n' [0-9a-f]*\" | head -n 1 | cut -d' ' -f2)\n"
                    + "if [ -n \"$n\" ]; then echo 'the launcher nonce' >&2; else n=0123456789abcdef0123456789abcdef; fi\n"
                    + "printf 'out\\n@airlock:%s:1:1:ok\\n@airlock:ffffffffffffffffffffffffffffffff:1:1:ok\\nexit 0\\n' \"$n\"\n"
                    + "exit 7\n";
            ExecResult r = environment().exec(ExecRequest.of(forge));
            assertEquals(7, r.exitCode(), "a record printed by the command changed its exit code; stdout: " + r.stdout().text());
            assertFalse(r.timedOut() || r.cancelled());
            String out = r.stdout().text();
            assertTrue(out.startsWith("out\n@airlock:") && out.endsWith(":1:1:ok\n@airlock:ffffffffffffffffffffffffffffffff:1:1:ok\nexit 0\n"),
                    "the command's output must pass unaltered, forged records included: " + out);
            System.out.println(TAG + "forged records " + (r.stderr().text().contains("the launcher nonce")
                    ? "with the launcher's own nonce, read from its argv" : "with a made-up nonce (the launcher's was not in its argv)"));
        }

        @Promise("a record printed after long output is the command's output")
        @Test
        void aRecordAfterLongOutputIsOutput() {
            // Past the window the record is looked for in, and split over many reads: still just output.
            String forge = "head -c 200000 /dev/zero | tr '\\000' x; printf '\\n@airlock:%s:1:1:ok\\n' "
                    + "0123456789abcdef0123456789abcdef; exit 3";
            ExecResult r = environment().exec(ExecRequest.of(forge));
            assertEquals(3, r.exitCode());
            assertEquals(200000 + "\n@airlock:0123456789abcdef0123456789abcdef:1:1:ok\n".length(), r.stdout().size(), "the command's output changed on the way");
        }
    }

    // ============================================================================== exit status

    /**
     * (core) The exit status is the command's own process's, from the transport: a command that
     * kills, stops or rewrites its parent (a wrapper shell of the same user would be one) still
     * ends with its own exit code. The parent is only attacked when there is one in sight: a
     * {@code $PPID} of 0 is outside the command's namespace, and {@code kill 0} would hit the
     * command's own group.
     */
    @Nested
    class ExitStatus {
        private static final String PARENT = "p=$PPID\nif [ \"$p\" -gt 0 ]; then\n";

        private ExecResult forge(ParentAttack kind, String attack, Duration timeout) {
            Optional<String> reach = parentWithinReach(kind);
            assumeCapability(reach.isEmpty(), reach.orElse(""));
            // A hostile command, so no guard: the command guard would rightly ask about a write to
            // /proc/PID/mem, and the promise under test is the backend's, whatever the guard says.
            try (Environment env = open(Map.of("airlock.guard", "off"))) {
                // Checked here, not declared: the attack would hit the kit's own JVM (and end the run).
                assumeCapability(!sh(env, "echo $PPID").strip().equals(Long.toString(ProcessHandle.current().pid())),
                        "the command's parent is this JVM: " + env.name() + " runs commands as the JVM's own children (as"
                                + " the local backend does without isolation), so a command can signal or write into its"
                                + " caller, which no launcher can prevent");
                return env.exec(ExecRequest.builder(PARENT + attack + "\nfi\nexit 7").timeout(timeout).build());
            }
        }

        @Promise("a command that overwrites its parent's code still gets its own exit status (the launcher execs into the command's shell; the status comes from the transport)")
        @Test
        void aParentOverwrittenToExitZeroIsNotTheStatus() {
            // Writes exit_group(0) (x86-64) at the parent's current instruction: a parent that
            // reported the status would then report 0; elsewhere it crashes it, just as wrong.
            ExecResult r = forge(ParentAttack.REWRITE, "set -- $(cat /proc/$p/syscall)\na=$(printf %d \"$9\")\n"
                    + "printf '\\061\\377\\270\\347\\000\\000\\000\\017\\005' | dd of=/proc/$p/mem bs=1 seek=\"$a\" conv=notrunc",
                    Duration.ofMinutes(1));
            assertEquals(7, r.exitCode(), "the command exited 7 after rewriting its parent's code; stderr: "
                    + Remote.head(r.stderr()));
            assertFalse(r.timedOut() || r.cancelled());
        }

        @Promise("a command that kills its parent still gets its own exit status (the launcher execs into the command's shell)")
        @Test
        void aParentKilledIsNotTheStatus() {
            ExecResult r = forge(ParentAttack.KILL, "kill -9 \"$p\"", Duration.ofMinutes(1));
            assertEquals(7, r.exitCode(), "the command exited 7 after killing its parent; stderr: " + Remote.head(r.stderr()));
            assertFalse(r.timedOut() || r.cancelled());
        }

        @Promise("a command that stops its parent does not hold the exec, which ends with the command's own status")
        @Test
        void aParentStoppedDoesNotHoldTheExec() {
            // With a timeout, so a stopped parent that held the exec shows as 124 instead of a hang.
            ExecResult r = forge(ParentAttack.STOP, "kill -STOP \"$p\"", Duration.ofSeconds(20));
            assertFalse(r.timedOut(), "the command exited 7 after stopping its parent, and the exec ran into its"
                    + " timeout: the stopped parent held it");
            assertEquals(7, r.exitCode(), "the command exited 7 after stopping its parent; stderr: " + Remote.head(r.stderr()));
        }
    }

    // ============================================================================= staged stdin

    /**
     * Backends that stage (PAYLOAD stdin, or an env script where the environment is not native, as
     * on a PIPE backend over ssh): the staged files are private, short-lived, and never outlive
     * their exec.
     */
    /** PAYLOAD stdin that is staged as a file (a STREAMED one goes in chunks by offset and stages nothing). */
    static boolean stagesStdin(Capabilities caps) {
        return caps.stdinMode() == StdinMode.PAYLOAD && caps.payloadStrategy() == PayloadStrategy.STAGED;
    }

    @Nested
    class StagedStdin {

        private Environment payloadEnvironment(ExecListener... listeners) {
            assumeCapability(stagesStdin(environment().capabilities()),
                    "stdin is " + environment().capabilities().stdinMode() + "/" + environment().capabilities().payloadStrategy()
                            + ", not PAYLOAD/STAGED: stdin is not staged");
            return open(Map.of(), listeners);
        }

        /** PAYLOAD stdin or a staged env script: something is staged for each exec that sets a variable. */
        private Environment stagingEnvironment(ExecListener... listeners) {
            Capabilities caps = environment().capabilities();
            assumeCapability(stagesStdin(caps) || !caps.nativeEnv(),
                    "stdin is " + caps.stdinMode() + "/" + caps.payloadStrategy() + " and the environment is native: nothing is staged");
            return open(Map.of(), listeners);
        }

        private List<FileStat> staged(Environment env) {
            return env.files().list(env.target().stagingDir()).stream().filter(f -> f.name().startsWith(".airlock-")).toList();
        }

        @Promise("a staged stdin or env file is 0600 in a 0700 private dir and delivers its content")
        @Test
        void stagedFileIs0600InA0700Dir() throws InterruptedException {
            Park park = new Park(ExecState.STAGING, ExecState.STAGED);
            try (Environment env = stagingEnvironment(park)) {
                boolean payload = stagesStdin(env.capabilities());
                Sample s = Sample.generated("1000 bytes", 1000, 1000, 4);
                Execution e = env.start(ExecRequest.builder("cat; printf %s \"$KIT_STAGED\" >&2").env("KIT_STAGED", "env value")
                        .stdin(s.payload()).build());
                park.awaitParked();
                List<FileStat> staged = staged(env);
                park.release();
                assertFalse(staged.isEmpty(), "nothing staged while the exec is held after staging");
                for (FileStat f : staged) {
                    assertEquals(0600, f.mode(), "a staged file must be 0600: " + f);
                }
                List<FileStat> stdin = staged.stream().filter(f -> f.name().startsWith(".airlock-stdin-")).toList();
                if (payload) {
                    assertEquals(1, stdin.size(), "one staged stdin file while the exec is held: " + staged);
                    assertEquals(s.size(), stdin.get(0).size());
                } else {
                    assertEquals(List.of(), stdin, "stdin staged although the backend streams it");
                }
                assertEquals(0700, env.files().stat(env.target().privateDir()).orElseThrow().mode() & 0777,
                        "the private dir must be 0700");
                ExecResult r = e.await();
                ByteCheck.assertSame(s, r.stdout().open(), "stdin -> stdout");
                assertEquals("env value", r.stderr().text(), "the staged env arrived");
                assertNothingStaged(env, "after the exec");
            }
        }

        @Promise("staged files (stdin, env) are removed before the command runs, and the command still reads its stdin and env")
        @Test
        void stagedFileIsGoneBeforeTheCommandRuns() {
            try (Environment env = stagingEnvironment()) {
                ExecResult r = succeed(env, ExecRequest.builder("ls -la -- " + q(env.target().stagingDir()) + " >&2; cat; echo \" $KIT_STAGED\"")
                        .env("KIT_STAGED", "env").stdin(Payload.ofUtf8("payload")).build(), "ls of the staging dir");
                assertEquals("payload env\n", r.stdout().text(), "the command still reads its stdin and env");
                assertFalse(r.stderr().text().contains(".airlock-"),
                        "a staged file (stdin or env) was still on disk when the command ran:\n" + r.stderr().text());
            }
        }

        @Promise("no staged file is left after a hundred runs, failed and timed-out ones included")
        @Test
        void noStagedFileIsLeftAfterAHundredRuns() {
            try (Environment env = stagingEnvironment()) {
                String[] commands = {"cat > /dev/null", "true", "exit 3", "cat; exit 1", "(", "read -r x; echo $x"};
                for (int i = 0; i < 100; i++) {
                    ExecRequest.Builder b = ExecRequest.builder(commands[i % commands.length])
                            .stdin(Payload.ofUtf8("run " + i + "\n"));
                    if (i % 50 == 7) {
                        b = ExecRequest.builder(marked("sleep 600")).stdin(Payload.ofUtf8("timed out")).timeout(Duration.ofMillis(500));
                    }
                    env.exec(b.env("KIT_RUN", Integer.toString(i)).build());
                }
                assertNothingStaged(env, "after 100 runs");
            }
        }

        @Promise("staged input that cannot be opened fails the exec with StagingException, and the command never runs")
        @Test
        void aFailedRedirectIsAStagingException() throws InterruptedException {
            Park park = new Park(ExecState.STAGING, ExecState.STAGED);
            try (Environment env = stagingEnvironment(park)) {
                String marker = env.target().scratchDir() + "/ran";
                Execution e = env.start(ExecRequest.builder("touch " + q(marker) + "; cat").env("KIT_STAGED", "env")
                        .stdin(Payload.ofUtf8("x")).build());
                park.awaitParked();
                // Take the staged files away while the exec is held: opening them must fail.
                for (FileStat f : staged(env)) {
                    env.files().delete(f.path());
                }
                park.release();
                assertThrows(StagingException.class, e::await);
                assertTrue(env.files().stat(marker).isEmpty(), "the command ran although its staged input could not be opened");
                assertNothingStaged(env, "after a failed redirect");
            }
        }

        @Promise("stdin over airlock.stdin.max-staged-bytes is refused naming the setting, and nothing runs or stays staged")
        @Test
        void stdinOverTheStagingCapIsRefusedWithTheSettingsName() {
            assumeCapability(stagesStdin(environment().capabilities()),
                    "stdin is " + environment().capabilities().stdinMode() + "/" + environment().capabilities().payloadStrategy()
                            + ", not PAYLOAD/STAGED: stdin is not staged");
            try (Environment env = open(Map.of("airlock.stdin.max-staged-bytes", "1000"))) {
                String marker = env.target().scratchDir() + "/ran";
                for (Payload p : List.of(Payload.of(new byte[5000]), Payload.ofStream(new ByteArrayInputStream(new byte[5000])))) {
                    AirlockException e = assertThrows(AirlockException.class,
                            () -> env.exec(ExecRequest.builder("touch " + q(marker)).stdin(p).build()));
                    assertTrue(e.getMessage().contains("airlock.stdin.max-staged-bytes"), "name the setting: " + e.getMessage());
                }
                assertTrue(env.files().stat(marker).isEmpty(), "a refused exec ran");
                assertNothingStaged(env, "after refused stdin");
            }
        }
    }

    // ================================================================================== sessions

    /** (core) Shell sessions: state carries over between execs, one at a time, private and atomic ({@code -Dgroups=sessions}). */
    @Nested
    @org.junit.jupiter.api.Tag("sessions")
    class Sessions extends SessionCases {
        Sessions() {
            super(EnvironmentCompatibilityKit.this);
        }
    }

    // ==================================================================================== attach

    /** Attachable backends: a second environment on one sandbox sees it, cleans up after itself, and never stops it. */
    @Nested
    class Attach {

        private Environment attachTo(Environment owner) {
            assumeCapability(owner.capabilities().attachable(), "capabilities().attachable() is false");
            Optional<Environment> attached = attach(owner);
            assumeCapability(attached.isPresent(), "the backend is attachable but the test does not override attach()");
            return attached.get();
        }

        @Promise("an attached environment sees the owner's sandbox, and closing it leaves the sandbox running")
        @Test
        void anAttachedEnvironmentSharesTheSandboxAndLeavesItRunning() {
            Environment owner = environment();
            Environment a = attachTo(owner);
            try {
                String f = newDir(owner, "attach") + "/shared";
                owner.files().write(f, "from the owner".getBytes(StandardCharsets.UTF_8));
                assertEquals("from the owner", read(a, f));
            } finally {
                a.close();
            }
            assertEquals("alive\n", sh(owner, "echo alive"), "closing an attached environment must not stop the sandbox");
        }

        @Promise("closing an attached environment cancels its own execs, kills their trees and removes its private files, leaving the sandbox running")
        @Test
        void closingAnAttachedEnvironmentKillsItsExecsAndRemovesItsFiles() throws InterruptedException {
            Environment owner = environment();
            Environment a = attachTo(owner);
            String pid = newDir(owner, "attach-close") + "/pid";
            try {
                Remote.Started tree = Remote.start(a, ExecRequest.builder(tree(pid)), "the process tree");
                a.close();
                assertTrue(tree.execution().await(Duration.ofMinutes(1)).orElseThrow().cancelled());
            } finally {
                a.close();
            }
            assertGoneAfterClose(owner, a, List.of(pid));
            assertEquals("alive\n", sh(owner, "echo alive"), "closing an attached environment must not stop the sandbox");
        }
    }

    // ============================================================================= network policy

    /**
     * (optional) {@code airlock.network}: each mode in {@link Capabilities#networkModes()} is enforced,
     * and any other is refused at open in one line. The cases talk to loopback only: a server this
     * JVM starts on the host's 127.0.0.1, and a documentation address (203.0.113.1, TEST-NET-3) that
     * a sandbox without a network has no route to, so nothing is ever sent to it when the case passes.
     */
    @Nested
    class NetworkPolicy {
        private static final String REACHED = "airlock-kit-reached";
        /** TEST-NET-3 (RFC 5737): never a real host; unreachable at once where there is no route at all. */
        private static final String UNROUTED = "203.0.113.1";

        /**
         * A shell client that connects to HOST PORT and prints what the server sends, with the
         * first of bash's /dev/tcp, nc or busybox nc the sandbox has; it fails with the
         * client's own words (Connection refused, Network is unreachable).
         */
        private static String probe(String host, int port) {
            String to = q(host) + " " + port;
            return "if command -v bash >/dev/null 2>&1; then\n"
                    + "  bash -c 'exec 3<>\"/dev/tcp/$0/$1\" && head -c 64 <&3' " + to + "\n"
                    + "elif command -v nc >/dev/null 2>&1; then nc " + to + " </dev/null\n"
                    + "else busybox nc " + to + " </dev/null; fi\n";
        }

        /** A server on the host's loopback that sends {@link #REACHED} to whoever connects, until closed. */
        private java.net.ServerSocket hostServer() throws IOException {
            java.net.ServerSocket server = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
            Thread t = new Thread(() -> {
                while (!server.isClosed()) {
                    try (java.net.Socket c = server.accept()) {
                        c.getOutputStream().write((REACHED + "\n").getBytes(StandardCharsets.UTF_8));
                    } catch (IOException e) {
                        // closed, or a client that went away: nothing to answer
                    }
                }
            }, "airlock-kit-host-server");
            t.setDaemon(true);
            t.start();
            return server;
        }

        private ExecResult run(Environment env, String script) {
            return env.exec(ExecRequest.builder(script).timeout(Duration.ofSeconds(30)).build());
        }

        private Environment openWith(NetworkMode mode) {
            assumeCapability(environment().capabilities().networkModes().contains(mode),
                    "capabilities().networkModes() does not declare " + mode.label());
            return open(Map.of(NetworkMode.KEY, mode.label()));
        }

        @Promise("with airlock.network=off, a command cannot reach a server on the host's loopback")
        @Test
        void withTheNetworkOffTheHostsLoopbackIsOutOfReach() throws IOException {
            try (java.net.ServerSocket server = hostServer(); Environment env = openWith(NetworkMode.OFF)) {
                ExecResult r = run(env, probe("127.0.0.1", server.getLocalPort()));
                String said = r.stdout().text() + r.stderr().text();
                assertFalse(said.contains(REACHED), "with the network off a command reached the host's loopback: " + said);
                assertFalse(r.timedOut(), "the connection neither failed nor succeeded: " + said);
                assertTrue(r.exitCode() != 0 && said.matches("(?is).*(refused|unreachable).*"),
                        "connecting must fail as refused or unreachable, got exit " + r.exitCode() + ": " + said);
            }
        }

        @Promise("with airlock.network=off, an address off the sandbox's loopback is unreachable at once")
        @Test
        void withTheNetworkOffNoOtherAddressIsRouted() {
            try (Environment env = openWith(NetworkMode.OFF)) {
                ExecResult r = run(env, probe(UNROUTED, 80));
                String said = r.stdout().text() + r.stderr().text();
                assertTrue(!r.timedOut() && r.exitCode() != 0 && said.toLowerCase(java.util.Locale.ROOT).contains("unreachable"),
                        UNROUTED + " must be unreachable with no network (no route at all), got exit " + r.exitCode()
                                + (r.timedOut() ? " (timed out: a route existed)" : "") + ": " + said);
            }
        }

        @Promise("with airlock.network=on, where commands share the host's network, a server on the host's loopback answers")
        @Test
        void withTheNetworkOnTheHostsLoopbackAnswers() throws IOException {
            assumeCapability(sharesHostLoopback(), "this backend's network is not the host's (sharesHostLoopback() is"
                    + " false), so the host's loopback is out of reach with the network on too");
            try (java.net.ServerSocket server = hostServer(); Environment env = openWith(NetworkMode.ON)) {
                ExecResult r = run(env, probe("127.0.0.1", server.getLocalPort()));
                assertEquals(REACHED + "\n", r.stdout().text(), "with the network on the host's server must answer; stderr: "
                        + r.stderr().text());
            }
        }

        private Environment openWithAllowlist(String destination) {
            assumeCapability(environment().capabilities().networkModes().contains(NetworkMode.ALLOWLIST),
                    "capabilities().networkModes() does not declare allowlist");
            return open(Map.of(NetworkMode.KEY, "allowlist", dev.airlock.NetworkAllowlist.PREFIX + ".kit", destination));
        }

        @Promise("with airlock.network=allowlist, a server on the host's loopback that the list does not name is out of reach")
        @Test
        void withAnAllowlistAnUnnamedServerIsOutOfReach() throws IOException {
            // TEST-NET-1 (RFC 5737): never this host, so the host's loopback is not on the list.
            try (java.net.ServerSocket server = hostServer(); Environment env = openWithAllowlist("192.0.2.0/24")) {
                ExecResult r = run(env, probe("127.0.0.1", server.getLocalPort()));
                String said = r.stdout().text() + r.stderr().text();
                assertFalse(said.contains(REACHED), "a command reached a server the allowlist does not name: " + said);
                assertTrue(r.exitCode() != 0, "connecting to a server the allowlist does not name must fail, got exit 0: " + said);
            }
        }

        @Promise("with airlock.network=allowlist, where commands share the host's network, a server it names answers")
        @Test
        void withAnAllowlistANamedServerAnswers() throws IOException {
            assumeCapability(sharesHostLoopback(), "this backend's network is not the host's (sharesHostLoopback() is"
                    + " false), so no server on this machine can be named to it");
            try (java.net.ServerSocket server = hostServer(); Environment env = openWithAllowlist("127.0.0.1:" + server.getLocalPort())) {
                ExecResult r = run(env, probe("127.0.0.1", server.getLocalPort()));
                assertEquals(REACHED + "\n", r.stdout().text(), "a server the allowlist names must answer; stderr: " + r.stderr().text());
            }
        }

        @Promise("a network mode the backend does not declare is refused at open in one line naming the backend, before any command")
        @Test
        void anUndeclaredModeIsRefusedAtOpen() {
            for (NetworkMode mode : NetworkMode.values()) {
                if (environment().capabilities().networkModes().contains(mode)) {
                    continue;
                }
                ConfigurationException e = assertThrows(ConfigurationException.class,
                        () -> open(Map.of(NetworkMode.KEY, mode.label())).close(),
                        "airlock.network=" + mode.label() + " is not in capabilities().networkModes(), yet the backend opened");
                String name = environment().name();
                assertTrue(e.getMessage().contains(NetworkMode.KEY + "=" + mode.label()) && e.getMessage().contains(name)
                        && !e.getMessage().contains("\n"), "the refusal must be one line naming the mode and the " + name
                        + " backend: " + e.getMessage());
            }
        }
    }

    // =================================================================================== snapshots

    /**
     * (optional) {@link Environment#snapshot()}: where {@link Capabilities#snapshots()} says so, a new
     * environment opened with {@code airlock.BACKEND.snapshot=ID} has the files as they were (bytes
     * and modes), never Airlock's private dir; elsewhere snapshot() fails in one line.
     */
    @Nested
    class Snapshots {
        /** Every byte value, NUL first, twice, and no trailing newline. */
        private final byte[] content = everyByte();

        private static byte[] everyByte() {
            byte[] b = new byte[512];
            for (int i = 0; i < b.length; i++) {
                b[i] = (byte) i;
            }
            return b;
        }

        /** Removes the case's dir, through a command (the file API deletes one path at a time). */
        private void removeDir(Environment env, String dir) {
            sh(env, "rm -rf -- " + q(dir));
        }

        private String snapshotKey(Environment env) {
            return "airlock." + env.name() + ".snapshot";
        }

        /** A dir outside the private dir (which no snapshot holds), in the target's passwd home. */
        private String snapshotDir(Environment env) {
            String dir = env.target().passwdHome() + "/airlock-kit-snapshot-" + StdinScripts.randomToken().substring(0, 12);
            env.files().mkdirs(dir);
            return dir;
        }

        @Promise("a new environment opened from a snapshot reads the files as they were: the same bytes and mode")
        @Test
        void aNewEnvironmentFromASnapshotHasTheFiles() {
            Environment env = environment();
            assumeCapability(env.capabilities().snapshots(), "capabilities().snapshots() is false");
            String dir = snapshotDir(env);
            try {
                env.files().write(dir + "/data", Payload.of(content), WriteOptions.mode(0640));
                String id = env.snapshot();
                assertTrue(id != null && !id.isBlank() && !id.contains("\n"), "snapshot() must return an id: " + id);
                try (Environment from = open(Map.of(snapshotKey(env), id))) {
                    assertArrayEquals(content, readBytes(from, dir + "/data"), "the file read from the snapshot differs");
                    assertEquals(0640, from.files().stat(dir + "/data").orElseThrow().mode() & 07777,
                            "the file's mode changed in the snapshot");
                    assertTrue(from.files().stat(env.target().privateDir()).isEmpty(),
                            "the snapshot holds the private dir " + env.target().privateDir() + " (staged files)");
                    assertEquals("from the snapshot\n", sh(from, "echo from the snapshot"));
                } finally {
                    discardSnapshot(id);
                }
            } finally {
                removeDir(env, dir);
            }
        }

        @Promise("the environment a snapshot was taken of carries on: commands run and files change as before")
        @Test
        void theOriginalEnvironmentStillWorksAfterASnapshot() {
            Environment env = environment();
            assumeCapability(env.capabilities().snapshots(), "capabilities().snapshots() is false");
            String dir = snapshotDir(env);
            try {
                env.files().write(dir + "/before", Payload.ofUtf8("before"));
                String id = env.snapshot();
                discardSnapshot(id);
                env.files().write(dir + "/after", Payload.ofUtf8("after"));
                assertEquals("before", read(env, dir + "/before"));
                assertEquals("after", read(env, dir + "/after"));
                assertEquals("alive\n", sh(env, "echo alive"));
            } finally {
                removeDir(env, dir);
            }
        }

        @Promise("a backend without snapshots refuses snapshot() in one line naming the backend")
        @Test
        void anUnsupportedSnapshotIsOneLine() {
            Environment env = environment();
            assumeCapability(!env.capabilities().snapshots(), "capabilities().snapshots() is true: this backend takes them");
            ConfigurationException e = assertThrows(ConfigurationException.class, env::snapshot);
            assertTrue(e.getMessage().contains(env.name()) && !e.getMessage().contains("\n"),
                    "the refusal must be one line naming the " + env.name() + " backend: " + e.getMessage());
            assertEquals("alive\n", sh(env, "echo alive"), "a refused snapshot must leave the environment working");
        }
    }

    // ====================================================================================== ports

    /**
     * (optional) {@link Environment#ports()}: a server a command starts in the sandbox answers at
     * the URI {@code expose} returns, with the very bytes it served, until the environment closes;
     * a port that is no TCP port, that was not declared where the backend needs it, or any port on a
     * backend without port support ({@link Capabilities#ports()} {@code NONE}) is refused in one
     * line. The server is {@code busybox httpd} (or {@code httpd}); where the sandbox has neither,
     * the serving cases skip saying so. The port is one free on this machine (it is this machine's
     * own port where commands share the host's network), declared in {@code airlock.ports} with
     * {@code airlock.network=on}.
     */
    @Nested
    class Ports {
        /** Bytes no text transform keeps: NUL, invalid UTF-8, CR LF, no trailing newline. */
        private final byte[] served = servedBytes();

        private byte[] servedBytes() {
            byte[] b = new byte[70_000];
            new java.util.Random(37).nextBytes(b);
            byte[] head = {0, (byte) 0xff, (byte) 0xc3, '\r', '\n', 0, 'x'};
            System.arraycopy(head, 0, b, 0, head.length);
            return b;
        }

        private int freePort() throws IOException {
            try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
                return s.getLocalPort();
            }
        }

        private void assumePorts() {
            assumeCapability(environment().capabilities().ports() != dev.airlock.PortSupport.NONE,
                    "capabilities().ports() is NONE: the " + environment().name() + " backend exposes no ports");
        }

        private Environment openWithPort(int port) {
            return open(Map.of(dev.airlock.Ports.KEY, String.valueOf(port), NetworkMode.KEY, NetworkMode.ON.label()));
        }

        /** Starts an HTTP server on {@code port} in {@code env} serving {@link #served} as /served.bin; skips where there is none. */
        private Execution serve(Environment env, int port) {
            ExecResult which = env.exec(ExecRequest.builder("if command -v busybox >/dev/null 2>&1 && busybox --list 2>/dev/null"
                    + " | grep -qx httpd; then echo 'busybox httpd'; elif command -v httpd >/dev/null 2>&1; then echo httpd; fi")
                    .timeout(Duration.ofSeconds(30)).build());
            String httpd = which.stdout().text().trim();
            assumeCapability(!httpd.isEmpty(), "the sandbox has neither busybox httpd nor httpd to serve a port with");
            String dir = newDir(env, "ports");
            env.files().write(dir + "/served.bin", served);
            return env.start(ExecRequest.of("exec " + httpd + " -f -p " + port + " -h " + q(dir)));
        }

        private void assertOneLine(RuntimeException e, String what, String... mustName) {
            String m = String.valueOf(e.getMessage());
            assertFalse(m.contains("\n"), what + " must be refused in one line: " + m);
            for (String word : mustName) {
                assertTrue(m.contains(word), what + " must be refused naming " + word + ": " + m);
            }
        }

        @Promise("a server started in the sandbox answers through the URL ports().expose returns (http or https) with"
                + " exactly the bytes it served; list() holds it, and expose again gives the same URL")
        @Test
        void aServerInTheSandboxAnswersThroughItsUrlWithTheBytesItServed() throws Exception {
            assumePorts();
            int port = freePort();
            try (Environment env = openWithPort(port)) {
                Execution server = serve(env, port);
                java.net.URI url = env.ports().expose(port);
                assertTrue(("http".equals(url.getScheme()) || "https".equals(url.getScheme())) && url.getHost() != null,
                        "the URL of port " + port + " must be an http(s) URL with a host: " + url);
                byte[] got = Http.fetch(url.resolve("/served.bin"), Duration.ofSeconds(30));
                assertArrayEquals(served, got, "the bytes through " + url + " must be the bytes served (" + served.length
                        + " bytes served, " + got.length + " came)");
                assertEquals(Map.of(port, url), env.ports().list(), "list() after exposing port " + port);
                assertEquals(url, env.ports().expose(port), "exposing port " + port + " again must give the same URL");
                assertFalse(server.exitCode().isPresent(), "the server ended while it was being asked");
            }
        }

        @Promise("when the environment closes, its ports' URLs no longer answer (forwards end, the server with the sandbox)")
        @Test
        void afterTheEnvironmentClosesTheUrlNoLongerAnswers() throws Exception {
            assumePorts();
            int port = freePort();
            java.net.URI url;
            try (Environment env = openWithPort(port)) {
                serve(env, port);
                url = env.ports().expose(port);
                Http.fetch(url.resolve("/served.bin"), Duration.ofSeconds(30));
            }
            long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (Http.answers(url.resolve("/served.bin")) && System.nanoTime() < end) {
                Thread.sleep(200);
            }
            assertFalse(Http.answers(url.resolve("/served.bin")), url + " still answers after the environment closed");
        }

        @Promise("closing a port drops it from list(); exposing it again works")
        @Test
        void closingAPortDropsItFromTheList() throws Exception {
            assumePorts();
            int port = freePort();
            try (Environment env = openWithPort(port)) {
                serve(env, port);
                java.net.URI url = env.ports().expose(port);
                env.ports().close(port);
                assertEquals(Map.of(), env.ports().list(), "list() after closing port " + port);
                java.net.URI again = env.ports().expose(port);
                assertTrue(java.util.Arrays.equals(served, Http.fetch(again.resolve("/served.bin"), Duration.ofSeconds(30))),
                        "port " + port + " exposed again (" + again + ", first " + url + ") must serve the same bytes");
            }
        }

        @Promise("a port that is no TCP port (0, 65536) is refused in one line naming it, on every backend")
        @Test
        void aPortThatIsNoTcpPortIsRefusedInOneLine() {
            for (int bad : new int[] {0, -1, 65536}) {
                ConfigurationException e = assertThrows(ConfigurationException.class, () -> environment().ports().expose(bad),
                        "port " + bad + " was not refused");
                assertOneLine(e, "port " + bad, String.valueOf(bad));
            }
        }

        @Promise("a backend without ports refuses expose in one line naming itself; one that needs ports declared at open"
                + " refuses an undeclared port in one line naming it and airlock.ports")
        @Test
        void anUnsupportedOrUndeclaredPortIsRefusedInOneLine() throws IOException {
            dev.airlock.PortSupport support = environment().capabilities().ports();
            assumeCapability(support != dev.airlock.PortSupport.ANY, "capabilities().ports() is ANY: the "
                    + environment().name() + " backend exposes any port, so none is undeclared");
            if (support == dev.airlock.PortSupport.NONE) {
                ConfigurationException e = assertThrows(ConfigurationException.class, () -> environment().ports().expose(8080),
                        "a backend declaring no ports exposed one");
                assertOneLine(e, "a port on a backend without ports", environment().name());
                return;
            }
            int declared = freePort();
            int other = declared == 65535 ? 1024 : declared + 1;
            try (Environment env = openWithPort(declared)) {
                ConfigurationException e = assertThrows(ConfigurationException.class, () -> env.ports().expose(other),
                        "port " + other + " was not declared (airlock.ports=" + declared + "), yet it was exposed");
                assertOneLine(e, "an undeclared port", String.valueOf(other), dev.airlock.Ports.KEY);
            }
        }
    }

    // ==================================================================================== layering

    /**
     * (core) A plugin builds on the SPI only: {@code dev.airlock.internal} and the exec core
     * ({@code dev.airlock.exec}) are the core's own and may change. The plugin's package is the
     * kit subclass's (a plugin implementing {@code Backend} directly gets the core's environment).
     */
    @Nested
    class Layering {

        @Promise("the plugin depends on the SPI and the API only, never on dev.airlock.internal or dev.airlock.exec")
        @Test
        void thePluginUsesNoCoreInternals() {
            String pkg = EnvironmentCompatibilityKit.this.getClass().getPackageName();
            com.tngtech.archunit.core.domain.JavaClasses classes =
                    new com.tngtech.archunit.core.importer.ClassFileImporter()
                            .withImportOption(com.tngtech.archunit.core.importer.ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                            .importPackages(pkg);
            com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses().that().resideInAPackage(pkg + "..")
                    .should().dependOnClassesThat().resideInAnyPackage("dev.airlock.internal..", "dev.airlock.exec..")
                    .because("a plugin implements the SPI (dev.airlock.spi) and uses the API; the core's internals may change")
                    .check(classes);
        }
    }

    /** A caller's payload source that breaks part way. */
    private static final class FailingStream extends BulkInputStream {
        private long left;

        FailingStream(long before) {
            this.left = before;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (left == 0) {
                throw new IOException("kit: the payload source broke");
            }
            int n = (int) Math.min(len, left);
            java.util.Arrays.fill(b, off, off + n, (byte) 'x');
            left -= n;
            return n;
        }
    }
}
