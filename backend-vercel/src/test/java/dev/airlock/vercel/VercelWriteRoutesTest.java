package dev.airlock.vercel;

import dev.airlock.BackendException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Payload;
import dev.airlock.WriteOptions;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.vercel.emulator.VercelEmulator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How {@code files().write} goes up to Vercel: content that can be read again (bytes, a file) as
 * one upload streamed from its source into the staging dir while the place is judged, a stream
 * larger than a part in parts joined on the target; byte-exact either way, and a file that no
 * longer has the length it declared, a refused place or a symlinked target leave nothing beside
 * the target and no upload in the staging dir.
 */
class VercelWriteRoutesTest {
    private static final VercelEmulatorFixture FIXTURE = new VercelEmulatorFixture(FaultPlan.none());
    private static final int SIZE = 2 * VercelFiles.PART + 12345;

    @AfterAll
    static void close() {
        FIXTURE.close();
    }

    private static byte[] content() {
        byte[] b = new byte[SIZE];
        new Random(11).nextBytes(b);
        b[0] = 0;
        b[SIZE - 1] = (byte) 0xff;
        return b;
    }

    /** The uploads of this test's temp files for {@code target} (the staged scripts are others). */
    private static List<VercelEmulator.StagedWrite> uploadsFor(String dir) {
        return FIXTURE.emulator.writes().stream().filter(w -> w.path().startsWith(dir + "/.airlock-write-")).toList();
    }

    /** The uploads into the staging dir made since {@code before} uploads had been made. */
    private static List<VercelEmulator.StagedWrite> stagedSince(Environment env, int before) {
        List<VercelEmulator.StagedWrite> all = FIXTURE.emulator.writes();
        return all.subList(before, all.size()).stream()
                .filter(w -> w.path().startsWith(env.target().stagingDir() + "/" + VercelFiles.STAGED_PREFIX)).toList();
    }

    /** No temp file beside the target and no upload waiting in the staging dir. */
    private static void assertNothingLeft(Environment env, String dir) {
        assertEquals("", sh(env, "ls -a " + dir + " | grep airlock-write || true").stdout().text(), "no temp file is left");
        assertEquals("", sh(env, "ls -a " + env.target().stagingDir() + " | grep -- " + VercelFiles.STAGED_PREFIX + " || true")
                .stdout().text(), "no upload is left in the staging dir");
    }

    private static ExecResult sh(Environment env, String script) {
        ExecResult r = env.exec(ExecRequest.builder(script).build());
        assertEquals(0, r.exitCode(), script + ": " + r.stderr().text());
        return r;
    }

    @Test
    void bytesAndFilesGoUpAsOneStreamedUploadByteExact(@TempDir Path local) throws Exception {
        byte[] data = content();
        Path file = local.resolve("src.bin");
        Files.write(file, data);
        try (Environment env = new VercelProvider().open(OpenContext.of(FIXTURE.settings()))) {
            int before = FIXTURE.emulator.writes().size();
            env.files().write("/tmp/one/bytes.bin", data);
            env.files().write("/tmp/one/file.bin", Payload.ofFile(file), WriteOptions.defaults());
            assertArrayEquals(data, env.files().read("/tmp/one/bytes.bin").readAllBytes());
            assertArrayEquals(data, env.files().read("/tmp/one/file.bin").readAllBytes());
            assertEquals(List.of((long) SIZE, (long) SIZE), stagedSince(env, before).stream().map(VercelEmulator.StagedWrite::size).toList(),
                    "one upload of the whole file each, into the staging dir");
            assertEquals(List.of(), uploadsFor("/tmp/one"), "nothing went up beside the target");
            assertNothingLeft(env, "/tmp/one");
        }
    }

    @Test
    void aStreamLargerThanAPartGoesUpInPartsByteExact() throws Exception {
        byte[] data = content();
        try (Environment env = new VercelProvider().open(OpenContext.of(FIXTURE.settings()))) {
            env.files().write("/tmp/parts/s.bin", Payload.ofStream(new ByteArrayInputStream(data)), WriteOptions.defaults());
            assertArrayEquals(data, env.files().read("/tmp/parts/s.bin").readAllBytes());
            assertEquals(List.of((long) VercelFiles.PART, (long) VercelFiles.PART, (long) SIZE - 2L * VercelFiles.PART),
                    uploadsFor("/tmp/parts").stream().map(VercelEmulator.StagedWrite::size).toList(), "three parts");
            assertEquals("", sh(env, "ls -a /tmp/parts | grep airlock-write || true").stdout().text(), "no part or temp file is left");
        }
    }

