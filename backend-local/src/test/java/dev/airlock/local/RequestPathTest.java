package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code airlock exec --env PATH=/nonexistent 'echo hi'}: the local backend passes the request's
 * env natively, so setsid and bubblewrap must not look the shell up along it; the command runs,
 * with the PATH it asked for, short or staged as a script.
 */
class RequestPathTest {

    @ParameterizedTest(name = "isolation {0}, staged script {1}")
    @CsvSource({"none, false", "none, true", "bwrap, false", "bwrap, true"})
    void aRequestPathWithoutTheShellStillRunsTheCommand(String isolation, boolean staged) {
        Assumptions.assumeTrue(isolation.equals("none") || dev.airlock.spi.HostPrograms.onPath("bwrap").isPresent(),
                "bwrap is not on PATH");
        try (Environment env = Environments.open(Settings.of("airlock.container", "no", "airlock.local.isolation", isolation))) {
            // Longer than argv takes: the command goes up as a staged script.
            String padding = staged ? "# " + "x".repeat(300 * 1024) + "\n" : "";
            ExecResult r = env.exec(ExecRequest.builder(padding + "echo hi; printf '%s' \"$PATH\"")
                    .env(Map.of("PATH", "/nonexistent")).build());
            assertEquals(0, r.exitCode(), "stderr: " + r.stderr().text());
            assertEquals("hi\n/nonexistent", r.stdout().text());
        }
    }
}
