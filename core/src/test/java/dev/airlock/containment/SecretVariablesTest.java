package dev.airlock.containment;

import dev.airlock.settings.Settings;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which of the JVM's variables no child inherits. */
class SecretVariablesTest {
    private static final SecretVariables DEFAULTS = SecretVariables.from(Settings.empty(), Set.of());

    @ParameterizedTest
    @ValueSource(strings = {"GITHUB_TOKEN", "GH_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN", "PGPASSWORD_X_PASSWORD", "DB_PASSWORD", "GPG_PASSPHRASE", "STRIPE_SECRET", "NPM_TOKEN",
            "AZURE_CLIENT_SECRET", "HF_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS", "SENTRY_AUTH_TOKEN", "github_token",
            "AIRLOCK_SSH_PASSPHRASE", "AIRLOCK_TEST_TOKEN", "AIRLOCK_X_TOKEN_2", "TOKEN", "PASSWORD", "MY_PRIVATE_KEY"})
    void secretLookingNamesAreStrippedByDefault(String name) {
        assertTrue(DEFAULTS.isSecret(name), name);
    }

    @ParameterizedTest
    @ValueSource(strings = {"PATH", "HOME", "TMPDIR", "SSH_AUTH_SOCK", "AIRLOCK_REAL_HOME", "AIRLOCK_HOME", "TOKENIZERS_PARALLELISM",
            "LANG", "KUBERNETES_SERVICE_HOST", "AWS_REGION", "SECRETS_DIR_UNRELATED_PATH", "DOCKER_HOST"})
    void ordinaryNamesPass(String name) {
        assertFalse(DEFAULTS.isSecret(name), name);
    }

    @Test
    void aProvidersOwnNamesAreStrippedWhicheverBackendIsInUse() {
        SecretVariables s = SecretVariables.from(Settings.empty(), Set.of("ACME_BLOB", "MODAL_TOKEN_ID"));
        assertTrue(s.isSecret("ACME_BLOB"));
        assertTrue(s.isSecret("MODAL_TOKEN_ID"));
        assertFalse(DEFAULTS.isSecret("ACME_BLOB"), "not a pattern: only the provider makes it secret");
    }

    @Test
    void aNamedVariableIsPassedOnPurposeAndStripWins() {
        SecretVariables s = SecretVariables.from(Settings.of(SecretVariables.PASS_KEY, "GITHUB_TOKEN, ACME_BLOB,BOTH",
                SecretVariables.STRIP_KEY, "PLAIN,BOTH"), Set.of("ACME_BLOB"));
        assertFalse(s.isSecret("GITHUB_TOKEN"), "passed on purpose");
        assertFalse(s.isSecret("ACME_BLOB"), "passed on purpose");
        assertTrue(s.isSecret("OPENAI_API_KEY"), "only the named one is passed");
        assertTrue(s.isSecret("PLAIN"), "stripped on request");
        assertTrue(s.isSecret("BOTH"), "strip wins over pass");
        assertEquals(Set.of("BOTH", "OPENAI_API_KEY", "PLAIN"), s.among(List.of("PATH", "GITHUB_TOKEN", "OPENAI_API_KEY", "PLAIN", "BOTH")));
    }
}
