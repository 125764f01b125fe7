package dev.airlock.settings;

import java.util.Objects;

/**
 * One documented setting: what a provider (or the core) declares it reads. A key ending in
 * {@code .NAME} stands for a family of map or list entries ({@code airlock.docker.env.NAME}).
 *
 * @param key          the key, e.g. {@code airlock.docker.image}
 * @param type         what the value is, as the settings tables in docs/ say it ({@code duration}, {@code path}...)
 * @param defaultValue the default in words, empty when there is none
 * @param secret       whether the value is a credential ({@code --set} refuses it, it prints redacted)
 * @param meaning      what it does, in one line
 */
public record SettingKey(String key, String type, String defaultValue, boolean secret, String meaning) {
    /** The suffix that marks a family of keys. */
    public static final String NAME = ".NAME";

    public SettingKey {
        Objects.requireNonNull(key, "key");
        if (!key.startsWith("airlock.")) {
            throw new IllegalArgumentException("a setting key starts with airlock.: " + key);
        }
    }

    /** A plain (not secret) key. */
    public static SettingKey of(String key, String type, String defaultValue, String meaning) {
        return new SettingKey(key, type, defaultValue, false, meaning);
    }

    /** A secret key. */
    public static SettingKey secret(String key, String type, String meaning) {
        return new SettingKey(key, type, "", true, meaning);
    }

    /** Whether {@code candidate} is this key, or one of its family for a {@code .NAME} key (or a list's {@code key.N}). */
    public boolean matches(String candidate) {
        if (key.endsWith(NAME)) {
            String prefix = key.substring(0, key.length() - NAME.length() + 1);
            return candidate.startsWith(prefix) && candidate.length() > prefix.length();
        }
        return candidate.equals(key) || (type.startsWith("list") && candidate.startsWith(key + "."));
    }
}
