package dev.airlock.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ./airlock} makes its class-data sharing archive on first use, also when started from the
 * repository's root (the usual {@code ./airlock ...}). Its training runs used {@code cli/target}
 * as their HOME and the caller's directory as their working directory; from the root that
 * directory holds the HOME, which the local backend's bubblewrap refuses as a writable bind, so
 * every training run failed, no archive was ever made, and each start loaded and verified its
 * classes again. Runs a copy of the script and the built jar in a directory of its own.
 */
class LauncherArchiveIT {
    /** A guard against a hang, not a timing assertion. */
    private static final long HANG_GUARD_SECONDS = 180;

    @Test
    void startedFromTheRootTheLauncherMakesItsArchiveAndTheNextStartMapsIt(@TempDir Path root) throws Exception {
        Path target = Files.createDirectories(root.resolve("cli/target"));
        Path script = root.resolve("airlock");
        Files.copy(Airlock.SCRIPT, script);
        script.toFile().setExecutable(true);
        Files.copy(Airlock.JAR, target.resolve("airlock.jar"));

        Result first = run(root, script, Map.of());
        assertEquals(0, first.exit, first.err);
        assertFalse(Files.exists(target.resolve("airlock.jsa.failed")), "the archive's training failed: " + first.err);
        assertTrue(Files.size(target.resolve("airlock.jsa")) > 0, "no archive was made");

        // -Xshare:on makes the JVM refuse to start when it cannot map the archive it is given.
        Result second = run(root, script, Map.of("AIRLOCK_JAVA_OPTS", "-Xshare:on"));
        assertEquals(0, second.exit, "the archive was not mapped: " + second.err);
        assertEquals("mapped\n", second.out, second.err); // stdout alone: a host without bubblewrap warns on stderr
    }

    private record Result(int exit, String out, String err) {
    }

    private static Result run(Path cwd, Path script, Map<String, String> env) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of(script.toString(), "--backend", "local", "--set", "airlock.container=no",
                "exec", "echo mapped"));
        Path err = Files.createTempFile(cwd, "stderr", ".txt");
        ProcessBuilder pb = new ProcessBuilder(argv).directory(cwd.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.environment().keySet().removeIf(k -> k.startsWith("AIRLOCK_"));
        pb.environment().putAll(env);
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(HANG_GUARD_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("./airlock did not end");
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8), Files.readString(err));
    }
}
