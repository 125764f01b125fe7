package dev.airlock.spi;

import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.Target;

import java.io.IOException;

/**
 * What the core offers the backend it runs, handed over once through {@link Backend#bind} before
 * the target probe: the probed target, whether the environment is closed, Airlock's own small
 * scripts run through the backend's launch, and the core's implementations that a backend's
 * native parts build on or fall back to. Nothing here passes the command guard or the exec state
 * machine: it is for the backend's own housekeeping.
 */
public interface CoreAccess {

    /** The probed target; known from {@link Backend#onTargetReady} on, an {@link IllegalStateException} before. */
    Target target();

    /** Whether the environment is closed or closing. */
    boolean isClosed();

    /**
     * Runs a small {@code sh} script straight through {@link Backend#launch}, streaming {@code stdin}
     * when not null; its output is capped at 1 MiB.
     */
    RawResult run(String script, Payload stdin) throws IOException;

    /** The environment's file API, behind the guard: a native file API re-enters it with a path it resolved. */
    RemoteFiles files();

    /**
     * The core's file operations as scripts, for a native file API to fall back on: the guard in
     * front of that API judged the path as given, so these do not judge it again; a physical place
     * a write finds on its way (a symlink in the path) they still judge. Not for a write of the
     * backend's own that no guard judged.
     */
    RemoteFiles shellFiles();

    /**
     * The core's staging: small text through the {@link Backend#controlShell() control shell} while
     * it lives, else {@code cat} through launch; removal by {@code rm -f}. For a native stager that
     * cannot do everything.
     */
    Stager shellStager();

    /**
     * The core's group signal and group read, as scripts through the control shell while it lives,
     * else commands of their own. For a native killer that adds to them.
     */
    Killer shellKiller();
}