    @Test
    void aFileShorterThanItDeclaredFailsTheWriteAndKeepsTheOldFile(@TempDir Path local) throws Exception {
        Path file = local.resolve("shrinks.bin");
        Files.write(file, new byte[1000]);
        Payload declared = Payload.ofFile(file); // 1000 bytes, read when delivered
        Files.write(file, new byte[600]);
        try (Environment env = new VercelProvider().open(OpenContext.of(FIXTURE.settings()))) {
            sh(env, "mkdir -p /tmp/short && printf old > /tmp/short/f");
            BackendException e = assertThrows(BackendException.class,
                    () -> env.files().write("/tmp/short/f", declared, WriteOptions.defaults()));
            assertTrue(e.getMessage().contains("was 600 bytes, not the 1000 it declared"), e.getMessage());
            assertEquals("old", new String(env.files().read("/tmp/short/f").readAllBytes(), StandardCharsets.UTF_8));
            assertNothingLeft(env, "/tmp/short");
        }
    }

    @Test
    void aFileThatCannotBeReadFailsTheWriteNamingTheContentNotVercel(@TempDir Path local) throws Exception {
        Path file = local.resolve("gone.bin");
        Files.write(file, new byte[100]);
        Payload declared = Payload.ofFile(file);
        Files.delete(file);
        try (Environment env = new VercelProvider().open(OpenContext.of(FIXTURE.settings()))) {
            sh(env, "mkdir -p /tmp/gone && printf old > /tmp/gone/f");
            BackendException e = assertThrows(BackendException.class,
                    () -> env.files().write("/tmp/gone/f", declared, WriteOptions.defaults()));
            assertTrue(e.getMessage().startsWith("cannot read the content to write: ") && e.getMessage().contains("gone.bin"),
                    e.getMessage());
            assertEquals("old", new String(env.files().read("/tmp/gone/f").readAllBytes(), StandardCharsets.UTF_8));
            assertNothingLeft(env, "/tmp/gone");
        }
    }

    /**
     * Content that fails is the caller's problem, not Vercel's: each such write is sent once, not
     * retried, and many of them in a row do not open the circuit breaker, so the next good write
     * goes through.
     */
    @Test
    void failingContentIsNeitherRetriedNorCountedAgainstVercel(@TempDir Path local) throws Exception {
        Path file = local.resolve("shrinks.bin");
        Files.write(file, new byte[1000]);
        Payload declared = Payload.ofFile(file);
        Files.write(file, new byte[10]);
        Settings twoFailuresOpen = FIXTURE.settings().with(Map.of("airlock.vercel.breaker.failures", "2",
                "airlock.vercel.retry.max-attempts", "3"));
        try (Environment env = new VercelProvider().open(OpenContext.of(twoFailuresOpen))) {
            int before = FIXTURE.journal.entries("fs-write").size();
            for (int i = 0; i < 3; i++) {
                assertThrows(BackendException.class, () -> env.files().write("/tmp/nobreak/f", declared, WriteOptions.defaults()));
            }
            assertEquals(3, FIXTURE.journal.entries("fs-write").size() - before, "each failing write was sent once");
            env.files().write("/tmp/nobreak/f", "fine".getBytes(StandardCharsets.UTF_8));
            assertEquals("fine", new String(env.files().read("/tmp/nobreak/f").readAllBytes(), StandardCharsets.UTF_8));
            assertNothingLeft(env, "/tmp/nobreak");
        }
    }

    /**
     * The place is judged while the upload runs: a place that is refused (no parent, and none to
     * be made; a directory at the target) fails the write as before, and the upload that was
     * already on its way is removed from the staging dir.
     */
    @Test
    void aRefusedPlaceFailsTheWriteAndLeavesNoUploadBehind() {
        byte[] data = content();
        try (Environment env = new VercelProvider().open(OpenContext.of(FIXTURE.settings()))) {
            int before = FIXTURE.emulator.writes().size();
            assertThrows(dev.airlock.NoSuchPathException.class,
                    () -> env.files().write("/tmp/refused/none/f", Payload.of(data), WriteOptions.defaults().withCreateParents(false)));
            sh(env, "mkdir -p /tmp/refused/dir/f");
            BackendException e = assertThrows(BackendException.class, () -> env.files().write("/tmp/refused/dir/f", data));
            assertTrue(e.getMessage().contains("is a directory"), e.getMessage());
            assertEquals(2, stagedSince(env, before).size(), "both uploads went on while the place was judged");
            assertNothingLeft(env, "/tmp/refused/dir");
            assertEquals("", sh(env, "ls -A /tmp/refused/dir/f").stdout().text(), "nothing landed in the directory");
        }
    }

