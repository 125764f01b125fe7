package dev.airlock.docker;

import dev.airlock.AirlockException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What differs on podman's Docker-compatible API (podman 4.3.1, Debian 12), and what Airlock still
 * promises there. The difference itself is a race (podman loses the output in some runs, not in all),
 * so the tests pin the promise that holds in every run and print how often the difference showed.
 */
@ExtendWith(PodmanFixture.class)
class PodmanDifferencesTest {

    /**
     * Docker reads and drops the stdin a command left unread; podman resets the exec's connection,
     * and the output on its way can be lost (the Docker CLI against podman prints "connection reset
     * by peer" and loses it too). What Airlock returns is then an error or a short output, never
     * bytes that are not the command's: each clean result is a prefix of what the command printed.
     * (A run where podman delivered everything in full is not a failure: the loss depends on timing.
     * CI on 2026-12-01 saw five full outputs out of five once, after many runs with losses.)
     */
    @Test
    void aCommandThatEndsBeforeReadingItsStdinNeverGetsBytesThatAreNotItsOwn() {
        byte[] stdin = new byte[8 << 20];
        new Random(7).nextBytes(stdin);
        byte[] expected = Arrays.copyOf(stdin, 10);
        List<String> outcomes = new ArrayList<>();
        int complete = 0;
        try (Environment env = Environments.open(PodmanFixture.podmanSettings())) {
            for (int i = 0; i < 5; i++) {
                try {
                    ExecResult r = env.exec(ExecRequest.builder("head -c 10").stdin(stdin).build());
                    assertEquals(0, r.exitCode(), r.stderr().text());
                    byte[] out = r.stdout().bytes();
                    assertArrayEquals(Arrays.copyOf(expected, out.length), out, "not a prefix of the command's output");
                    complete += out.length == expected.length ? 1 : 0;
                    outcomes.add(out.length + " bytes");
                } catch (AirlockException e) {
                    outcomes.add("error: " + e.getMessage());
                }
            }
        }
        System.out.printf("podman, command ending before its stdin: %d of 5 outputs in full %s%n", complete, outcomes);
    }
}
