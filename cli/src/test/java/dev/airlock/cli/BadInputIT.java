package dev.airlock.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static dev.airlock.cli.Airlock.airlock;
import static dev.airlock.cli.Airlock.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Input a careless or hostile caller gives: closed stdin, FIFOs and devices, a secret for --env. */
class BadInputIT {

    /** With stdin closed the JVM's own lib/modules sat on descriptor 0 and became the file (128 MB). */
    @Test
    void aClosedStdinWritesAnEmptyFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("out.bin");

        Airlock.Result r = airlock("write", file.toString()).stdinClosed().run();

        assertEquals(0, r.exit(), r::toString);
        assertEquals(0, Files.size(file), "a closed stdin is empty, never another file");
    }

    /** ... and sent it as a command's stdin, after which the JVM crashed. */
    @Test
    void aClosedStdinIsAnEmptyStdinForExec() {
        Airlock.Result r = airlock("exec", "wc -c").stdinClosed().run();

        assertEquals(0, r.exit(), r::toString);
        assertEquals("0", r.out().trim());
        assertEquals("", r.err());
    }

    @Test
    void readRefusesAFifoAndADeviceInOneLine(@TempDir Path dir) throws Exception {
        Path fifo = dir.resolve("fifo");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        for (String path : List.of(fifo.toString(), "/dev/zero")) {
            Airlock.Result r = airlock("read", path).run();

            assertEquals(2, r.exit(), r::toString);
            assertEquals("airlock: usage: " + path + " is not a regular file (a FIFO, device or socket), which may never end;"
                    + " read refuses it unless you pass --any-file\n", r.err());
            assertEquals(0, r.stdout().length);
        }
        Path link = dir.resolve("zero-link");
        Files.createSymbolicLink(link, Path.of("/dev/zero"));
        Airlock.Result viaLink = airlock("read", link.toString()).run();
        assertEquals(2, viaLink.exit(), viaLink::toString);
        Path plain = Files.write(dir.resolve("plain"), bytes("ok"));
        Path plainLink = Files.createSymbolicLink(dir.resolve("plain-link"), plain);
        Airlock.Result ok = airlock("read", plainLink.toString()).run();
        assertEquals("ok", ok.out(), ok::toString);
    }

    /** --env K takes the value from our environment, so a secret never sits in our argv. */
    @Test
    void envWithoutAValueTakesItFromTheCallersEnvironment() {
        Airlock.Result r = airlock("exec", "--env", "IT_PASSED_VALUE", "--", "printf %s \"$IT_PASSED_VALUE\"")
                .env("IT_PASSED_VALUE", "s3cret value").run();
        assertEquals(0, r.exit(), r::toString);
        assertEquals("s3cret value", r.out());

        Airlock.Result unset = airlock("exec", "--env", "IT_UNSET_VALUE", "--", "true").run();
        assertEquals(125, unset.exit(), unset::toString);
        assertEquals("airlock: usage: --env IT_UNSET_VALUE: IT_UNSET_VALUE is not set\n", unset.err());
        assertTrue(unset.out().isEmpty());
    }
}
