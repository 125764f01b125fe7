package dev.airlock.containment;

import dev.airlock.settings.Settings;
import dev.airlock.spi.EnvironmentProvider;

import java.util.Collection;
import java.util.Iterator;
import java.util.Locale;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Which environment variables are secrets that no child may inherit: every name that looks like a
 * credential ({@code *_TOKEN}, {@code *_SECRET}, {@code *_API_KEY}, {@code *_PASSWORD},
 * {@code *_PASSPHRASE}, {@code *_KEY}, {@code *_PWD}, {@code *_AUTH}, {@code *_DSN}, {@code *_JWT},
 * {@code AWS_SECRET_ACCESS_KEY}...), the agent socket {@code SSH_AUTH_SOCK} (a command holding it
 * signs with the operator's keys), any variable whose value is a URL carrying a password
 * ({@code scheme://user:password@host}), the variables every backend on the class path names as
 * its own ({@link EnvironmentProvider#secretVariables()}, whichever backend is in use), and any
 * listed in {@value #STRIP_KEY}; minus those the user passes on purpose with {@value #PASS_KEY}.
 */
public final class SecretVariables {
    public static final String STRIP_KEY = "airlock.env.strip";
    public static final String PASS_KEY = "airlock.env.pass";

    /**
     * Names ending like a credential: the common conventions of CI systems, clouds and SDKs. The
     * short suffixes ({@code KEY}, {@code PWD}, {@code AUTH}, {@code DSN}, {@code JWT}) count only
     * after an underscore, so {@code PWD}, {@code OLDPWD}, {@code MONKEY} and {@code KEYBOARD} pass.
     */
    private static final Pattern LOOKS_SECRET = Pattern.compile(
            "(?:.*_)?(?:TOKEN|SECRET|SECRET_KEY|SECRET_ACCESS_KEY|ACCESS_KEY|API_KEY|APIKEY|PASSWORD|PASSWD|PASSPHRASE"
                    + "|PRIVATE_KEY|CREDENTIAL|CREDENTIALS|AUTH_TOKEN|CLIENT_SECRET|PASS|PAT)"
                    // Keys, database passwords, auth strings (npm's _auth), Sentry-style DSNs, CI job JWTs (GitLab's _V2 too).
                    + "|.+_(?:KEY|PWD|AUTH|DSN|JWT(?:_V[0-9]+)?)"
                    // The tools' own names that follow no such convention (psql, mysql, redis-cli, docker, Rails, ssh-agent).
                    + "|PGPASSWORD|MYSQL_PWD|REDISCLI_AUTH|DOCKER_AUTH_CONFIG|SECRET_KEY_BASE|SSH_AUTH_SOCK");
    /**
     * A key that is public by design (a publishable Stripe key, a VAPID or JWT verification key):
     * it ends in {@code _KEY} but is no secret, and builds need it.
     */
    private static final Pattern PUBLIC_KEY = Pattern.compile(".*(?:^|_)(?:PUBLIC|PUBLISHABLE)_KEY");
    /**
     * A URL with a password in its user part, anywhere in the value ({@code postgres://app:pw@db/x},
     * also in a list of URLs). The password holds no {@code /}, so a port followed by a path with
     * an {@code @} ({@code https://host:443/@scope}) is not taken for one.
     */
    private static final Pattern URL_WITH_PASSWORD = Pattern.compile("[A-Za-z][A-Za-z0-9+.-]*://[^\\s:/@]*:[^\\s/@]+@");
    /** Airlock's own variables may carry a suffix after the secret word ({@code AIRLOCK_X_TOKEN_2}). */
    private static final Pattern AIRLOCK_SECRET = Pattern.compile(
            "AIRLOCK_.*(TOKEN|SECRET|PASSWORD|PASSPHRASE|API_KEY|APIKEY|CREDENTIALS)(_[A-Z0-9]+)?");

    private final Set<String> providers;
    private final Set<String> extra;
    private final Set<String> pass;

    SecretVariables(Set<String> providers, Set<String> extra, Set<String> pass) {
        this.providers = Set.copyOf(providers);
        this.extra = Set.copyOf(extra);
        this.pass = Set.copyOf(pass);
    }

    /** The rule under these settings, with the secret variables of every backend on Airlock's class path. */
    public static SecretVariables from(Settings settings) {
        return from(settings, ProviderNames.ALL);
    }

    /** The rule under these settings with {@code providerNames} as the backends' own secret variables. */
    public static SecretVariables from(Settings settings, Set<String> providerNames) {
        return new SecretVariables(providerNames, trimmed(settings, STRIP_KEY), trimmed(settings, PASS_KEY));
    }

    private static Set<String> trimmed(Settings settings, String key) {
        Set<String> out = new TreeSet<>();
        for (String v : settings.getList(key)) {
            out.add(v.trim());
        }
        return out;
    }

    /** Whether a child must not inherit the variable {@code name}. */
    public boolean isSecret(String name) {
        if (extra.contains(name)) {
            return true; // stripping on purpose wins over passing on purpose
        }
        if (pass.contains(name)) {
            return false;
        }
        String upper = name.toUpperCase(Locale.ROOT);
        return providers.contains(name) || providers.contains(upper)
                || (LOOKS_SECRET.matcher(upper).matches() && !PUBLIC_KEY.matcher(upper).matches())
                || AIRLOCK_SECRET.matcher(upper).matches();
    }

    /** Whether a child must not inherit {@code name} set to {@code value}: by its name, or a URL with a password in the value. */
    public boolean isSecret(String name, String value) {
        if (extra.contains(name) || isSecret(name)) {
            return true;
        }
        return !pass.contains(name) && value != null && URL_WITH_PASSWORD.matcher(value).find();
    }

    /** The secret variables among {@code env} (names and values), by name and by value. */
    public Set<String> among(java.util.Map<String, String> env) {
        Set<String> out = new TreeSet<>();
        env.forEach((n, v) -> {
            if (isSecret(n, v)) {
                out.add(n);
            }
        });
        return out;
    }

    /** The secret names among {@code names}. */
    public Set<String> among(Collection<String> names) {
        Set<String> out = new TreeSet<>();
        for (String n : names) {
            if (isSecret(n)) {
                out.add(n);
            }
        }
        return out;
    }

    /** The union of every discovered provider's secret variables, read once. */
    private static final class ProviderNames {
        static final Set<String> ALL = load();

        private static Set<String> load() {
            Set<String> out = new TreeSet<>();
            Iterator<EnvironmentProvider> it = ServiceLoader.load(EnvironmentProvider.class,
                    SecretVariables.class.getClassLoader()).iterator();
            while (true) {
                try {
                    if (!it.hasNext()) {
                        break;
                    }
                    out.addAll(it.next().secretVariables());
                } catch (ServiceConfigurationError e) {
                    // A broken provider jar is reported when a backend is chosen; the patterns still apply.
                }
            }
            return Set.copyOf(out);
        }
    }
}
