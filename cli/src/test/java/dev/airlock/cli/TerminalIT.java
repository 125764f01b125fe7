package dev.airlock.cli;

import dev.airlock.tck.Services;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

import static dev.airlock.cli.Airlock.airlock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Behaviour that depends on a terminal, checked on a pseudo-terminal made by util-linux {@code script}. */
class TerminalIT {

    @BeforeAll
    static void needsScript() {
        boolean present = Files.isExecutable(Path.of("/usr/bin/script")) || Files.isExecutable(Path.of("/bin/script"));
        Services.require(present, "util-linux `script` is not installed (apt-get install bsdutils); it makes the terminal for these tests");
    }

    @Test
    void aTerminalOnStdinIsNotPassedToTheCommand() {
        // cat on a terminal nobody types into would wait forever; exec gives it no stdin instead.
        Airlock.Result r = airlock("exec", "cat; echo done").onTerminal("").stdinLeftOpen().run();

        assertEquals(0, r.exit(), r::toString);
        assertTrue(r.out().contains("done"), r::out);
    }

    @Test
    void aTransferOver64MiBShowsAProgressLineOnATerminal(@TempDir Path dir) throws Exception {
        byte[] big = new byte[65 << 20];
        new Random(5).nextBytes(big);
        Path source = Airlock.write(dir.resolve("source.bin"), big);
        Path target = dir.resolve("target.bin");

        Airlock.Result r = airlock("write", target.toString()).onTerminal("< '" + source + "'").stdinLeftOpen().run();

        assertEquals(0, r.exit(), r::toString);
        assertTrue(r.out().contains("\rairlock: writing " + target + ": "), () -> "progress line expected: " + r.out());
        assertTrue(r.out().contains(" MiB"), r::out);
        assertEquals(-1L, Files.mismatch(source, target));
    }
}
