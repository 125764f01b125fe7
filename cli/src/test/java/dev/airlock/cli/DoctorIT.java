package dev.airlock.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static dev.airlock.cli.Airlock.airlock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code airlock doctor}: the exits table, its JSON, and exit 5 when something leaks. */
class DoctorIT {

    @Test
    void aHostInAutoModeLeaksAndExits5(@TempDir Path dir) throws IOException {
        Path home = Files.createDirectories(dir.resolve("home"));

        Airlock.Result r = airlock("doctor").env("HOME", home.toString()).run();

        assertEquals(5, r.exit(), r::toString);
        assertTrue(r.out().contains("container: no (airlock.container=no); home mode: auto; profile: none"), r::out);
        assertTrue(r.out().matches("(?s).*\\nHOME +LEAKS +HOME is the real home " + home + " .*"), r::out);
        assertTrue(r.out().contains("exits leak (exit status 5)"), r::out);
        assertEquals("", r.err());
    }

    /**
     * Under bubblewrap (installed here, or hidden by .ci/without-services) the eval profile leaks
     * nothing and exits 0; without it, it contains by environment what it can and, since a command
     * could still reach what a sandbox would hide, says LEAKS and exits 5.
     */
    @Test
    void theEvalProfileExits0UnderBubblewrapAnd5WithoutIt(@TempDir Path dir) throws IOException {
        Path home = Files.createDirectories(dir.resolve("home"));
        Path project = Files.createDirectories(dir.resolve("project"));
        Path run = dir.resolve("run");
        boolean bwrap = Files.isExecutable(Path.of("/usr/bin/bwrap"));

        Airlock.Result r = airlock("--set", "airlock.profile=eval", "--set", "airlock.run-dir=" + run, "doctor", "--json")
                .env("HOME", home.toString()).in(project).run();

        assertEquals(bwrap ? 0 : 5, r.exit(), r::toString);
        String json = r.out();
        assertTrue(json.startsWith("{\"backend\":\"local\","), json);
        assertTrue(json.endsWith("}\n"), json);
        assertTrue(json.contains("\"profile\":\"eval\",\"runDir\":\"" + run + "\""), json);
        assertTrue(json.contains(bwrap ? "\"leaks\":false,\"exitCode\":0" : "\"leaks\":true,\"exitCode\":5"), json);
        assertEquals(!bwrap, json.contains("\"code\":\"leaks\""), json);
        String verdict = bwrap ? "contained (enforced)" : "steered (not enforced)";
        assertTrue(json.contains("{\"exit\":\"crontab\",\"verdict\":\"" + verdict + "\""), json);
        assertTrue(json.contains("{\"exit\":\"HOME\",\"verdict\":\"" + verdict + "\""), json);
        assertFalse(Files.exists(home.resolve(".airlock")), "doctor in the eval profile leaves the real home alone");
    }

    @Test
    void aBadProfileIsAUsageError(@TempDir Path dir) {
        Airlock.Result r = airlock("--set", "airlock.profile=eval", "doctor").env("HOME", dir.toString()).run();

        assertEquals(2, r.exit(), r::toString);
        assertTrue(r.err().startsWith("airlock: usage: airlock.profile=eval needs airlock.run-dir=DIR"), r::err);
    }
}
