package dev.airlock.session;

import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.NoSuchPathException;
import dev.airlock.Payload;
import dev.airlock.WriteOptions;
import dev.airlock.shell.StdinScripts;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A session on an environment: its state in {@code PRIVATE_DIR/sessions/ID} on the target, one
 * exec at a time (a fair permit, released when the exec's flow ended), the state loaded from a
 * {@link SessionStore} when it opens and saved to it when it closes.
 */
public final class ShellSession implements Session {
    private static final Logger LOG = LoggerFactory.getLogger(ShellSession.class);
    /** {@code false}: a second exec of a busy session fails at once instead of waiting. */
    public static final String WAIT_KEY = "airlock.session.wait";

    /** How the environment starts a request with a session's hook in its run, and waits for one. */
    public interface Starter {
        Execution start(ExecRequest request, SessionHook hook);

        /**
         * Waits for {@code e} as the environment's own {@code exec} does: an interrupt cancels the
         * command and waits for its stop within the environment's stop bound, the interrupt kept.
         */
        ExecResult await(Execution e);
    }

    private final Environment env;
    private final Starter starter;
    private final boolean waitWhenBusy;
    private final SessionStore store;
    private final String id = StdinScripts.randomToken().substring(0, 16);
    private final String dir;
    private final Semaphore permit = new Semaphore(1, true);
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * Opens a session; when {@code store} holds a saved state, it is put on the target now.
     *
     * @param store where the state is kept between environments, or null for none
     */
    public ShellSession(Environment env, Starter starter, boolean waitWhenBusy, SessionStore store) {
        this.env = env;
        this.starter = starter;
        this.waitWhenBusy = waitWhenBusy;
        this.store = store;
        this.dir = env.target().privateDir() + "/sessions/" + id;
        if (store != null) {
            store.load().ifPresent(s -> env.files().write(SessionScript.snapshotPath(dir), Payload.of(s), WriteOptions.mode(0600)));
        }
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public String directory() {
        return dir;
    }

    @Override
    public ExecResult exec(ExecRequest request) {
        return starter.await(start(request)); // an interrupt cancels, as for a plain exec
    }

    @Override
    public Execution start(ExecRequest request) {
        ensureOpen();
        acquire();
        Hook hook = new Hook(request);
        try {
            ensureOpen();
            return starter.start(request, hook);
        } catch (RuntimeException | Error e) {
            hook.ended(); // it never got to run
            throw e;
        }
    }

    private void acquire() {
        if (!waitWhenBusy) {
            if (!permit.tryAcquire()) {
                throw new SessionBusyException("another command of session " + id + " still runs and " + WAIT_KEY
                        + "=false; wait for it to end, or drop that setting to queue behind it");
            }
            return;
        }
        try {
            permit.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException("interrupted while waiting for the session's previous command to end");
        }
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new dev.airlock.EnvironmentClosedException("session " + id + " is closed; open a new one with Environment.session()");
        }
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            permit.acquire(); // the running exec, if any, saves its state first
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            LOG.debug("interrupted while closing session {}; its state was not saved", id);
            return;
        }
        try {
            if (store != null) {
                snapshot().ifPresent(store::save);
            }
        } catch (dev.airlock.EnvironmentClosedException e) {
            // Closed under it (a signal closed the environment): the stored state stays as it was.
            LOG.debug("session {} was not saved: {}", id, e.getMessage());
        } catch (BackendException e) {
            // The command's result stands; only its state is not kept (the stored state stays as it was).
            LOG.warn(e.getMessage());
        } finally {
            try {
                env.files().delete(dir);
            } catch (AirlockException e) {
                LOG.debug("could not remove session {}: {}", id, e.getMessage()); // close removes the private dir anyway
            }
            permit.release();
        }
    }

    /**
     * The current snapshot's bytes, or empty when no exec saved one yet. Read under
     * {@link SessionStore#MAX_SNAPSHOT_BYTES}: a command can write the file, so a larger one is an
     * error, not a load of whatever it wrote.
     */
    Optional<byte[]> snapshot() {
        try (InputStream in = env.files().read(SessionScript.snapshotPath(dir))) {
            byte[] state = in.readNBytes(SessionStore.MAX_SNAPSHOT_BYTES + 1);
            if (state.length > SessionStore.MAX_SNAPSHOT_BYTES) {
                throw new BackendException("session " + id + ": its state is over "
                        + (SessionStore.MAX_SNAPSHOT_BYTES >> 20) + " MiB (a command wrote to the session's"
                        + " snapshot file?); it was not saved, the state saved before is kept");
            }
            return Optional.of(state);
        } catch (NoSuchPathException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One exec's part: its wrap, and the permit released once. */
    private final class Hook implements SessionHook {
        private final ExecRequest request;
        private final AtomicBoolean ended = new AtomicBoolean();

        Hook(ExecRequest request) {
            this.request = request;
        }

        @Override
        public String wrap(String command) {
            return SessionScript.wrap(command, dir, env.target().hasBash(), request.env().keySet(), request.cwd().isPresent());
        }

        @Override
        public void ended() {
            if (ended.compareAndSet(false, true)) {
                permit.release();
            }
        }
    }
}
