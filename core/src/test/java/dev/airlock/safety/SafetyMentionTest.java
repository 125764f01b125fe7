package dev.airlock.safety;

import dev.airlock.Capabilities;
import dev.airlock.DeniedException;
import dev.airlock.Target;
import dev.airlock.containment.Containment;
import dev.airlock.containment.HomeMode;
import dev.airlock.containment.Profile;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The guard end to end on this machine's file system (issue 31): a protected path a command the
 * guard cannot read names asks a human (here none is available, so it is refused as needing
 * approval), never a hard deny; a known writer still hard-denies; readers and ordinary commands pass;
 * a link made by an earlier command is followed when a later one names it.
 */
class SafetyMentionTest {
    @TempDir
    Path dir;
    private Path home;
    private Path work;
    private Safety safety;

    @BeforeEach
    void setUp() throws IOException {
        home = Files.createDirectories(dir.resolve("home"));
        Files.createDirectories(home.resolve(".ssh"));
        Files.writeString(home.resolve(".ssh/authorized_keys"), "");
        work = Files.createDirectories(dir.resolve("work"));
        Path priv = Files.createDirectories(dir.resolve("priv"));
        Path airlock = Files.createDirectories(dir.resolve("airlock"));
        Target t = new Target("Linux", "host", 1000, "dev", home.toString(), home.toString(), home.toString(), "/tmp",
                priv.toString(), "sh", false, "none");
        Containment c = new Containment(Profile.NONE, HomeMode.REAL, home.toString(), airlock.toString(), home.toString(),
                "real", Optional.empty(), Optional.empty(), Optional.empty(), "/usr/bin:/bin", Set.of());
        Settings s = Settings.of(Map.of(GuardMode.KEY, "on", "airlock.home", airlock.toString()));
        safety = new Safety("local", t, c, s, Capabilities.pipe(), Optional.empty(), SafetySafeRootsTest::sh,
                (type, subject, fields) -> {
                });
    }

    private void run(String command) {
        safety.checkCommand(command, Optional.of(work.toString()), Map.of());
    }

    @Test
    void aProtectedPathNamedByAnUnknownWriterNeedsApproval() {
        DeniedException e = assertThrows(DeniedException.class, () -> run("shuf -o ~/.ssh/authorized_keys keys.txt"));
        assertTrue(e.getMessage().contains("approval"), e.getMessage());
    }

    @Test
    void aKnownWriterIsStillHardDenied() {
        DeniedException e = assertThrows(DeniedException.class, () -> run("cp keys.txt ~/.ssh/authorized_keys"));
        assertTrue(e.getMessage().contains("protected"), e.getMessage());
    }

    @Test
    void readersAndOrdinaryCommandsPass() {
        assertDoesNotThrow(() -> run("cat ~/.ssh/authorized_keys"));
        assertDoesNotThrow(() -> run("make -j2 all"));
        assertDoesNotThrow(() -> run("gcc -O2 -o " + work + "/app main.c"));
        assertDoesNotThrow(() -> run("python3 -c 'print(1)'"));
    }

    @Test
    void aLinkMadeEarlierIsFollowedWhenAnUnknownWriterNamesIt() throws IOException {
        Files.createSymbolicLink(work.resolve("k"), home.resolve(".ssh/authorized_keys"));
        DeniedException e = assertThrows(DeniedException.class, () -> run("shuf -o " + work + "/k keys.txt"));
        assertTrue(e.getMessage().contains("approval"), e.getMessage());
    }
}
