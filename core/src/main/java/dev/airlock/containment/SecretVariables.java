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
 * {@code *_PASSPHRASE}, {@code AWS_SECRET_ACCESS_KEY}...), the variables every backend on the class
 * path names as its own ({@link EnvironmentProvider#secretVariables()}, whichever backend is in
 * use), and any listed in {@value #STRIP_KEY}; minus those the user passes on purpose with
 * {@value #PASS_KEY}.
 */
public final class SecretVariables {
    public static final String STRIP_KEY = "airlock.env.strip";
    public static final String PASS_KEY = "airlock.env.pass";

    /** Names ending like a credential: the common conventions of CI systems, clouds and SDKs. */
    private static final Pattern LOOKS_SECRET = Pattern.compile(
            "(?:.*_)?(?:TOKEN|SECRET|SECRET_KEY|SECRET_ACCESS_KEY|ACCESS_KEY|API_KEY|APIKEY|PASSWORD|PASSWD|PASSPHRASE"
                    + "|PRIVATE_KEY|CREDENTIAL|CREDENTIALS|AUTH_TOKEN|CLIENT_SECRET)");
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
                || LOOKS_SECRET.matcher(upper).matches() || AIRLOCK_SECRET.matcher(upper).matches();
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
