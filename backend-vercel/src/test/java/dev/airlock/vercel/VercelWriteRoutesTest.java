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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How {@code files().write} goes up to Vercel: content that can be read again (bytes, a file) as
 * one upload streamed from its source, a stream larger than a part in parts joined on the target;
 * byte-exact either way, and a file that no longer has the length it declared fails the write
 * with the old file kept and nothing left beside it.
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
            env.files().write("/tmp/one/bytes.bin", data);
            env.files().write("/tmp/one/file.bin", Payload.ofFile(file), WriteOptions.defaults());
            assertArrayEquals(data, env.files().read("/tmp/one/bytes.bin").readAllBytes());
            assertArrayEquals(data, env.files().read("/tmp/one/file.bin").readAllBytes());
            assertEquals(List.of((long) SIZE, (long) SIZE), uploadsFor("/tmp/one").stream().map(VercelEmulator.StagedWrite::size).toList(),
                    "one upload of the whole file each");
            assertEquals("", sh(env, "ls -a /tmp/one | grep airlock-write || true").stdout().text(), "no temp file is left");
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
            assertEquals("", sh(env, "ls -a /tmp/short | grep airlock-write || true").stdout().text(), "no temp file is left");
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
            assertEquals("", sh(env, "ls -a /tmp/gone | grep airlock-write || true").stdout().text(), "no temp file is left");
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
            assertEquals("", sh(env, "ls -a /tmp/nobreak | grep airlock-write || true").stdout().text(), "no temp file is left");
        }
    }
}