    /**
     * A symlink on the way to the target is the shell write's to judge: it takes the write, which
     * lands byte-exact where the link points, and the staged upload is removed.
     */
    @Test
    void aSymlinkedTargetIsWrittenByTheShellWriteAndLeavesNoUploadBehind() throws Exception {
        byte[] data = content();
        try (Environment env = new VercelProvider().open(OpenContext.of(FIXTURE.settings()))) {
            sh(env, "mkdir -p /tmp/linked/real && ln -s real /tmp/linked/via");
            env.files().write("/tmp/linked/via/f.bin", data);
            assertArrayEquals(data, env.files().read("/tmp/linked/real/f.bin").readAllBytes());
            assertNothingLeft(env, "/tmp/linked/real");
        }
    }

    /**
     * The target's directory goes away while the upload is held up (removed behind the API's back
     * once the upload arrived): the one command that places the upload finds no parent (none is
     * made: not asked to), the write fails saying so, and the upload does not stay in the staging dir.
     */
    @Test
    void anUploadWhosePlaceWentAwayGoesWithTheFailedWrite() throws Exception {
        try (VercelEmulatorFixture slow = new VercelEmulatorFixture(FaultPlan.parse("fs-write:delay=2s@always", 1));
             Environment env = new VercelProvider().open(OpenContext.of(slow.settings()))) {
            // Made by a command, so it is the sandbox user's, whose write makes its temp file there.
            assertEquals(0, sh(env, "mkdir -p /tmp/moved").exitCode());
            Path dir = slow.emulator.hostPath(env.id(), "/tmp/moved");
            long uploads = slow.faults.callCounts().getOrDefault("fs-write", 0L);
            CompletableFuture<Void> write = CompletableFuture.runAsync(() -> env.files().write("/tmp/moved/f", Payload.of(new byte[1024]),
                    WriteOptions.defaults().withCreateParents(false)));
            // The write's upload arrived (counted at arrival) and is held up: now the directory goes.
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (slow.faults.callCounts().getOrDefault("fs-write", 0L) <= uploads) {
                assertTrue(System.nanoTime() < until && !write.isDone(), "the write's upload never arrived");
                Thread.sleep(10);
            }
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
            ExecutionException e = assertThrows(ExecutionException.class, () -> write.get(60, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof dev.airlock.NoSuchPathException, e.getCause().toString());
            Path staging = slow.emulator.hostPath(env.id(), env.target().stagingDir());
            try (var left = Files.list(staging)) {
                assertEquals(List.of(), left.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(VercelFiles.STAGED_PREFIX)).toList(),
                        "no upload is left in the staging dir");
            }
        }
    }

    /**
     * Issue 31 door 4 on Vercel's native files: a FIFO (or a tree holding one) is never deleted, and
     * a write never replaces it (the upload's rename step refuses); the FIFO stays a FIFO.
     */
    @Test
    void aFifoIsNeitherDeletedNorReplaced() throws Exception {
        try (Environment env = new VercelProvider().open(OpenContext.of(FIXTURE.settings()))) {
            assertEquals(0, sh(env, "rm -rf /tmp/special && mkdir -p /tmp/special/tree && mkfifo /tmp/special/tree/fifo").exitCode());
            dev.airlock.DeniedException e = assertThrows(dev.airlock.DeniedException.class,
                    () -> env.files().delete("/tmp/special/tree/fifo"));
            assertTrue(e.getMessage().startsWith("delete /tmp/special/tree/fifo refused: it is a FIFO,"), e.getMessage());
            e = assertThrows(dev.airlock.DeniedException.class, () -> env.files().delete("/tmp/special/tree"));
            assertTrue(e.getMessage().startsWith("delete /tmp/special/tree/fifo refused: it is a FIFO,"), e.getMessage());
            dev.airlock.AirlockException w = assertThrows(dev.airlock.AirlockException.class,
                    () -> env.files().write("/tmp/special/tree/fifo", "X".getBytes(StandardCharsets.UTF_8)));
            assertTrue(w.getMessage().contains("/tmp/special/tree/fifo refused: it is a FIFO,"), w.getMessage());
            assertEquals("fifo\n", sh(env, "[ -p /tmp/special/tree/fifo ] && echo fifo").stdout().text(), "the FIFO was replaced or removed");
            assertNothingLeft(env, "/tmp/special/tree");
        }
    }
}
