package dev.airlock.exec;

import dev.airlock.BackendException;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.StdinMode;
import dev.airlock.session.Session;
import dev.airlock.session.SessionBusyException;
import dev.airlock.session.SessionScript;
import dev.airlock.session.SessionStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A session's life on the real core: its state loaded from a store at open and saved to it at
 * close, its directory removed, one exec at a time (waiting, refused, or interrupted while
 * waiting), a closed session refusing execs, and an interrupt of its caller cancelling the exec.
 */
class SessionLifecycleTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();

    private HostBackend open(String... more) {
        return opened.add(new HostBackend(HostBackend.settings(dir, more), StdinMode.PIPE, true, List.of()));
    }

    /** A store in memory: what it holds, and every save. */
    private static final class MemoryStore implements SessionStore {
        volatile byte[] held;
        final List<byte[]> saves = new CopyOnWriteArrayList<>();

        MemoryStore(String held) {
            this.held = held == null ? null : held.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public Optional<byte[]> load() {
            return Optional.ofNullable(held);
        }

        @Override
        public void save(byte[] snapshot) {
            saves.add(snapshot);
            held = snapshot;
        }

        String text() {
            return new String(held, StandardCharsets.UTF_8);
        }
    }

    @Test
    void aStoredStateIsPutOnTheTargetAndTheNewOneSavedOnceAtClose() {
        HostBackend b = open();
        MemoryStore store = new MemoryStore("export FROM_STORE='kept value'\n");
        Session s = b.env.session(store);
        Path sessionDir = Path.of(s.directory());
        assertTrue(Files.isRegularFile(sessionDir.resolve(SessionScript.SNAPSHOT)), "the stored state was not put on the target");
        assertEquals("kept value\n", s.exec(ExecRequest.of("echo \"$FROM_STORE\"; export ADDED=in-session")).stdout().text());
        s.close();
        assertEquals(1, store.saves.size(), "the state was not saved exactly once at close");
        assertTrue(store.text().contains("ADDED") && store.text().contains("in-session"), store.text());
        assertTrue(store.text().contains("kept value"), "the stored state was dropped: " + store.text());
        assertFalse(Files.exists(sessionDir), "the session's directory was left on the target");
        s.close();
        assertEquals(1, store.saves.size(), "a second close saved again");

        EnvironmentClosedException e = assertThrows(EnvironmentClosedException.class, () -> s.start(ExecRequest.of("echo no")));
        assertEquals("session " + s.id() + " is closed; open a new one with Environment.session()", e.getMessage());
        try (Session next = b.env.session(store)) {
            assertEquals("kept value in-session\n", next.exec(ExecRequest.of("echo \"$FROM_STORE $ADDED\"")).stdout().text());
        }
    }

    /** A session that never ran a command has no state to save: the store keeps what it had. */
    @Test
    void aSessionWithoutStateLeavesItsStoreAsItWas() {
        HostBackend b = open();
        MemoryStore store = new MemoryStore(null);
        Session s = b.env.session(store);
        s.close();
        assertEquals(List.of(), store.saves);
    }

    /** A snapshot over the cap (a command wrote the file) is not saved: the stored one stays, the directory goes. */
    @Test
    void anOversizedSnapshotIsNotSavedAndTheStoredOneStays() throws Exception {
        HostBackend b = open();
        MemoryStore store = new MemoryStore("export OLD=1\n");
        Session s = b.env.session(store);
        assertEquals(0, s.exec(ExecRequest.of("export NEW=1")).exitCode());
        Path snapshot = Path.of(SessionScript.snapshotPath(s.directory()));
        Files.write(snapshot, new byte[SessionStore.MAX_SNAPSHOT_BYTES + 1]);
        s.close();
        assertEquals(List.of(), store.saves, "an oversized snapshot was saved");
        assertEquals("export OLD=1\n", store.text());
        assertFalse(Files.exists(snapshot.getParent()), "the session's directory was left on the target");
    }

    /** A snapshot of exactly the cap is still saved whole. */
    @Test
    void aSnapshotOfExactlyTheCapIsSaved() throws Exception {
        HostBackend b = open();
        MemoryStore store = new MemoryStore(null);
        Session s = b.env.session(store);
        assertEquals(0, s.exec(ExecRequest.of("export NEW=1")).exitCode());
        Files.write(Path.of(SessionScript.snapshotPath(s.directory())), new byte[SessionStore.MAX_SNAPSHOT_BYTES]);
        s.close();
        assertEquals(1, store.saves.size(), "a snapshot of exactly the cap was refused");
        assertEquals(SessionStore.MAX_SNAPSHOT_BYTES, store.saves.get(0).length);
    }

    /** An environment closed under the session: closing the session then saves nothing and throws nothing. */
    @Test
    void aSessionOfAClosedEnvironmentClosesQuietlyWithoutSaving() {
        HostBackend b = open();
        MemoryStore store = new MemoryStore("export OLD=1\n");
        Session s = b.env.session(store);
        assertEquals(0, s.exec(ExecRequest.of("export NEW=1")).exitCode());
        b.env.close();
        s.close();
        assertEquals(List.of(), store.saves);
        assertThrows(EnvironmentClosedException.class, () -> b.env.session(store), "a session opened on a closed environment");
    }

    @Test
    void aBusySessionRefusesWithOneLineWhenAskedNotToWait() throws Exception {
        HostBackend b = open("airlock.session.wait", "false");
        try (Session s = b.env.session()) {
            Execution first = s.start(ExecRequest.of("sleep 30"));
            SessionBusyException e = assertThrows(SessionBusyException.class, () -> s.start(ExecRequest.of("echo second")));
            assertEquals("busy", e.kind());
            assertEquals("another command of session " + s.id() + " still runs and airlock.session.wait=false;"
                    + " wait for it to end, or drop that setting to queue behind it", e.getMessage());
            first.cancel();
            assertTrue(HostBackend.within(first).cancelled());
            assertEquals("third\n", s.exec(ExecRequest.of("echo third")).stdout().text());
        }
    }

    /** A caller interrupted while it waits for the session's previous command gets one line, its interrupt kept. */
    @Test
    void aCallerInterruptedWhileWaitingForThePreviousCommandGivesUp() throws Exception {
        HostBackend b = open();
        try (Session s = b.env.session()) {
            Execution first = s.start(ExecRequest.of("sleep 30"));
            Thread.currentThread().interrupt();
            BackendException e = assertThrows(BackendException.class, () -> s.start(ExecRequest.of("echo second")));
            assertTrue(Thread.interrupted(), "the interrupt was swallowed");
            assertEquals("interrupted while waiting for the session's previous command to end", e.getMessage());
            first.cancel();
            assertTrue(HostBackend.within(first).cancelled());
            assertEquals("next\n", s.exec(ExecRequest.of("echo next")).stdout().text(), "the refused exec kept the session busy");
        }
    }

    /** An interrupt of a caller waiting in {@code exec} cancels the session's command, as for a plain exec. */
    @Test
    void anInterruptedSessionExecIsCancelled() throws Exception {
        HostBackend b = open();
        try (Session s = b.env.session()) {
            ExecResult[] result = new ExecResult[1];
            boolean[] flagged = new boolean[1];
            Thread caller = new Thread(() -> {
                result[0] = s.exec(ExecRequest.of("sleep 30"));
                flagged[0] = Thread.currentThread().isInterrupted();
            });
            caller.start();
            b.awaitLaunched();
            caller.interrupt();
            caller.join(HostBackend.HANG.toMillis());
            assertFalse(caller.isAlive(), "an interrupted session exec did not return");
            assertTrue(result[0] != null && result[0].cancelled(), String.valueOf(result[0]));
            assertTrue(flagged[0], "the caller's interrupt was swallowed");
            assertFalse(HostBackend.alive(b.launched.get(0).pid()), "the cancelled command still runs");
        }
    }

    /** Close waits for the exec that runs: the state it leaves is the one saved, and its directory is gone afterwards. */
    @Test
    void closeWaitsForTheRunningExecAndSavesWhatItLeft() throws Exception {
        HostBackend b = open("airlock.session.wait", "false");
        MemoryStore store = new MemoryStore(null);
        Session s = b.env.session(store);
        Path go = dir.resolve("go");
        Execution running = s.start(ExecRequest.of("while [ ! -e " + dev.airlock.shell.Shell.quote(go.toString())
                + " ]; do sleep 0.02; done; export LATE=set-by-the-running-exec"));
        b.awaitLaunched();
        Thread closer = new Thread(s::close);
        closer.start();
        closer.join(300);
        assertTrue(closer.isAlive(), "close did not wait for the running exec");
        // Closing: a new exec is refused as closed at once, not as busy
        assertThrows(EnvironmentClosedException.class, () -> s.start(ExecRequest.of("echo no")));
        Files.createFile(go);
        assertEquals(0, HostBackend.within(running).exitCode());
        closer.join(HostBackend.HANG.toMillis());
        assertFalse(closer.isAlive(), "close never returned after the exec ended");
        assertEquals(1, store.saves.size());
        assertTrue(store.text().contains("set-by-the-running-exec"), "the running exec's state was not saved: " + store.text());
        assertFalse(Files.exists(Path.of(s.directory())), "the session's directory was left on the target");
    }

    /** An exec queued behind the running one when the session closes is refused as closed, never run. */
    @Test
    void anExecQueuedWhenTheSessionClosesIsRefusedNotRun() throws Exception {
        HostBackend b = open();
        Session s = b.env.session();
        Path go = dir.resolve("go");
        Execution running = s.start(ExecRequest.of("while [ ! -e " + dev.airlock.shell.Shell.quote(go.toString())
                + " ]; do sleep 0.02; done"));
        b.awaitLaunched();
        Throwable[] queued = new Throwable[1];
        Thread waiter = new Thread(() -> {
            try {
                s.start(ExecRequest.of("touch " + dev.airlock.shell.Shell.quote(dir.resolve("ran").toString())));
            } catch (Throwable t) {
                queued[0] = t;
            }
        });
        waiter.start();
        awaitWaiting(waiter);
        Thread closer = new Thread(s::close);
        closer.start();
        awaitWaiting(closer);
        Files.createFile(go);
        assertEquals(0, HostBackend.within(running).exitCode());
        waiter.join(HostBackend.HANG.toMillis());
        closer.join(HostBackend.HANG.toMillis());
        assertFalse(waiter.isAlive() || closer.isAlive(), "the queued exec or the close never returned");
        assertTrue(queued[0] instanceof EnvironmentClosedException, String.valueOf(queued[0]));
        assertFalse(Files.exists(dir.resolve("ran")), "an exec ran in a closed session");
    }

    /** Waits until {@code t} is parked (queued on the session's permit). */
    private static void awaitWaiting(Thread t) throws InterruptedException {
        long until = System.nanoTime() + HostBackend.HANG.toNanos();
        while (t.getState() != Thread.State.WAITING) {
            assertTrue(System.nanoTime() < until, t.getName() + " never queued: " + t.getState());
            Thread.sleep(5);
        }
    }
}
