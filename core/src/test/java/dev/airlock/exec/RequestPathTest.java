package dev.airlock.exec;

import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.StdinMode;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A request's own {@code PATH}, even one without the shell or any helper: the launcher still finds
 * its shell and helpers (staging removal, the staged script's shell), and the command runs with
 * the PATH it asked for. The commands here use builtins only, as such a PATH leaves nothing else.
 */
class RequestPathTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();


    @ParameterizedTest(name = "native env {0}, staged script {1}")
    @CsvSource({"true, false", "true, true", "false, false", "false, true"})
    void aRequestPathWithoutTheShellStillRunsTheCommand(boolean nativeEnv, boolean long_) {
        HostBackend b = new HostBackend(HostBackend.settings(dir), StdinMode.PIPE, nativeEnv, List.of());
        opened.add(b);
        // Longer than the backend's argv limit: the command goes up as a staged script.
        String padding = long_ ? "# " + "x".repeat(120 * 1024) + "\n" : "";
        ExecResult r = b.exec(ExecRequest.builder(padding + "echo hi; printf '%s' \"$PATH\"")
                .env(java.util.Map.of("PATH", "/nonexistent")).build());
        assertEquals(0, r.exitCode(), "stderr: " + r.stderr().text());
        assertEquals("hi\n/nonexistent", r.stdout().text());
    }
}
