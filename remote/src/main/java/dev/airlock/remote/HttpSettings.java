package dev.airlock.remote;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * An HTTP client's settings, read from {@code PREFIX.connect-timeout} (default 10s),
 * {@code PREFIX.read-timeout} (60s), {@code PREFIX.call-timeout} (0 = none: a streamed log read
 * may last as long as its command; bound such calls per request) and {@code PREFIX.ca-file}
 * (PEM certificates; when set, only they are trusted), and the proxy from the usual variables.
 */
public record HttpSettings(Duration connectTimeout, Duration readTimeout, Duration callTimeout,
                           Optional<Path> caFile, EnvProxySelector proxy) {

    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(60);

    public HttpSettings {
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(readTimeout, "readTimeout");
        Objects.requireNonNull(callTimeout, "callTimeout");
        Objects.requireNonNull(caFile, "caFile");
        Objects.requireNonNull(proxy, "proxy");
    }

    /** Defaults, no custom CA, no proxy. */
    public static HttpSettings defaults() {
        return new HttpSettings(DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT, Duration.ZERO, Optional.empty(),
                EnvProxySelector.from(Map.of()));
    }

    /** From settings under {@code prefix} ({@code airlock.daytona}) and proxy variables in {@code env}. */
    public static HttpSettings from(Settings s, String prefix, Map<String, String> env) {
        Optional<Path> ca = s.get(prefix + ".ca-file").map(String::trim).filter(v -> !v.isEmpty()).map(Path::of);
        if (ca.isPresent() && !Files.isReadable(ca.get())) {
            throw new ConfigurationException(prefix + ".ca-file " + ca.get()
                    + " is not a readable file; point it at a PEM file of the CA certificates to trust");
        }
        return new HttpSettings(
                positive(s, prefix + ".connect-timeout", DEFAULT_CONNECT_TIMEOUT),
                positive(s, prefix + ".read-timeout", DEFAULT_READ_TIMEOUT),
                positive(s, prefix + ".call-timeout", Duration.ZERO),
                ca, EnvProxySelector.from(env));
    }

    private static Duration positive(Settings s, String key, Duration dflt) {
        Duration d = s.getDuration(key, dflt);
        if (d.isNegative()) {
            throw new ConfigurationException(key + " must not be negative, not " + d);
        }
        return d;
    }
}
