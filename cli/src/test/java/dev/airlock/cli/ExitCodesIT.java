package dev.airlock.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static dev.airlock.cli.Airlock.airlock;
import static dev.airlock.cli.Airlock.bytes;
import static dev.airlock.cli.ExecIT.assertOneLine;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Exit codes and the one error line of every command but exec (exec's are in {@link ExecIT}). */
class ExitCodesIT {

    @Test
    void readOfAMissingPathExits1NotFound(@TempDir Path dir) {
        Airlock.Result r = airlock("read", dir.resolve("missing").toString()).run();

        assertEquals(1, r.exit(), r::toString);
        assertOneLine(r, "airlock: not found: ");
        assertEquals(0, r.stdout().length);
    }

    @Test
    void aPlainFailureHasNoKindWord(@TempDir Path dir) {
        Airlock.Result r = airlock("read", dir.toString()).run();

        assertEquals(1, r.exit(), r::toString);
        assertOneLine(r, "airlock: ");
        assertTrue(r.err().contains("is a directory"), r::err);
        assertFalse(r.err().startsWith("airlock: error:"), r::err);
    }

    @Test
    void aHardDeniedWriteExits3AndWritesNothing(@TempDir Path dir) throws IOException {
        // A throwaway HOME: its ~/.ssh is a protected credential directory whatever the user says.
        Path home = Files.createDirectories(dir.resolve("home"));

        // Run from a project beside it: bubblewrap refuses a working directory that holds the real home.
        Path project = Files.createDirectories(dir.resolve("project"));
        Airlock.Result r = airlock("write", "~/.ssh/id_ed25519").env("HOME", home.toString()).in(project)
                .stdin(bytes("not a key")).run();

        assertEquals(3, r.exit(), r::toString);
        assertOneLine(r, "airlock: denied: ");
        assertFalse(Files.exists(home.resolve(".ssh/id_ed25519")), "a denied write must leave nothing");
    }

    @Test
    void aDeniedCommandExits125WithTheDeniedPrefix(@TempDir Path dir) throws IOException {
        Path home = Files.createDirectories(dir.resolve("home"));

        Path project = Files.createDirectories(dir.resolve("project"));
        Airlock.Result r = airlock("exec", "mkdir -p ~/.ssh && echo key > ~/.ssh/authorized_keys")
                .env("HOME", home.toString()).in(project).run();

        assertEquals(125, r.exit(), r::toString);
        assertOneLine(r, "airlock: denied: ");
        assertFalse(Files.exists(home.resolve(".ssh/authorized_keys")), "a denied command must not run");
    }

    @Test
    void anUnknownBackendExits2() {
        Airlock.Result r = airlock("--backend", "nope", "read", "/etc/hostname").run();

        assertEquals(2, r.exit(), r::toString);
        assertOneLine(r, "airlock: usage: no backend named 'nope'");
    }

    @Test
    void aSecretKeyInSetIsRefusedWithExit2() {
        Airlock.Result r = airlock("--set", "airlock.daytona.api-key=hunter2", "read", "/etc/hostname").run();

        assertEquals(2, r.exit(), r::toString);
        assertOneLine(r, "airlock: usage: --set refuses the secret key airlock.daytona.api-key");
        assertFalse(r.err().contains("hunter2"), "the secret value must not be echoed");
    }

    @Test
    void usageErrorsExit2() {
        for (List<String> args : List.<List<String>>of(List.of(), List.of("frobnicate"), List.of("read"), List.of("write"),
                List.of("--set", "novalue", "read", "/x"), List.of("--config", "/nonexistent/airlock.properties", "backends"),
                List.of("@notes"))) {
            Airlock.Result r = airlock(args.toArray(String[]::new)).run();
            assertEquals(2, r.exit(), () -> args + ": " + r);
            assertOneLine(r, "airlock: usage: ");
        }
    }

    @Test
    void anAtArgumentBeforeTheCommandIsNotExpanded(@TempDir Path dir) {
        Airlock.write(dir.resolve("notes"), bytes("backends\n"));

        Airlock.Result r = airlock("@notes").in(dir).run();

        assertEquals(2, r.exit(), r::toString);
        assertOneLine(r, "airlock: usage: ");
        assertTrue(r.err().contains("@notes"), r::err);
    }

    @Test
    void backendsListsTheLocalBackendAsAvailable() {
        Airlock.Result r = airlock("backends").run();

        assertEquals(0, r.exit(), r::toString);
        assertTrue(r.out().lines().anyMatch(l -> l.matches("\\* local\\s+available\\s+.+")), r::out);
        assertEquals("", r.err());
    }

    @Test
    void stackTracesOnlyWithDebug(@TempDir Path dir) {
        String missing = dir.resolve("missing").toString();

        Airlock.Result quiet = airlock("read", missing).run();
        Airlock.Result debug = airlock("--debug", "read", missing).run();

        assertEquals(1, quiet.errLines().size(), quiet::err);
        assertEquals(1, debug.exit(), debug::toString);
        assertTrue(debug.errLines().stream().anyMatch(l -> l.startsWith("airlock: not found: ")), debug::err);
        assertTrue(debug.err().contains("[DEBUG]"), () -> "debug logs with --debug: " + debug.err());
        assertTrue(debug.err().contains("\tat dev.airlock."), () -> "a stack trace with --debug: " + debug.err());
    }

    @Test
    void javaOptionsReachTheJvm() {
        // -Dairlock.backend=... is the system-property settings layer: it proves $AIRLOCK_JAVA_OPTS is passed.
        Airlock.Result r = airlock("read", "/etc/hostname").env("AIRLOCK_JAVA_OPTS", "-Xmx64m -Dairlock.backend=viaopts").run();

        assertEquals(2, r.exit(), r::toString);
        assertOneLine(r, "airlock: usage: no backend named 'viaopts'");
    }

    @Test
    void anUnavailableBackendExits4AndExec125(@TempDir Path dir) throws IOException {
        // The local backend needs setsid: a PATH with the script's tools but without setsid.
        Path bin = Files.createDirectories(dir.resolve("bin"));
        for (String tool : List.of("bash", "find", "readlink", "mkdir", "flock")) {
            Path real = which(tool);
            if (real != null) {
                Files.createSymbolicLink(bin.resolve(tool), real);
            }
        }
        String javaHome = System.getProperty("java.home");

        Airlock.Result read = airlock("read", "/etc/hostname").env("PATH", bin.toString()).env("JAVA_HOME", javaHome).run();
        Airlock.Result exec = airlock("exec", "true").env("PATH", bin.toString()).env("JAVA_HOME", javaHome).run();

        assertEquals(4, read.exit(), read::toString);
        assertOneLine(read, "airlock: unavailable: ");
        assertTrue(read.err().contains("setsid"), read::err);
        assertEquals(125, exec.exit(), exec::toString);
        assertOneLine(exec, "airlock: unavailable: ");
    }

    private static Path which(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path p = Path.of(d.isEmpty() ? "." : d, tool);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }
}
