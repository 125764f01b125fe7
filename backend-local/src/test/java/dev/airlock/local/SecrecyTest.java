package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Payload;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Payloads, env values and secrets never appear in any process's argv while a command runs, and
 * secret variables of the JVM never reach a child. Surefire sets AIRLOCK_TEST_TOKEN for this JVM.
 */
class SecrecyTest {
    private static final String TOKEN_VAR = "AIRLOCK_TEST_TOKEN";

    @Test
    void nothingSecretInAnyArgvWhileCommandsRun() throws Exception {
        for (String mode : List.of("pipe", "payload")) {
            try (Environment env = Environments.open(Settings.of("airlock.container", "no", "airlock.local.stdin-mode", mode))) {
                String payloadMarker = "PAYLOAD-" + mode + "-7f3a9c";
                String envMarker = "ENVVALUE-" + mode + "-51be02";
                Execution e = env.start(ExecRequest.builder("cat > /dev/null; sleep 3301")
                        .env("SOME_VALUE", envMarker)
                        .stdin(Payload.ofUtf8(payloadMarker))
                        .build());
                assertTrue(Procs.eventually(5000, () -> !Procs.withArgv("sleep 3301").isEmpty()));
                assertEquals(List.of(), Procs.withArgv(payloadMarker), "the payload is in an argv");
                assertEquals(List.of(), Procs.withArgv(envMarker), "an env value is in an argv");
                String token = System.getenv(TOKEN_VAR);
                if (token != null) {
                    assertEquals(List.of(), Procs.withArgv(token), "a token is in an argv");
                }
                e.cancel();
                e.await();
            }
        }
    }

    @Test
    void secretVariablesAreStrippedFromChildren() {
        String token = System.getenv(TOKEN_VAR);
        assertTrue(token != null && !token.isEmpty(), "surefire must set " + TOKEN_VAR + " for this test");
        try (Environment env = Environments.open(Settings.of("airlock.container", "no"))) {
            ExecResult r = env.exec(ExecRequest.of("env; cat /proc/$$/environ | tr '\\0' '\\n'"));
            String all = r.stdout().text();
            assertFalse(all.contains(TOKEN_VAR), "the child saw " + TOKEN_VAR);
            assertFalse(all.contains(token));
            assertTrue(all.contains("AIRLOCK_REAL_HOME="), "children get AIRLOCK_REAL_HOME");
        }
    }

    @Test
    void secretLookingAndProviderNamedVariablesNeverReachAChildUnlessPassedOnPurpose() {
        Map<String, String> secrets = new TreeMap<>();
        for (String name : List.of("GITHUB_TOKEN", "OPENAI_API_KEY", SecretNamingProvider.VARIABLE)) {
            String value = System.getenv(name);
            assertTrue(value != null && value.contains("never-in-a-child"), "surefire must set " + name + " for this test");
            secrets.put(name, value);
        }
        String probe = "env; cat /proc/$$/environ | tr '\\0' '\\n'";
        try (Environment env = Environments.open(Settings.of("airlock.container", "no"))) {
            String all = env.exec(ExecRequest.of(probe)).stdout().text();
            secrets.forEach((name, value) -> {
                assertFalse(all.contains(name + "="), "the child saw " + name);
                assertFalse(all.contains(value), "the child saw the value of " + name);
            });
        }
        try (Environment env = Environments.open(Settings.of("airlock.container", "no", "airlock.env.pass", "GITHUB_TOKEN"))) {
            String all = env.exec(ExecRequest.of(probe)).stdout().text();
            assertTrue(all.contains("GITHUB_TOKEN=" + secrets.get("GITHUB_TOKEN")), "airlock.env.pass passes the named variable");
            assertFalse(all.contains("OPENAI_API_KEY="), "and only that one");
        }
    }

    @Test
    void extraSecretNamesCanBeStripped() {
        String probe = "printf '%s' \"${AIRLOCK_TEST_PLAIN-unset}\"";
        try (Environment env = Environments.open(Settings.of("airlock.container", "no"))) {
            assertEquals("visible", new String(env.exec(ExecRequest.of(probe)).stdout().bytes(), StandardCharsets.UTF_8),
                    "surefire must set AIRLOCK_TEST_PLAIN=visible for this test");
        }
        try (Environment env = Environments.open(Settings.of("airlock.container", "no", "airlock.env.strip", "OTHER,AIRLOCK_TEST_PLAIN"))) {
            assertEquals("unset", new String(env.exec(ExecRequest.of(probe)).stdout().bytes(), StandardCharsets.UTF_8));
        }
    }
}
