package dev.airlock.cli;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;
import sun.misc.SignalHandler;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * SIGINT and SIGTERM while a command works on an environment. The JVM's default would run
 * shutdown hooks while our main thread races on; instead the handler runs an action (cancel and
 * close), and the main thread finishes normally and exits 128+N.
 */
final class Signals {
    private static final String[] NAMES = {"INT", "TERM"};

    private final AtomicInteger received = new AtomicInteger();
    private final Map<Signal, SignalHandler> previous = new LinkedHashMap<>();
    private volatile Runnable action = () -> { };

    /** Routes SIGINT and SIGTERM to {@code onSignal} until {@link #uninstall()}. */
    synchronized void install(Runnable onSignal) {
        this.action = onSignal;
        for (String name : NAMES) {
            Signal sig = new Signal(name);
            try {
                previous.put(sig, Signal.handle(sig, this::handle));
            } catch (IllegalArgumentException e) {
                // The JVM reserves it (e.g. -Xrs): keep the default behaviour.
                log().debug("cannot handle SIG{}: {}", name, e.getMessage());
            }
        }
    }

    synchronized void uninstall() {
        previous.forEach(Signal::handle);
        previous.clear();
        action = () -> { };
    }

    /** The first signal's number, or 0. */
    int received() {
        return received.get();
    }

    private static Logger log() {
        // Not a static field: logging is configured (--debug) after this class may be loaded.
        return LoggerFactory.getLogger(Signals.class);
    }

    private void handle(Signal sig) {
        received.compareAndSet(0, sig.getNumber());
        log().debug("SIG{} received: cancelling and closing", sig.getName());
        action.run();
    }
}
