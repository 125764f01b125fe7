package dev.airlock.remote;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Secret;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.SocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The proxy from the usual variables: {@code HTTPS_PROXY} / {@code https_proxy} for https,
 * {@code HTTP_PROXY} / {@code http_proxy} for http, {@code NO_PROXY} / {@code no_proxy} for
 * exceptions ({@code *}, host names matching subdomains too, leading dots allowed). Loopback
 * always goes direct: an emulator on 127.0.0.1 is never reached through a corporate proxy.
 * Credentials in the proxy URL are kept as {@link Secret}s and never printed.
 */
public final class EnvProxySelector extends ProxySelector {
    /** A proxy and its credentials (user and password, both secret-safe). */
    public record Endpoint(String host, int port, Optional<String> user, Optional<Secret> password) {
        @Override
        public String toString() {
            return host + ":" + port + (user.isPresent() ? " (with credentials)" : "");
        }
    }

    private final Optional<Endpoint> https;
    private final Optional<Endpoint> http;
    private final List<String> noProxy;

    private EnvProxySelector(Optional<Endpoint> https, Optional<Endpoint> http, List<String> noProxy) {
        this.https = https;
        this.http = http;
        this.noProxy = List.copyOf(noProxy);
    }

    public static EnvProxySelector from(Map<String, String> env) {
        Optional<Endpoint> https = parse(first(env, "HTTPS_PROXY", "https_proxy"), "HTTPS_PROXY");
        Optional<Endpoint> http = parse(first(env, "HTTP_PROXY", "http_proxy"), "HTTP_PROXY");
        List<String> no = new ArrayList<>();
        for (String s : first(env, "NO_PROXY", "no_proxy").split(",")) {
            String t = s.trim().toLowerCase(Locale.ROOT);
            if (!t.isEmpty()) {
                no.add(t);
            }
        }
        return new EnvProxySelector(https, http, no);
    }

    /** The proxy for a URL of this scheme and host, if one applies. */
    public Optional<Endpoint> forTarget(String scheme, String host) {
        if (host == null || bypass(host.toLowerCase(Locale.ROOT))) {
            return Optional.empty();
        }
        return "https".equalsIgnoreCase(scheme) ? https : http;
    }

    /** Any proxy's credentials, for OkHttp's proxy authenticator. */
    Optional<Endpoint> endpointFor(InetSocketAddress address) {
        for (Optional<Endpoint> e : List.of(https, http)) {
            if (e.isPresent() && e.get().host().equalsIgnoreCase(address.getHostString()) && e.get().port() == address.getPort()) {
                return e;
            }
        }
        return Optional.empty();
    }

    @Override
    public List<Proxy> select(URI uri) {
        return forTarget(uri.getScheme(), uri.getHost())
                .map(e -> List.of(new Proxy(Proxy.Type.HTTP, InetSocketAddress.createUnresolved(e.host(), e.port()))))
                .orElse(List.of(Proxy.NO_PROXY));
    }

    @Override
    public void connectFailed(URI uri, SocketAddress sa, IOException ioe) {
        // Nothing to remember: a failed proxy connect surfaces as a not-sent call and is retried or reported.
    }

    private boolean bypass(String host) {
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        if (h.equals("localhost") || h.startsWith("127.") || h.equals("::1")) {
            return true;
        }
        for (String n : noProxy) {
            String rule = n.replaceFirst(":\\d+$", "");
            if (rule.equals("*") || h.equals(rule.startsWith(".") ? rule.substring(1) : rule)
                    || h.endsWith(rule.startsWith(".") ? rule : "." + rule)) {
                return true;
            }
        }
        return false;
    }

    private static String first(Map<String, String> env, String upper, String lower) {
        String v = env.get(upper);
        if (v == null || v.isBlank()) {
            v = env.get(lower);
        }
        return v == null ? "" : v.trim();
    }

    private static Optional<Endpoint> parse(String value, String variable) {
        if (value.isEmpty()) {
            return Optional.empty();
        }
        String v = value.contains("://") ? value : "http://" + value;
        try {
            URI u = new URI(v);
            if (u.getHost() == null) {
                throw new URISyntaxException(v, "no host");
            }
            if (!"http".equalsIgnoreCase(u.getScheme())) {
                throw new ConfigurationException(variable + " uses " + u.getScheme()
                        + "://; only an http:// proxy is supported (it still carries https through CONNECT)");
            }
            int port = u.getPort() > 0 ? u.getPort() : 80;
            Optional<String> user = Optional.empty();
            Optional<Secret> password = Optional.empty();
            if (u.getRawUserInfo() != null) {
                String[] parts = u.getRawUserInfo().split(":", 2);
                user = Optional.of(URLDecoder.decode(parts[0], StandardCharsets.UTF_8));
                password = Optional.of(Secret.of(parts.length > 1 ? URLDecoder.decode(parts[1], StandardCharsets.UTF_8) : ""));
            }
            return Optional.of(new Endpoint(u.getHost(), port, user, password));
        } catch (URISyntaxException e) {
            // Never echo the value: it may carry a password.
            throw new ConfigurationException(variable + " is not a proxy URL such as http://proxy.example:3128");
        }
    }

    @Override
    public String toString() {
        return "EnvProxySelector[https=" + https.map(Endpoint::toString).orElse("none") + ", http="
                + http.map(Endpoint::toString).orElse("none") + ", noProxy=" + noProxy + "]";
    }
}
