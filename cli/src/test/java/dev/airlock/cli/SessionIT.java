package dev.airlock.cli;

import dev.airlock.tck.Services;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static dev.airlock.cli.Airlock.airlock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code ./airlock --set airlock.session=NAME exec ...} on the local backend: NAME's state across invocations. */
class SessionIT {

    @TempDir
    Path tmp;
    /** Airlock's state, outside the working directory (where Airlock refuses it). */
    private final Path home = Airlock.stateDir();

    private Airlock exec(String session, String... command) {
        String[] args = new String[4 + command.length];
        args[0] = "--set";
        args[1] = "airlock.session=" + session;
        args[2] = "exec";
        args[3] = "-n";
        System.arraycopy(command, 0, args, 4, command.length);
        return airlock(args).env("AIRLOCK_HOME", home.toString());
    }

    @Test
    void cdAndExportAreKeptAcrossInvocationsAndSessionsAreApart() throws IOException {
        Path work = Files.createDirectories(tmp.resolve("work dir"));
        Airlock.Result first = exec("dev", "--", "cd '" + work + "' && export GREETING='hi there'; exit 3").run();
        assertEquals(3, first.exit(), first::toString);
        Airlock.Result second = exec("dev", "--", "pwd; printf '%s' \"$GREETING\"").run();
        assertEquals(0, second.exit(), second::toString);
        assertEquals(work + "\nhi there", second.out(), "the session's directory and variable did not carry over");
        assertEquals("unset\n", exec("other", "--", "echo \"${GREETING-unset}\"").run().out(), "another session saw it");
        Airlock.Result plain = airlock("exec", "-n", "--", "echo \"${GREETING-unset}\"").env("AIRLOCK_HOME", home.toString()).run();
        assertEquals("unset\n", plain.out(), "a plain exec saw the session's variable");
    }

    /**
     * A session's state is shell code its next command sources: what a command under bubblewrap
     * left there must never be sourced by a command without it (the same target, user and host).
     */
    @Test
    void stateLeftUnderBubblewrapIsNotSourcedWithoutIt() throws IOException {
        Services.require(Files.isExecutable(Path.of("/usr/bin/bwrap")),
                "bubblewrap is not installed (apt-get install bubblewrap); this case runs the session under it first");
        String work = "airlock.local.workdir=" + Files.createDirectories(tmp.resolve("project"));
        Airlock.Result sandboxed = airlock("--set", "airlock.local.isolation=bwrap", "--set", work, "--set", "airlock.session=dev", "exec", "-n",
                "--", "export FROM_SANDBOX=yes; f() { echo ran; }").env("AIRLOCK_HOME", home.toString()).run();
        assertEquals(0, sandboxed.exit(), sandboxed::toString);
        Airlock.Result plain = airlock("--set", "airlock.local.isolation=none", "--set", work, "--set", "airlock.session=dev", "exec", "-n",
                "--", "echo \"${FROM_SANDBOX-unset}\"; command -v f || echo nof").env("AIRLOCK_HOME", home.toString()).run();
        assertEquals("unset\nnof\n", plain.out(), plain::toString);
    }

    /**
     * The snapshot is a file the session's own commands can write: one that grew past the cap is
     * never read whole (bounded memory). The command's result stands, the state saved before is
     * kept, and a stored snapshot over the cap is a one-line error naming the file to remove.
     */
    @Test
    void anOversizedSnapshotIsRefusedAndTheEarlierStateKept() throws IOException {
        assertEquals(0, exec("big", "--", "export KEPT=yes").run().exit());
        Airlock.Result grown = exec("big", "--", "trap - EXIT; head -c 17000000 /dev/zero > \"$__airlock_sd/snapshot\"; exit 4").run();
        assertEquals(4, grown.exit(), grown::toString);
        assertTrue(grown.err().contains("over 16 MiB"), grown::toString);
        Airlock.Result after = exec("big", "--", "echo \"${KEPT-unset}\"").run();
        assertEquals("yes\n", after.out(), after::toString);

        Path stored;
        try (Stream<Path> s = Files.walk(home.resolve("sessions"))) {
            stored = s.filter(p -> p.getFileName().toString().equals("big.snapshot")).findFirst().orElseThrow();
        }
        try (var out = Files.newOutputStream(stored)) {
            out.write(new byte[17_000_000]);
        }
        Airlock.Result refused = exec("big", "--", "echo ran").run();
        assertEquals(125, refused.exit(), refused::toString);
        assertEquals("", refused.out(), "the command must not run on a state that could not be read");
        assertTrue(refused.err().matches("airlock: .*big\\.snapshot is over 16 MiB; remove it to start the session afresh\n"), refused::toString);
    }

