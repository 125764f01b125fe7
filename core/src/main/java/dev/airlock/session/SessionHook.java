package dev.airlock.session;

/**
 * What a session adds to one exec of the core's run, and all the run knows of sessions: the
 * command it sends is {@link #wrap wrapped} (after the guard judged the user's own command), and
 * it says when the exec's flow {@link #ended}, so the session's next exec may start.
 */
public interface SessionHook {

    /** The command as sent: the session's prefix and EXIT trap around the user's {@code command}. */
    String wrap(String command);

    /** The exec's flow ended (its shell is gone, or was given up on). Called once, whatever the end. */
    void ended();
}
