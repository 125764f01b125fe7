package dev.airlock.containment;

import dev.airlock.settings.Settings;

import java.util.Collection;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Which environment variables are secrets that no child may inherit: the backends' tokens,
 * {@code AIRLOCK_*} secrets, and any listed in {@code airlock.env.strip}.
 */
public final class SecretVariables {
    public static final String STRIP_KEY = "airlock.env.strip";

    private static final Set<String> KNOWN = Set.of(
            "MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET", "DAYTONA_API_KEY", "VERCEL_TOKEN", "VERCEL_OIDC_TOKEN",
            "AIRLOCK_SSH_PASSPHRASE", "DOCKER_AUTH_CONFIG", "AIRLOCK_AUDIT_FILE_TOKEN");
    private static final Pattern AIRLOCK_SECRET = Pattern.compile(
            "AIRLOCK_.*(TOKEN|SECRET|PASSWORD|PASSPHRASE|API_KEY|APIKEY|CREDENTIALS)(_[A-Z0-9]+)?");

    private final Set<String> extra;

    private SecretVariables(Set<String> extra) {
        this.extra = extra;
    }

    public static SecretVariables from(Settings settings) {
        Set<String> extra = new TreeSet<>();
        for (String v : settings.getList(STRIP_KEY)) {
            extra.add(v.trim());
        }
        return new SecretVariables(extra);
    }

    public boolean isSecret(String name) {
        String upper = name.toUpperCase(Locale.ROOT);
        return KNOWN.contains(upper) || AIRLOCK_SECRET.matcher(upper).matches() || extra.contains(name);
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
}
