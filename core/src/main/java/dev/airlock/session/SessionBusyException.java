package dev.airlock.session;

import dev.airlock.AirlockException;

/** Another exec of the session still runs and {@code airlock.session.wait=false} asked not to wait for it. */
public class SessionBusyException extends AirlockException {
    private static final long serialVersionUID = 1L;

    public SessionBusyException(String message) {
        super(message);
    }

    @Override
    public String kind() {
        return "busy";
    }
}
