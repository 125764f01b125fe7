package dev.airlock.cli;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.safety.TtyApprovalChannel;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.slf4j.LoggerFactory;

/**
 * The environment one command works on. A SIGINT or SIGTERM cancels what runs and closes the
 * environment (killing its process groups); {@link #close()} returns only when that is done,
 * so the JVM never exits with a command still running.
 */
final class Session implements AutoCloseable {
    private final Signals signals;
    private volatile Environment env;
    private volatile Runnable cancel = () -> { };

    private Session(Signals signals) {
        this.signals = signals;
    }

    static Session open(Settings settings, Signals signals) {
        Session s = new Session(signals);
        signals.install(s::interrupt);
        try {
            s.env = Environments.open(context(settings));
        } catch (RuntimeException e) {
            signals.uninstall();
            throw e;
        }
        if (signals.received() != 0) {
            s.interrupt(); // the signal came while the environment was opening
        }
        Environment e = s.env;
        LoggerFactory.getLogger(Session.class).debug("opened the {} environment {} on {}@{}",
                e.name(), e.id(), e.target().user(), e.target().hostname());
        return s;
    }

    /** A write that needs approval is asked on the terminal (/dev/tty), when there is one. */
    private static OpenContext context(Settings settings) {
        OpenContext context = OpenContext.of(settings);
        return TtyApprovalChannel.ifAvailable().map(context::withApprovalChannel).orElse(context);
    }

    Environment env() {
        return env;
    }

    /** What to cancel on a signal, before the environment is closed. */
    void onSignal(Runnable action) {
        this.cancel = action;
        if (signals.received() != 0) {
            interrupt();
        }
    }

    private void interrupt() {
        cancel.run();
        Environment e = env;
        if (e != null) {
            e.close();
        }
    }

    @Override
    public void close() {
        try {
            Environment e = env;
            if (e != null) {
                e.close(); // a second closer waits for a close already running in the signal handler
            }
        } finally {
            signals.uninstall();
        }
    }
}
