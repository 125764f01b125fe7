package dev.airlock.cli;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.containment.ContainedEnvironment;
import dev.airlock.settings.AirlockHome;
import dev.airlock.settings.Settings;
import dev.airlock.session.Session;
import dev.airlock.session.ShellSession;
import dev.airlock.spi.EnvironmentProvider;
import dev.airlock.spi.SandboxLifecycle;

import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * {@code --set airlock.session=NAME}: {@code exec} runs in NAME's shell session, whose state is
 * kept between invocations under the operator's {@code $AIRLOCK_HOME/sessions/BACKEND/TARGET/}
 * ({@code local-isolated} for local commands under bubblewrap),
 * not in the environment's private dir (which close removes). Only where the target outlives the
 * invocation: the local backend, or a sandbox made by {@code airlock up} and attached to.
 */
final class NamedSession implements AutoCloseable {
    static final String KEY = "airlock.session";
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    private final FileSessionStore store;
    private final Session session;

    private NamedSession(FileSessionStore store, Session session) {
        this.store = store;
        this.session = session;
    }

    /** What {@code airlock.session} asks for, checked before an environment is opened; empty when unset. */
    record Plan(String name, String backend, Optional<String> sandbox, boolean waitWhenBusy) {
        /** Opens NAME's session on {@code env}: its state is loaded now and saved on close. */
        NamedSession open(Environment env) {
            String target = sandbox.orElseGet(() -> env.target().user() + "@" + env.target().hostname());
            Path dir = root().resolve(kind(env)).resolve(safe(target));
            FileSessionStore store = FileSessionStore.open(dir, name, waitWhenBusy);
            try {
                return new NamedSession(store, env.session(store));
            } catch (RuntimeException e) {
                store.close();
                throw e;
            }
        }

        /**
         * The backend's segment of the state's path, apart for local commands under a sandbox: the
         * state is shell code the next command sources, so what a sandboxed command left must never
         * be sourced by an unsandboxed one on the same user and host.
         */
        private String kind(Environment env) {
            boolean isolated = env instanceof ContainedEnvironment c && !c.isolation().startsWith("none");
            return isolated && backend.equals("local") ? "local-isolated" : backend;
        }
    }

    static Optional<Plan> plan(Settings settings) {
        Optional<String> name = settings.get(KEY);
        if (name.isEmpty()) {
            return Optional.empty();
        }
        String n = checkedName(name.get(), KEY);
        String backend = settings.get(Environments.BACKEND_KEY, "local").trim();
        boolean waitWhenBusy = settings.getBoolean(ShellSession.WAIT_KEY, true);
        if (backend.equals("local")) {
            return Optional.of(new Plan(n, backend, Optional.empty(), waitWhenBusy));
        }
        EnvironmentProvider provider = Environments.provider(backend, AirlockCli.class.getClassLoader());
        Optional<String> sandbox = provider instanceof SandboxLifecycle l ? settings.get(l.attachKey()) : Optional.empty();
        if (sandbox.isEmpty()) {
            String how = provider instanceof SandboxLifecycle l
                    ? "start one with 'airlock --backend " + backend + " up' and attach with --set " + l.attachKey() + "=ID"
                    : "the " + backend + " backend has none; use the local backend or drop " + KEY;
            throw new ConfigurationException(KEY + "=" + n + " keeps its state only where the target outlives this command"
                    + " (the local backend or a sandbox made by 'airlock up'): " + how);
        }
        return Optional.of(new Plan(n, backend, sandbox, waitWhenBusy));
    }

    /** Where every named session's state lives: {@code $AIRLOCK_HOME/sessions/BACKEND/TARGET/NAME.snapshot}. */
    static Path root() {
        return AirlockHome.resolve().resolve("sessions");
    }

    /** {@code name} if it can name a session (and so a file), else a usage error saying what {@code given} must be. */
    static String checkedName(String name, String given) {
        if (!NAME.matcher(name).matches()) {
            throw new ConfigurationException(given + " must be 1 to 64 letters, digits, '.', '_' or '-', got '"
                    + printable(name) + "'");
        }
        if (name.equals(".") || name.equals("..")) {
            throw new ConfigurationException(given + " cannot be '" + name + "'; pick a name with a letter or digit");
        }
        return name;
    }

    Session session() {
        return session;
    }

    /** Saves the state (after the exec ended) and releases NAME for the next invocation. */
    @Override
    public void close() {
        try {
            session.close();
        } finally {
            store.close();
        }
    }

    /** A target's id as one safe path segment. */
    static String safe(String s) {
        String out = s.replaceAll("[^A-Za-z0-9._@-]", "_");
        return out.isEmpty() || out.equals(".") || out.equals("..") ? "_" + out : out;
    }

    private static String printable(String s) {
        StringBuilder sb = new StringBuilder();
        s.codePoints().limit(80).forEach(c -> sb.append(c < 0x20 || c == 0x7f ? String.format("\\x%02x", c) : Character.toString(c)));
        return sb.toString();
    }
}
