package dev.airlock.safety;

import dev.airlock.Capabilities;
import dev.airlock.DeniedException;
import dev.airlock.Target;
import dev.airlock.containment.Containment;
import dev.airlock.containment.HomeMode;
import dev.airlock.containment.Profile;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@code airlock.write.safe-roots} limits the agent's writes, not Airlock's own set-up: with the
 * safe roots at the workdir, the eval profile's shims (written through the file API when the
 * environment opens) must still be installable (issue 31: every exec failed with "cannot install
 * the crontab shim ... outside the safe roots").
 */
class SafetySafeRootsTest {
    @TempDir
    Path dir;

    private Safety safety(Path work, Path run) throws IOException {
        Path home = Files.createDirectories(dir.resolve("home"));
        Path priv = Files.createDirectories(dir.resolve("priv"));
        Path airlock = Files.createDirectories(run.resolve("airlock"));
        Files.createDirectories(run.resolve("bin"));
        Target t = new Target("Linux", "host", 1000, "dev", home.toString(), home.toString(), run.resolve("home").toString(),
                "/tmp", priv.toString(), "sh", false, "none");
        Containment c = new Containment(Profile.EVAL, HomeMode.PROFILE, home.toString(), airlock.toString(),
                run.resolve("home").toString(), "eval", Optional.of(run.toString()), Optional.of(run + "/tmp"),
                Optional.of(run + "/bin"), "/usr/bin:/bin", Set.of());
        Settings s = Settings.of(Map.of(Safety.SAFE_ROOTS_KEY, work.toString(), GuardMode.KEY, "on",
                "airlock.home", airlock.toString()));
        return new Safety("local", t, c, s, Capabilities.pipe(), Optional.empty(), SafetySafeRootsTest::sh, (type, subject, fields) -> {
        });
    }

    /** Runs Airlock's resolution scripts on this machine, as a local target would. */
    static byte[] sh(String script) throws IOException {
        Process p = new ProcessBuilder("sh", "-c", script).redirectErrorStream(false).start();
        try (InputStream in = p.getInputStream()) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            in.transferTo(out);
            p.waitFor();
            return out.toByteArray();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    @Test
    void airlocksOwnShimsAreWritableWithSafeRootsAtTheWorkdir() throws IOException {
        Path work = Files.createDirectories(dir.resolve("work"));
        Path run = Files.createDirectories(dir.resolve("run"));
        Safety safety = safety(work, run);
        for (String shim : new String[] {"crontab", "systemctl", "at"}) {
            assertDoesNotThrow(() -> safety.checkWrite(run + "/bin/" + shim, "write"), shim);
        }
    }

    @Test
    void theAgentsWritesStayInsideTheSafeRoots() throws IOException {
        Path work = Files.createDirectories(dir.resolve("work"));
        Path run = Files.createDirectories(dir.resolve("run"));
        Safety safety = safety(work, run);
        assertDoesNotThrow(() -> safety.checkWrite(work + "/a.txt", "write"));
        assertThrows(DeniedException.class, () -> safety.checkWrite(dir + "/elsewhere.txt", "write"));
        assertThrows(DeniedException.class, () -> safety.checkCommand("echo x > " + dir + "/elsewhere.txt",
                Optional.of(work.toString()), Map.of()));
        assertDoesNotThrow(() -> safety.checkCommand("echo x > out.txt", Optional.of(work.toString()), Map.of()));
    }
}
