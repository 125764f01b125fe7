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
            "AIRLOCK_SSH_PASSPHRASE", "AIRLOCK_TEST_TOKEN", "AIRLOCK_X_TOKEN_2", "TOKEN", "PASSWORD", "MY_PRIVATE_KEY",
            "PGPASSWORD", "MYSQL_PWD", "REDISCLI_AUTH", "DOCKER_AUTH_CONFIG", "GITHUB_PAT", "SMTP_PASS", "DB_PASS",
            // issue 31 door 7: the names that still reached commands
            "SENTRY_DSN", "NPM_CONFIG__AUTH", "STRIPE_KEY", "CI_JOB_JWT", "CI_JOB_JWT_V2", "SECRET_KEY_BASE", "DB_PWD",
            "SSH_AUTH_SOCK", "npm_config__auth", "DATABASE_DSN", "SIGNING_KEY", "GPG_KEY", "MASTER_KEY"})
    void secretLookingNamesAreStrippedByDefault(String name) {
        assertTrue(DEFAULTS.isSecret(name), name);
    }

    @ParameterizedTest
    @ValueSource(strings = {"PATH", "HOME", "TMPDIR", "AIRLOCK_REAL_HOME", "AIRLOCK_HOME", "TOKENIZERS_PARALLELISM",
            "LANG", "KUBERNETES_SERVICE_HOST", "AWS_REGION", "SECRETS_DIR_UNRELATED_PATH", "DOCKER_HOST",
            "PWD", "OLDPWD", "NO_BYPASS", "XDG_DATA_DIRS", "PATCH_LEVEL",
            // the short suffixes count only after an underscore, and public keys are no secrets
            "TERM", "KEYBOARD", "MONKEY", "KEY", "AUTH", "DSN", "JWT", "KEYTIMEOUT", "AUTHOR", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
            "PRIMARY_KEYS", "KEY_FILE_DIR", "SSH_CONNECTION", "SSH_TTY", "XDG_SESSION_TYPE", "XDG_RUNTIME_DIR", "DISPLAY",
            "JAVA_HOME", "STRIPE_PUBLISHABLE_KEY", "VAPID_PUBLIC_KEY", "PUBLIC_KEY", "DSN_FILE", "AUTH_METHOD",
            "PWD_HISTORY_DIR", "LC_ALL", "EDITOR", "SHELL", "USER", "LOGNAME"})
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
    /** Issue 31 door 7: a URL with a password in the value is a secret whatever the variable's name; other URLs pass. */
    @ParameterizedTest(name = "{0}={1} -> {2}")
    @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
        "DATABASE_URL       | postgres://app:s3cret@db:5432/app                      | true",
        "REDIS_URL          | redis://:pw@cache:6379/0                               | true",
        "AMQP_URL           | amqp://guest:guest@localhost//                         | true",
        "MONGO              | mongodb+srv://u:p%40ss@cluster0.example.net/?retry=1   | true",
        "CLONE              | git clone https://x-access-token:ghp_x@github.com/o/r  | true",
        "UPSTREAMS          | http://a.example http://u:pw@b.example                 | true",
        "DATABASE_URL       | postgres://db:5432/app                                 | false",
        "DATABASE_URL       | postgres://app:@db/app                                 | false",
        "HTTP_PROXY         | http://proxy.corp:3128                                 | false",
        "NPM_CONFIG_REGISTRY| https://registry.example.com:443/@scope/               | false",
        "GIT_URL            | ssh://git@github.com:22/org/repo.git                   | false",
        "HOMEPAGE           | https://user@example.com/                              | false",
        "PATH               | /usr/local/bin:/usr/bin:/bin                           | false",
        "NOTE               | mail me: a@b.c                                         | false",
    })
    void aUrlWithAPasswordInTheValueIsStripped(String name, String value, boolean secret) {
        assertEquals(secret, DEFAULTS.isSecret(name, value), name + "=" + value);
        assertEquals(secret ? Set.of(name) : Set.of(), DEFAULTS.among(java.util.Map.of(name, value)));
    }

    @Test
    void aUrlWithAPasswordIsPassedOnPurposeAndStripWins() {
        SecretVariables s = SecretVariables.from(Settings.of(SecretVariables.PASS_KEY, "DATABASE_URL,SSH_AUTH_SOCK,BOTH",
                SecretVariables.STRIP_KEY, "BOTH"), Set.of());
        assertFalse(s.isSecret("DATABASE_URL", "postgres://app:pw@db/app"), "passed on purpose");
        assertFalse(s.isSecret("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"), "passed on purpose");
        assertTrue(s.isSecret("OTHER_URL", "postgres://app:pw@db/app"), "only the named one is passed");
        assertTrue(s.isSecret("BOTH", "plain"), "strip wins over pass");
        assertTrue(s.isSecret("GITHUB_TOKEN", null), "a name rule needs no value");
        assertFalse(s.isSecret("PLAIN", null));
    }
}
