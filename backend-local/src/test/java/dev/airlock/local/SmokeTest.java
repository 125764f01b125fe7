package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class SmokeTest {
    @Test
    void runs() throws Exception {
        try (Environment env = Environments.open(Settings.of("airlock.container", "no"))) {
            ExecResult r = env.exec(ExecRequest.builder("cat; echo err >&2; exit 3").stdin(new byte[] {0, 1, 2, (byte) 255}).build());
            assertEquals(3, r.exitCode());
            assertArrayEquals(new byte[] {0, 1, 2, (byte) 255}, r.stdout().bytes());
            assertEquals("err\n", r.stderr().text());
            ExecResult t = env.exec(ExecRequest.builder("sleep 30").timeout(Duration.ofMillis(300)).build());
            assertEquals(124, t.exitCode());
            env.files().write("/tmp/airlock-smoke/x y", new byte[] {0, 10, 13});
            assertArrayEquals(new byte[] {0, 10, 13}, env.files().read("/tmp/airlock-smoke/x y").readAllBytes());
            System.out.println(env.files().list("/tmp/airlock-smoke"));
            System.out.println(env.target());
        }
    }
}