    /**
     * The snapshot is private, keeps what the session exported itself (a secret-looking name too),
     * and leaves out what was injected: a provider token and the operator's own variables.
     */
    @Test
    void theStateIsKeptPrivateUnderAirlockHome() throws IOException {
        Airlock.Result r = exec("keep.me_1", "--", "export OWN_TOKEN=mine; printf '%s' \"${OPERATOR_VALUE-}\"")
                .env("MODAL_TOKEN_SECRET", "injected-provider-secret").env("OPERATOR_VALUE", "injected-operator-value").run();
        assertEquals(0, r.exit(), r::toString);
        Path sessions;
        try (Stream<Path> kinds = Files.list(home.resolve("sessions"))) {
            sessions = kinds.toList().get(0); // local, or local-isolated under bubblewrap (the default where it runs)
        }
        List<Path> files;
        try (Stream<Path> s = Files.walk(sessions)) {
            files = s.filter(p -> p.getFileName().toString().equals("keep.me_1.snapshot")).toList();
        }
        assertEquals(1, files.size(), "one snapshot under " + sessions);
        Path snapshot = files.get(0);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(snapshot)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(snapshot.getParent())));
        String text = Files.readString(snapshot);
        assertTrue(text.contains("OWN_TOKEN='mine'"), "the session's own variable was not kept");
        assertFalse(text.contains("injected-provider-secret"), "a provider token was written to the snapshot");
        assertEquals("injected-operator-value", r.out(), "the local backend passes the operator's variables on");
        assertFalse(text.contains("injected-operator-value"), "an inherited variable the session left alone was written to the snapshot");
    }

    @ParameterizedTest
    @ValueSource(strings = {"a/b", "..", "has space", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "tab\tname", "é"})
    void aBadNameIsOneLineAndExit125(String name) {
        Airlock.Result r = exec(name, "--", "echo ran").run();
        assertEquals(125, r.exit(), r::toString);
        assertEquals(1, r.errLines().size(), r::toString);
        assertTrue(r.err().startsWith("airlock: usage: airlock.session"), r.err());
        assertEquals(0, r.stdout().length, "the command ran");
    }

    @ParameterizedTest
    @ValueSource(strings = {"ssh", "docker", "modal"})
    void aNamedSessionOnARemoteBackendWithoutUpIsOneLine(String backend) {
        Airlock.Result r = airlock("--backend", backend, "--set", "airlock.session=dev", "exec", "-n", "--", "echo ran")
                .env("AIRLOCK_HOME", home.toString()).run();
        assertEquals(125, r.exit(), r::toString);
        assertEquals(1, r.errLines().size(), r::toString);
        assertTrue(r.err().contains("airlock.session=dev keeps its state only where the target outlives this command"), r.err());
        assertTrue(!backend.equals("ssh") || r.err().contains("the ssh backend has none"), r.err());
        assertTrue(backend.equals("ssh") || r.err().contains("airlock --backend " + backend + " up"), r.err());
    }

    @Test
    void aSecondInvocationOfABusySessionFailsAtOnceWhenItMustNotWait() throws Exception {
        Path started = tmp.resolve("started");
        Path go = tmp.resolve("go");
        CompletableFuture<Airlock.Result> busy = CompletableFuture.supplyAsync(() -> exec("busy", "--",
                "touch '" + started + "'; while [ ! -e '" + go + "' ]; do sleep 0.1; done; export AFTER=1").run());
        try {
            while (!Files.exists(started)) {
                assertTrue(!busy.isDone(), () -> "the first invocation ended early: " + busy.join());
                TimeUnit.MILLISECONDS.sleep(50);
            }
            Airlock.Result second = airlock("--set", "airlock.session=busy", "--set", "airlock.session.wait=false",
                    "exec", "-n", "--", "echo ran").env("AIRLOCK_HOME", home.toString()).run();
            assertEquals(125, second.exit(), second::toString);
            assertEquals(1, second.errLines().size(), second::toString);
            assertTrue(second.err().contains("session busy is in use by another airlock command"), second.err());
        } finally {
            Files.createFile(go);
        }
        assertEquals(0, busy.get(3, TimeUnit.MINUTES).exit());
        assertEquals("1\n", exec("busy", "--", "echo \"$AFTER\"").run().out(), "the first invocation's state was lost");
    }

    /** Issue 34: a command that runs no shell session says in one line that it ignores the setting. */
    @Test
    void aCommandWithoutSessionsWarnsThatTheSettingIsIgnored() throws IOException {
        Path file = Files.writeString(tmp.resolve("note.txt"), "content");
        Airlock.Result r = airlock("--set", "airlock.local.isolation=none", "--set", "airlock.session=dev", "read", file.toString())
                .env("AIRLOCK_HOME", home.toString()).run();
        assertEquals(0, r.exit(), r::toString);
        assertEquals("content", r.out());
        assertEquals(List.of("airlock: warning: airlock.session is ignored by 'read': only exec and mcp run in a shell session"),
                r.errLines());
    }

    /** {@code airlock mcp} honours airlock.session (McpIT), so a bad name stops it before it serves. */
    @Test
    void mcpRefusesABadSessionNameBeforeServing() {
        Airlock.Result r = airlock("--set", "airlock.session=a/b", "mcp").env("AIRLOCK_HOME", home.toString()).run();
        assertEquals(ExitCodes.USAGE, r.exit(), r::toString);
        assertEquals(1, r.errLines().size(), r::toString);
        assertTrue(r.err().startsWith("airlock: usage: airlock.session must be"), r.err());
        assertEquals(0, r.stdout().length, "nothing on the protocol stream");
    }

    @Test
    void sessionsAreListedAndEnded() throws IOException {
        assertEquals(0, exec("listed", "--", "export A=1").run().exit());
        Path dir; // sessions/BACKEND/TARGET: local or local-isolated, user@host
        try (Stream<Path> snapshots = Files.find(home.resolve("sessions"), 3, (p, a) -> p.toString().endsWith("listed.snapshot"))) {
            dir = snapshots.findFirst().orElseThrow().getParent();
        }
        String backend = dir.getParent().getFileName().toString();
        String target = dir.getFileName().toString();

        Airlock.Result list = airlock("session", "list").env("AIRLOCK_HOME", home.toString()).run();
        assertEquals(0, list.exit(), list::toString);
        assertTrue(list.out().matches("listed  " + backend + "  " + java.util.regex.Pattern.quote(target) + "  \\d{4}-\\d\\d-\\d\\dT[0-9:]{8}Z\n"),
                list.out());

        Airlock.Result end = airlock("session", "end", "listed").env("AIRLOCK_HOME", home.toString()).run();
        assertEquals(0, end.exit(), end::toString);
        assertEquals("ended listed (" + backend + ", " + target + ")\n", end.out());
        try (Stream<Path> left = Files.walk(home.resolve("sessions"))) {
            assertEquals(List.of(), left.filter(p -> p.toString().endsWith(".snapshot")).toList(), "its state is gone");
        }
        assertEquals("", airlock("session", "list").env("AIRLOCK_HOME", home.toString()).run().out());

        Airlock.Result again = airlock("session", "end", "listed").env("AIRLOCK_HOME", home.toString()).run();
        assertEquals(2, again.exit(), again::toString);
        assertEquals("airlock: usage: no session named 'listed'; 'airlock session list' shows the saved ones\n", again.err());
    }
}
