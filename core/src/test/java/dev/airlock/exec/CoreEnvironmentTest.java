package dev.airlock.exec;

import dev.airlock.BackendException;
import dev.airlock.Capabilities;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.StdinMode;
import dev.airlock.containment.OwnState;
import dev.airlock.event.AuditEvent;
import dev.airlock.event.ExecListener;
import dev.airlock.safety.GuardMode;
import dev.airlock.spi.Backend;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The environment's own front: the one-line refusals (closed, stopped by a sandbox-wide cancel,
 * no thread free), an interrupted caller's exec cancelled, the open event, what it tells of
 * itself, and the witness of Airlock's own state on the JVM's own host.
 */
class CoreEnvironmentTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();

    private HostBackend open(String... more) {
        return opened.add(new HostBackend(HostBackend.settings(dir.resolve("base"), more), StdinMode.PIPE, false, List.of()));
    }

    @Test
    void aClosedEnvironmentRefusesEveryExecWithOneLine() {
        HostBackend b = open();
        b.env.close();
        assertTrue(b.env.isClosed());
        String line = "the host environment " + b.env.id() + " is closed; open a new one";
        assertEquals(line, assertThrows(EnvironmentClosedException.class, () -> b.env.start(ExecRequest.of("echo no"))).getMessage());
        assertEquals(line, assertThrows(EnvironmentClosedException.class, () -> b.env.exec(ExecRequest.of("echo no"))).getMessage());
        assertEquals(line, assertThrows(EnvironmentClosedException.class, () -> b.env.session()).getMessage());
        assertEquals(0, b.launchRequests.size(), "a command was launched on a closed environment");
    }

    @Test
    void anEnvironmentStoppedByASandboxWideCancelSaysSo() throws Exception {
        HostBackend b = open("airlock.cancel", "sandbox");
        Execution e = b.start(ExecRequest.of("sleep 30"));
        b.awaitLaunched();
        e.cancel();
        assertTrue(HostBackend.within(e).cancelled());
        long until = System.nanoTime() + HostBackend.HANG.toNanos();
        while (b.stops.get() == 0) {
            assertTrue(System.nanoTime() < until, "the sandbox-wide cancel never stopped the sandbox");
            Thread.sleep(10);
        }
        EnvironmentClosedException refused = assertThrows(EnvironmentClosedException.class, () -> b.env.start(ExecRequest.of("echo no")));
        assertEquals("the host environment " + b.env.id() + " was stopped by a sandbox-wide cancel (airlock.cancel=sandbox); open a new one",
                refused.getMessage());
    }

    /** A cancel without the sandbox policy stops that exec only: the environment goes on. */
    @Test
    void aPlainCancelLeavesTheEnvironmentOpen() throws Exception {
        HostBackend b = open();
        Execution e = b.start(ExecRequest.of("sleep 30"));
        b.awaitLaunched();
        e.cancel();
        assertTrue(HostBackend.within(e).cancelled());
        assertEquals("next\n", b.exec(ExecRequest.of("echo next")).stdout().text());
        assertEquals(0, b.stops.get(), "a plain cancel stopped the sandbox");
    }

    /** Every worker busy: the exec is refused with one line and gives its slot back; once threads free up, execs run. */
    @Test
    void anExecWithNoFreeThreadIsRefusedAndGivesItsSlotBack() throws Exception {
        HostBackend b = open();
        CountDownLatch hold = new CountDownLatch(1);
        int taken = 0;
        try {
            while (b.env.workers().tryExecute(() -> {
                try {
                    hold.await();
                } catch (InterruptedException ignored) {
                    Thread.currentThread().interrupt();
                }
            })) {
                taken++;
            }
            assertTrue(taken > 0);
            BackendException e = assertThrows(BackendException.class, () -> b.env.start(ExecRequest.of("echo no")));
            assertEquals("no thread is free on the host environment " + b.env.id() + "; wait for running commands to finish",
                    e.getMessage());
            assertEquals(0, b.env.live().size(), "the refused exec kept its slot");
            assertEquals(List.of(), b.env.live().unsettled(), "close would wait for the flow of an exec that never had one");
        } finally {
            hold.countDown();
        }
        ExecResult r = null;
        long until = System.nanoTime() + HostBackend.HANG.toNanos();
        while (r == null) {
            try {
                r = b.exec(ExecRequest.of("echo ran"));
            } catch (BackendException busy) {
                assertTrue(System.nanoTime() < until, "no exec ran once the threads were free: " + busy.getMessage());
                Thread.sleep(10);
            }
        }
        assertEquals("ran\n", r.stdout().text());
    }

    /** An interrupt of a caller waiting in {@code exec} cancels the command: the result says so, the interrupt is kept. */
    @Test
    void anInterruptedExecIsCancelledAndTheInterruptKept() throws Exception {
        HostBackend b = open();
        ExecResult[] result = new ExecResult[1];
        boolean[] flagged = new boolean[1];
        Thread caller = new Thread(() -> {
            result[0] = b.exec(ExecRequest.of("sleep 30"));
            flagged[0] = Thread.currentThread().isInterrupted();
        });
        caller.start();
        b.awaitLaunched();
        caller.interrupt();
        caller.join(HostBackend.HANG.toMillis());
        assertFalse(caller.isAlive(), "an interrupted exec did not return");
        assertTrue(result[0] != null && result[0].cancelled(), String.valueOf(result[0]));
        assertTrue(flagged[0], "the caller's interrupt was swallowed");
        assertFalse(HostBackend.alive(b.launched.get(0).pid()), "the cancelled command still runs");
    }

    /**
     * A stop that takes longer than the kill grace plus 5 s (a kill that never answers, and a slack
     * of 6 s): the interrupted caller still gets the cancelled result at the stop bound, not a
     * "did not stop" error while the core is still within its own bound.
     */
    @Test
    void anInterruptedExecWaitsOutTheWholeStopBound() throws Exception {
        HostBackend b = open("airlock.kill.slack", "6s");
        b.kill = HostBackend.Fault.STALL_UNINTERRUPTIBLY;
        ExecResult[] result = new ExecResult[1];
        Throwable[] thrown = new Throwable[1];
        Thread caller = new Thread(() -> {
            try {
                result[0] = b.exec(ExecRequest.of("sleep 30"));
            } catch (Throwable t) {
                thrown[0] = t;
            }
        });
        caller.start();
        try {
            b.awaitLaunched();
            caller.interrupt();
            caller.join(HostBackend.HANG.toMillis() + 20_000);
            assertFalse(caller.isAlive(), "an interrupted exec did not return");
            assertEquals(null, thrown[0], "the interrupted exec failed while the core was still within its stop bound");
            assertTrue(result[0] != null && result[0].cancelled(), String.valueOf(result[0]));
        } finally {
            b.release.countDown();
        }
    }

    /** The open event names the probed target; what the environment tells of itself is the backend's. */
    @Test
    void theOpenEventAndTheEnvironmentsOwnFacts() {
        List<AuditEvent> events = new CopyOnWriteArrayList<>();
        ExecListener listener = new ExecListener() {
            @Override
            public void onEvent(AuditEvent event) {
                events.add(event);
            }
        };
        HostBackend b = opened.add(new HostBackend(HostBackend.settings(dir.resolve("base"), "airlock.guard", "on",
                "airlock.env.strip", "HOME"), StdinMode.PIPE, false, List.of(listener)));
        AuditEvent open = events.stream().filter(e -> e.type().equals("open")).findFirst().orElseThrow(() -> new AssertionError(events.toString()));
        assertEquals(b.target().user() + "@" + b.target().hostname(), open.subject());
        assertEquals(Map.of("home", b.env.containment().home(), "container", false, "profile", b.env.containment().profile().label()),
                open.fields());
        assertEquals("host", b.env.name());
        assertEquals(b.id(), b.env.id());
        assertEquals("none", b.env.isolation());
        assertTrue(b.env.backend(HostBackend.class).isPresent());
        assertEquals(java.util.Optional.empty(), b.env.backend(OtherBackend.class));
        GuardMode.Verdict guard = b.env.commandGuard();
        assertTrue(guard.on(), guard.describe());
        assertTrue(b.env.strippedSecretVariables().contains("HOME"), b.env.strippedSecretVariables().toString());
        assertTrue(b.env.defaultChildUnset().contains("HOME"), "a stripped variable is not proposed for unsetting: " + b.env.defaultChildUnset());
    }

    /** A backend type this environment does not run on. */
    private interface OtherBackend extends Backend {
    }

    // ---- the witness of Airlock's own state (approvals, config) on the JVM's own host

    /** Opens with Airlock's home in {@code home} holding an approvals list, runs a command that rewrites it, closes. */
    private String approvalsAfterACommandChangedThem(Consumer<HostBackend> beforeOpen, Capabilities caps) throws Exception {
        Path home = Files.createDirectories(dir.resolve("airlock-home"));
        Path approvals = home.resolve(OwnState.APPROVALS_FILE);
        Files.writeString(approvals, "approved before\n");
        HostBackend b = opened.add(new HostBackend(HostBackend.settings(dir.resolve("base"), "airlock.home", home.toString(),
                "airlock.guard", "off"),
                caps, List.of(), false, beforeOpen));
        ExecResult r = b.exec(ExecRequest.of("printf 'added by a command\\n' > " + dev.airlock.shell.Shell.quote(approvals.toString())));
        assertEquals(0, r.exitCode(), r.stderr().text());
        assertEquals("added by a command\n", Files.readString(approvals));
        b.env.close();
        return Files.readString(approvals);
    }

    /** Unsandboxed on this host as this user: a command's change to the approvals list is undone at close, and kept aside. */
    @Test
    void aCommandsChangeToTheApprovalsIsUndoneOnTheJvmsOwnHost() throws Exception {
        assertEquals("approved before\n", approvalsAfterACommandChangedThem(b -> { }, Capabilities.pipe()));
        try (var s = Files.list(dir.resolve("airlock-home"))) {
            assertTrue(s.anyMatch(p -> p.getFileName().toString().startsWith(OwnState.APPROVALS_FILE + ".changed-")),
                    "the command's change was not kept aside for the operator");
        }
    }

    /** A backend that isolates its commands: they cannot reach this host's files, so nothing is witnessed or undone. */
    @Test
    void nothingIsUndoneOnABackendThatIsolatesItsCommands() throws Exception {
        Capabilities caps = Capabilities.pipe();
        Path home = Files.createDirectories(dir.resolve("airlock-home"));
        Path approvals = home.resolve(OwnState.APPROVALS_FILE);
        Files.writeString(approvals, "approved before\n");
        HostBackend b = opened.add(new HostBackend(HostBackend.settings(dir.resolve("base"), "airlock.home", home.toString(),
                "airlock.guard", "off"),
                caps, List.of()) {
            @Override
            public String isolation() {
                return "gvisor sandbox";
            }
        });
        b.exec(ExecRequest.of("printf 'changed\\n' > " + dev.airlock.shell.Shell.quote(approvals.toString())));
        b.env.close();
        assertEquals("changed\n", Files.readString(approvals), "a change on another machine's files was undone here");
    }

    /** A target that is another machine (the backend answers the probe with its own hostname): nothing is undone here. */
    @Test
    void nothingIsUndoneWhenTheTargetIsAnotherHost() throws Exception {
        assertEquals("added by a command\n", approvalsAfterACommandChangedThem(b -> b.answersHostSteps = true, Capabilities.pipe()));
    }

    /**
     * The JVM runs as another user than the target's: only a root target can write this user's
     * files (then the change is undone); any other target user cannot, and nothing is undone.
     */
    @Test
    void aTargetUserOtherThanTheJvmsOwnCountsOnlyAsRoot() throws Exception {
        String user = System.getProperty("user.name");
        System.setProperty("user.name", "airlock-test-someone-else");
        String after;
        boolean root;
        try {
            after = approvalsAfterACommandChangedThem(b -> { }, Capabilities.pipe());
            root = "root".equals(currentUser());
        } finally {
            System.setProperty("user.name", user);
        }
        assertEquals(root ? "approved before\n" : "added by a command\n", after);
    }

    private static String currentUser() throws Exception {
        Process p = new ProcessBuilder("id", "-un").start();
        String u = new String(p.getInputStream().readAllBytes()).strip();
        p.waitFor();
        return u;
    }

    /** A backend whose sandbox keeps the credential dirs read-only: an SSH config write is refused outright, not sent for approval. */
    @Test
    void aBackendThatKeepsCredentialsReadOnlyHardDeniesWhatElseNeedsApproval() {
        HostBackend plain = open("airlock.guard", "on");
        HostBackend readOnly = opened.add(new HostBackend(HostBackend.settings(dir.resolve("base"), "airlock.guard", "on"),
                Capabilities.pipe(), List.of()) {
            @Override
            public boolean credentialsReadOnly() {
                return true;
            }
        });
        ExecRequest write = ExecRequest.of("echo Host x >> ~/.ssh/config");
        String approval = assertThrows(dev.airlock.DeniedException.class, () -> plain.exec(write)).getMessage();
        String hard = assertThrows(dev.airlock.DeniedException.class, () -> readOnly.exec(write)).getMessage();
        assertFalse(approval.contains("read-only"), approval);
        assertTrue(hard.contains("read-only for commands, so no approval can open it"), hard);
        assertEquals(0, plain.launchRequests.size() + readOnly.launchRequests.size(), "a denied command was launched");
    }

    /** The backend is handed its access to the core when the environment is made, and it works (a script runs through it). */
    @Test
    void theBackendIsBoundToTheCore() throws Exception {
        dev.airlock.spi.CoreAccess[] bound = new dev.airlock.spi.CoreAccess[1];
        HostBackend b = opened.add(new HostBackend(HostBackend.settings(dir.resolve("base")), Capabilities.pipe(), List.of()) {
            @Override
            public void bind(dev.airlock.spi.CoreAccess core) {
                bound[0] = core;
            }
        });
        assertTrue(bound[0] != null, "the backend was never bound to the core");
        assertEquals("bound\n", new String(bound[0].run("echo bound\n", null).stdout(), java.nio.charset.StandardCharsets.UTF_8));
        assertFalse(bound[0].isClosed());
        assertTrue(bound[0].shellFiles().stat(dir.toString()).isPresent(), "the core's shell files are not reachable");
        b.env.close();
        assertTrue(bound[0].isClosed());
    }

    /** A backend with its own file API: files() goes through it (behind the guard), not the shell scripts. */
    @Test
    void filesUseTheBackendsOwnFileApi() throws Exception {
        HostBackend b = opened.add(new HostBackend(HostBackend.settings(dir.resolve("base")),
                Capabilities.pipe().withOutputTransport(dev.airlock.OutputTransport.FILES), List.of()));
        Path f = Files.writeString(dir.resolve("to-delete"), "x");
        assertTrue(b.env.files().delete(f.toString()));
        assertFalse(Files.exists(f));
        // The test backend's own API has no mkdirs: a call that reached the shell scripts would have made the dir.
        assertThrows(UnsupportedOperationException.class, () -> b.env.files().mkdirs(dir.resolve("made").toString()));
        assertFalse(Files.exists(dir.resolve("made")));
    }

    /** A backend that declares a hook it does not give is refused at open, with one line saying what to do. */
    @Test
    void aBackendThatDeclaresFilesOutputWithoutFilesIsRefusedAtOpen() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> opened.add(new HostBackend(
                HostBackend.settings(dir.resolve("base")), Capabilities.pipe().withOutputTransport(dev.airlock.OutputTransport.FILES),
                List.of()) {
            @Override
            public java.util.Optional<dev.airlock.RemoteFiles> files() {
                return java.util.Optional.empty();
            }
        }));
        assertEquals("the host backend declares FILES output but gives no native files() to download them with;"
                + " return one, or declare OutputTransport.STREAM", e.getMessage());
    }
}
