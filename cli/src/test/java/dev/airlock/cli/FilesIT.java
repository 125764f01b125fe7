package dev.airlock.cli;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Random;
import java.util.stream.Stream;

import static dev.airlock.cli.Airlock.airlock;
import static dev.airlock.cli.Airlock.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@code ./airlock write} and {@code read} end to end: the bytes on disk and on stdout are the bytes sent. */
class FilesIT {

    static Stream<Arguments> payloads() {
        byte[] all = new byte[256];
        for (int i = 0; i < 256; i++) {
            all[i] = (byte) i;
        }
        byte[] nuls = new byte[160 * 1024];
        new Random(7).nextBytes(nuls);
        for (int i = 0; i < nuls.length; i += 3) {
            nuls[i] = 0;
        }
        byte[] random = new byte[1 << 20];
        new Random(11).nextBytes(random);
        return Stream.of(
                Arguments.of("empty", new byte[0]),
                Arguments.of("one byte", new byte[] {'x'}),
                Arguments.of("no trailing newline", bytes("line one\nline two")),
                Arguments.of("all 256 byte values", all),
                Arguments.of("invalid UTF-8", new byte[] {(byte) 0xc3, 0x28, (byte) 0xff, (byte) 0xfe, 0x0a, (byte) 0x80}),
                Arguments.of("only NUL bytes", new byte[4096]),
                Arguments.of("160 KiB with NUL bytes", nuls),
                Arguments.of("1 MiB random", random));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("payloads")
    void writeThenReadRoundTripsTheBytesExactly(String name, byte[] content, @TempDir Path dir) throws Exception {
        Path file = dir.resolve("new parent/sub dir/file.bin");

        Airlock.Result w = airlock("write", file.toString()).stdin(content).run();

        assertEquals(0, w.exit(), w::toString);
        assertEquals("", w.err());
        assertEquals(0, w.stdout().length);
        assertArrayEquals(content, Files.readAllBytes(file), "bytes on disk");

        Airlock.Result r = airlock("read", file.toString()).run();

        assertEquals(0, r.exit(), r::toString);
        assertEquals("", r.err());
        assertArrayEquals(content, r.stdout(), "bytes on stdout");
    }

    @Test
    void writeReplacesAFileAndKeepsItsMode(@TempDir Path dir) throws Exception {
        Path file = Airlock.write(dir.resolve("secret.txt"), bytes("old content that is longer"));
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));

        Airlock.Result w = airlock("write", file.toString()).stdin(bytes("new")).run();

        assertEquals(0, w.exit(), w::toString);
        assertEquals("new", Files.readString(file));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    }

    @Test
    void writeFromAFileOnStdinOfOver64MiBShowsNoProgressWhenStderrIsNotATerminal(@TempDir Path dir) throws Exception {
        byte[] big = new byte[65 << 20];
        new Random(3).nextBytes(big);
        Path source = Airlock.write(dir.resolve("source.bin"), big);
        Path target = dir.resolve("target.bin");

        Airlock.Result w = airlock("write", target.toString()).stdin(source).run();

        assertEquals(0, w.exit(), w::toString);
        assertEquals("", w.err(), "no progress line on a stderr that is not a terminal");
        assertEquals(Files.mismatch(source, target), -1L, "the 65 MiB arrived byte-exact");
    }
}
