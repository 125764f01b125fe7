package dev.airlock.ssh;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class SshSmokeTest {
    @Test
    void runs() throws Exception {
        try (SshdServer server = SshdServer.start(); Environment env = Environments.open(server.settings())) {
            System.out.println(env.target());
            ExecResult r = env.exec(ExecRequest.builder("cat; echo err >&2; exit 3").stdin(new byte[] {0, 1, 2, (byte) 255}).build());
            System.out.println(r.stderr().text());
            assertEquals(3, r.exitCode());
            assertArrayEquals(new byte[] {0, 1, 2, (byte) 255}, r.stdout().bytes());
            assertEquals("err\n", r.stderr().text());
        }
    }
}
