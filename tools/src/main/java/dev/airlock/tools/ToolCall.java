package dev.airlock.tools;

import dev.airlock.Execution;

import java.time.Duration;
import java.util.Objects;

/**
 * One call in flight, as its door sees it: where progress goes, and a cancel that reaches the
 * command it started (killing its process tree) from any thread, before or after it started.
 */
public final class ToolCall {
    /** Receives "still running" reports of a long exec. */
    @FunctionalInterface
    public interface ProgressListener {
        /**
         * @param elapsed time since the command was started
         * @param message a short human line
         */
        void progress(Duration elapsed, String message);
    }

    private static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(2);

    private final ProgressListener progress;
    private final Duration interval;
    private final Object scope;
    private Execution execution;
    private boolean cancelled;

    private ToolCall(ProgressListener progress, Duration interval, Object scope) {
        this.progress = progress;
        this.interval = interval;
        this.scope = scope;
    }

    private ToolCall(ProgressListener progress, Duration interval) {
        this(progress, interval, null);
    }

    /**
     * This call, not yet started, as part of {@code scope}: the conversation it belongs to (a
     * LangChain4j chat memory id), which picks its shell session under {@link ExecSessions#perScope()}.
     */
    public ToolCall in(Object scope) {
        return new ToolCall(progress, interval, Objects.requireNonNull(scope, "scope"));
    }

    /** The conversation this call belongs to, or null when the door gave none. */
    Object scope() {
        return scope;
    }

    /** A call nobody watches or cancels. */
    public static ToolCall unobserved() {
        return new ToolCall((elapsed, message) -> { }, DEFAULT_INTERVAL);
    }

    /** A call whose long exec reports progress to {@code listener} every couple of seconds. */
    public static ToolCall withProgress(ProgressListener listener) {
        return new ToolCall(Objects.requireNonNull(listener, "listener"), DEFAULT_INTERVAL);
    }

    /** The same with a chosen reporting interval. */
    public static ToolCall withProgress(ProgressListener listener, Duration interval) {
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("progress interval must be positive, got " + interval);
        }
        return new ToolCall(Objects.requireNonNull(listener, "listener"), interval);
    }

    /** Stops the call: a command it started is cancelled (its process tree killed); one not yet started never runs. */
    public void cancel() {
        Execution e;
        synchronized (this) {
            if (cancelled) {
                return;
            }
            cancelled = true;
            e = execution;
        }
        if (e != null) {
            e.cancel();
        }
    }

    public synchronized boolean isCancelled() {
        return cancelled;
    }

    /** Binds the started command; if the call was cancelled meanwhile, cancels it at once. */
    void attach(Execution e) {
        boolean cancelNow;
        synchronized (this) {
            execution = e;
            cancelNow = cancelled;
        }
        if (cancelNow) {
            e.cancel();
        }
    }

    Duration interval() {
        return interval;
    }

    void progress(Duration elapsed, String message) {
        try {
            progress.progress(elapsed, message);
        } catch (RuntimeException ignored) {
            // A listener that fails (a closed client) must not end the command it reports on.
        }
    }
}
