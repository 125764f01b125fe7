package dev.airlock.vercel;

import dev.airlock.ConfigurationException;
import dev.airlock.NetworkAllowlist;
import dev.airlock.NetworkMode;
import dev.airlock.settings.Secret;
import dev.airlock.settings.Settings;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The {@code airlock.vercel.*} settings (the table in docs/backends.md). The token is a {@link Secret}: the
 * setting, else {@code VERCEL_TOKEN}.
 */
record VercelSettings(String apiUrl, Optional<Secret> token, Optional<String> teamId, String projectId,
                      Optional<String> image, Optional<String> runtime, int vcpus, Duration timeout,
                      Map<String, String> env, List<Integer> ports, boolean persistent, Optional<String> sandboxId,
                      NetworkMode network, Optional<String> snapshot, List<NetworkAllowlist.Entry> allowed) {
    static final String PREFIX = "airlock.vercel";
    static final String API_URL = PREFIX + ".api-url";
    static final String TOKEN = PREFIX + ".token";
    static final String TEAM_ID = PREFIX + ".team-id";
    static final String PROJECT_ID = PREFIX + ".project-id";
    static final String IMAGE = PREFIX + ".image";
    static final String RUNTIME = PREFIX + ".runtime";
    static final String VCPUS = PREFIX + ".vcpus";
    static final String TIMEOUT = PREFIX + ".timeout";
    static final String ENV = PREFIX + ".env.";
    static final String PORTS = PREFIX + ".ports";
    static final String PERSISTENT = PREFIX + ".persistent";
    static final String SANDBOX_ID = PREFIX + ".sandbox-id";
    /** A snapshot's id ({@code Environment.snapshot()}): the sandbox is created from it ({@code source: snapshot}). */
    static final String SNAPSHOT = PREFIX + ".snapshot";
    /** The most ports a sandbox exposes, as the SDK documents ({@code ports}: "up to 15"). */
    static final int MAX_PORTS = 15;
    static final String TOKEN_VARIABLE = "VERCEL_TOKEN";
    /** The variables Vercel's own sandbox docs pass to the SDK ({@code teamId: process.env.VERCEL_TEAM_ID}, ...). */
    static final String TEAM_VARIABLE = "VERCEL_TEAM_ID";
    static final String PROJECT_VARIABLE = "VERCEL_PROJECT_ID";

    /**
     * {@code off} is the create's network policy {@code deny-all}; {@code allowlist} its domains
     * ({@code allow}) and ranges ({@code subnets.allow}), on every port.
     */
    static final Set<NetworkMode> NETWORK_MODES = EnumSet.allOf(NetworkMode.class);

    static VercelSettings from(Settings s, Map<String, String> processEnv) {
        NetworkMode network = NetworkMode.require(s, "vercel", NETWORK_MODES); // before anything is created
        Optional<Secret> token = s.secret(TOKEN).filter(t -> !t.isEmpty())
                .or(() -> Optional.ofNullable(processEnv.get(TOKEN_VARIABLE)).filter(v -> !v.isBlank()).map(Secret::of));
        Optional<String> image = s.get(IMAGE).filter(v -> !v.isBlank());
        Optional<String> runtime = s.get(RUNTIME).filter(v -> !v.isBlank());
        if (image.isPresent() && runtime.isPresent()) {
            throw new ConfigurationException(IMAGE + " and " + RUNTIME + " cannot both be set: choose one");
        }
        int vcpus = s.getInt(VCPUS, 2);
        if (vcpus < 1) {
            throw new ConfigurationException(VCPUS + " must be at least 1, not " + vcpus);
        }
        Duration timeout = s.getDuration(TIMEOUT, Duration.ofMinutes(5));
        if (timeout.toSeconds() < 10) {
            throw new ConfigurationException(TIMEOUT + " must be at least 10s, not " + timeout);
        }
        java.util.SortedSet<Integer> declared = new java.util.TreeSet<>(dev.airlock.Ports.declared(s));
        for (String p : s.getList(PORTS)) {
            try {
                declared.add(dev.airlock.Ports.check(Integer.parseInt(p.trim())));
            } catch (NumberFormatException e) {
                throw new ConfigurationException(PORTS + " holds a port that is not a number: " + p);
            }
        }
        if (declared.size() > MAX_PORTS) {
            throw new ConfigurationException(dev.airlock.Ports.KEY + " and " + PORTS + " declare " + declared.size()
                    + " ports; a Vercel sandbox exposes at most " + MAX_PORTS + ": declare fewer");
        }
        List<Integer> ports = List.copyOf(declared);
        Optional<String> snapshot = s.get(SNAPSHOT).map(String::trim).filter(v -> !v.isEmpty());
        Optional<String> sandboxId = s.get(SANDBOX_ID).filter(v -> !v.isBlank()).map(String::trim);
        if (snapshot.isPresent() && sandboxId.isPresent()) {
            throw new ConfigurationException("set " + SNAPSHOT + " or " + SANDBOX_ID + ", not both: a snapshot starts a new sandbox");
        }
        return new VercelSettings(s.get(API_URL, "https://vercel.com/api").replaceAll("/+$", ""), token,
                s.get(TEAM_ID).filter(v -> !v.isBlank()).or(() -> Optional.ofNullable(processEnv.get(TEAM_VARIABLE)))
                        .map(String::trim).filter(v -> !v.isEmpty()),
                s.get(PROJECT_ID).filter(v -> !v.isBlank()).or(() -> Optional.ofNullable(processEnv.get(PROJECT_VARIABLE)))
                        .orElse("").trim(), image, runtime, vcpus, timeout,
                Map.copyOf(s.keys(ENV)), ports, s.getBoolean(PERSISTENT, false), sandboxId, network, snapshot,
                network == NetworkMode.ALLOWLIST ? NetworkAllowlist.from(s).onEveryPort("vercel", true) : List.of());
    }

    /** The token, or one line saying how to give it. */
    Secret requireToken() {
        return token.orElseThrow(() -> new ConfigurationException("no Vercel token: export " + TOKEN_VARIABLE
                + " or put " + TOKEN + " in the config file"));
    }

    String requireProject() {
        if (projectId.isEmpty()) {
            throw new ConfigurationException("no Vercel project: export " + PROJECT_VARIABLE + " or set " + PROJECT_ID
                    + " (the project the sandboxes belong to, prj_...)");
        }
        return projectId;
    }
}
