package dev.airlock.settings;

import dev.airlock.ConfigurationException;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Finds {@code airlock.*} keys nobody declared (a misspelling such as {@code airlock.outptu.max-bytes}
 * would otherwise be ignored in silence) and names the closest known key. Keys from
 * {@code AIRLOCK_*} variables are not checked: their spelling cannot be told from other programs'
 * variables that share the prefix.
 */
public final class SettingsCheck {
    private SettingsCheck() {
    }

    /**
     * One line per unknown key in the config file, system properties and explicit values. With
     * {@value CoreSettingKeys#STRICT}{@code =true} they are a {@link ConfigurationException} instead.
     */
    public static List<String> unknownKeys(Settings settings, Collection<SettingKey> known) {
        List<String> out = new ArrayList<>();
        for (String key : settings.definedKeys()) {
            if (known.stream().noneMatch(k -> k.matches(key))) {
                out.add("unknown setting " + key + closest(key, known).map(c -> "; did you mean " + c + "?").orElse("")
                        + " (from " + settings.originInWords(key).orElse("the settings") + ")");
            }
        }
        if (!out.isEmpty() && settings.getBoolean(CoreSettingKeys.STRICT, false)) {
            throw new ConfigurationException(String.join("; ", out) + " (" + CoreSettingKeys.STRICT + "=true)");
        }
        return out;
    }

    /** The known key nearest to {@code key} by edit distance, if it is near enough to be a typo. */
    static Optional<String> closest(String key, Collection<SettingKey> known) {
        return closestName(key, known.stream().map(SettingKey::key).toList());
    }

    /**
     * The name nearest to {@code given} by edit distance, ignoring case, if it is near enough to be
     * a typo of it: for did-you-mean lines about keys, backends and commands alike.
     */
    public static Optional<String> closestName(String given, Collection<String> names) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : names) {
            int d = distance(given.toLowerCase(Locale.ROOT), candidate.toLowerCase(Locale.ROOT));
            if (d < bestDistance) {
                bestDistance = d;
                best = candidate;
            }
        }
        return best != null && bestDistance <= Math.max(3, given.length() / 4) ? Optional.of(best) : Optional.empty();
    }

    /** Levenshtein distance. */
    private static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                int del = prev[j] + 1;
                int ins = cur[j - 1] + 1;
                cur[j] = Math.min(sub, Math.min(del, ins));
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}
