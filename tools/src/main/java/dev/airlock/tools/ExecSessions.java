package dev.airlock.tools;

import dev.airlock.AirlockException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.Execution;
import dev.airlock.session.Session;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The shell sessions the {@code exec} tool runs in, for one door: one MCP connection or one
 * LangChain4j tool provider. An exec runs in the door's default session unless its {@code session}
 * argument names another, so {@code cd} and {@code export} carry to the next exec of that session,
 * as in one terminal. The sessions are {@link Environment#session()}s: one exec at a time each
 * (see {@link Session}); separate sessions run side by side.
 *
 * <p>Made once per door and closed with it ({@link #close()} ends the sessions, removing their
 * state from the target).
 */
public final class ExecSessions implements AutoCloseable {
    /** What the {@code session} argument accepts. */
    static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    /** Starts one exec in a session the door supplies (for example a named one kept across processes). */
    @FunctionalInterface
    public interface Starter {
        /**
         * Starts {@code request} on {@code env}. {@link Started#finish()} is called once the tool is
         * done with the exec (it ended, or the call gave up on it after cancelling it).
         */
        Started start(Environment env, ExecRequest request);
    }

    /**
     * An exec started in a session.
     *
     * @param execution the running command
     * @param finish    run once when the tool is done with it: saves or releases the session
     */
    public record Started(Execution execution, Runnable finish) {
        public Started {
            Objects.requireNonNull(execution, "execution");
            Objects.requireNonNull(finish, "finish");
        }
    }

    /** A session's key: the call's scope (null: the door's own) and the session's name ("" for the main one). */
    private record Key(Object scope, String name) {
    }

    private final boolean enabled;
    private final boolean byScope;
    private final Starter defaultStarter;
    private final Map<Key, Session> open = new LinkedHashMap<>();
    private Environment owner;
    private boolean closed;

    private ExecSessions(boolean enabled, boolean byScope, Starter defaultStarter) {
        this.enabled = enabled;
        this.byScope = byScope;
        this.defaultStarter = defaultStarter;
    }

    /** No sessions: every exec starts fresh in the environment's working directory (the {@code session} argument is refused). */
    public static ExecSessions none() {
        return new ExecSessions(false, false, null);
    }

    /**
     * A default session opened at the first exec, and one more per name the {@code session}
     * argument gives, all ended by {@link #close()}.
     */
    public static ExecSessions perDoor() {
        return new ExecSessions(true, false, null);
    }

    /**
     * Like {@link #perDoor()}, but apart for each scope a call carries ({@link ToolCall#in}, such as
     * a chat memory id): each conversation has its own main and named sessions. Calls without a
     * scope share the door's. Every session lives until {@link #close()}.
     */
    public static ExecSessions perScope() {
        return new ExecSessions(true, true, null);
    }

    /**
     * Like {@link #perDoor()}, but an exec without a {@code session} argument is started by
     * {@code defaultStarter} (the CLI's named sessions, whose state outlives the door).
     */
    public static ExecSessions withDefault(Starter defaultStarter) {
        return new ExecSessions(true, false, Objects.requireNonNull(defaultStarter, "defaultStarter"));
    }

    /** Whether execs run in sessions (and the exec tool takes a {@code session} argument). */
    public boolean enabled() {
        return enabled;
    }

    /**
     * Starts {@code request} in the session {@code name} (empty: the main session) of {@code scope}.
     *
     * @param scope the call's {@link ToolCall#scope()}, or null
     * @throws ToolInputException when the name is not a session name, or sessions are off
     */
    Started start(Environment env, ExecRequest request, Optional<String> name, Object scope) {
        check(name);
        if (!enabled) {
            return new Started(env.start(request), () -> { });
        }
        if (name.isEmpty() && defaultStarter != null) {
            return defaultStarter.start(env, request);
        }
        Session session = session(env, new Key(byScope ? scope : null, name.orElse("")));
        return new Started(session.start(request), () -> { });
    }

    /** Checks a {@code session} argument before anything runs. */
    void check(Optional<String> name) {
        if (name.isPresent() && !enabled) {
            throw new ToolInputException("session", "this door runs every exec on its own, without shell sessions;"
                    + " leave session out");
        }
        if (name.isPresent() && !NAME.matcher(name.get()).matches()) {
            throw new ToolInputException("session", "must be 1 to 64 letters, digits, '.', '_' or '-', got '"
                    + AirlockTools.oneLine(name.get()) + "'");
        }
    }

    private synchronized Session session(Environment env, Key key) {
        if (closed) {
            throw new dev.airlock.EnvironmentClosedException("the tools are closed; no new exec starts");
        }
        if (owner != env) {
            endAll(); // a door that changed environments: state of the old one means nothing here
            owner = env;
        }
        return open.computeIfAbsent(key, k -> env.session());
    }

    /** Ends every session this door opened (each waits for its running exec, if any, to end). Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        endAll();
    }

    private void endAll() {
        List<Session> ending;
        synchronized (this) {
            ending = new ArrayList<>(open.values());
            open.clear();
        }
        for (Session s : ending) {
            try {
                s.close();
            } catch (AirlockException e) {
                // The environment went first (it removes the sessions' state with its private dir).
            }
        }
    }
}
