package dev.airlock.safety;

import dev.airlock.ApprovalRequiredException;
import dev.airlock.settings.Settings;

import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Decides a write that needs approval, in a fixed order: yolo, a remembered approval (this
 * session, or "always" from the allowlist), a human through the {@link ApprovalChannel}, cron
 * context by {@code airlock.approvals.cron-mode}, and otherwise denied. Hard-denied paths never
 * reach it. Every outcome is reported ({@code approved} or {@code denied}).
 */
public final class ApprovalGate {
    public static final String YOLO_KEY = "airlock.yolo";
    public static final String TIMEOUT_KEY = "airlock.approvals.timeout";
    public static final String CONTEXT_KEY = "airlock.context";
    public static final String CRON_MODE_KEY = "airlock.approvals.cron-mode";
    private static final Duration GRACE = Duration.ofSeconds(2);
    private static final String DO_NOT_RETRY = " Do not retry it through the terminal, code execution or another tool"
            + " unless the user explicitly agrees.";

    /** Receives {@code approved} and {@code denied} events. */
    @FunctionalInterface
    public interface Reporter {
        void report(String type, String subject, Map<String, Object> fields);
    }

    private final String backend;
    private final String target;
    private final boolean yolo;
    private final Duration timeout;
    private final boolean cron;
    private final boolean cronAllows;
    private final Optional<ApprovalChannel> channel;
    private final ApprovalStore store;
    private final Reporter reporter;
    private final Set<String> session = ConcurrentHashMap.newKeySet();
    private final Object asking = new Object();

    ApprovalGate(String backend, String target, Settings settings, Optional<ApprovalChannel> channel,
                 ApprovalStore store, Reporter reporter) {
        this.backend = backend;
        this.target = target;
        this.yolo = settings.getBoolean(YOLO_KEY, false);
        this.timeout = settings.getDuration(TIMEOUT_KEY, Duration.ofSeconds(60));
        this.cron = "cron".equalsIgnoreCase(settings.get(CONTEXT_KEY, "").trim());
        this.cronAllows = "allow".equals(settings.getChoice(CRON_MODE_KEY, "deny", "deny", "allow"));
        this.channel = channel;
        this.store = store;
        this.reporter = reporter;
    }

    /**
     * Returns when {@code path} may be written; throws {@link ApprovalRequiredException} otherwise.
     *
     * @param path      the canonical path on the target (the key of remembered approvals)
     * @param route     {@code write} (file API) or {@code exec} (a command)
     * @param operation what asks, for the human ({@code write}, {@code exec: printf ...})
     * @param reason    why the path needs approval
     */
    public void approve(String path, String route, String operation, String reason) {
        if (yolo) {
            approved(path, route, "yolo");
            return;
        }
        if (session.contains(path)) {
            approved(path, route, "session (remembered)");
            return;
        }
        if (store.contains(backend, target, path)) {
            approved(path, route, "always (remembered)");
            return;
        }
        if (channel.isPresent()) {
            synchronized (asking) {
                // Another exec may have asked for the same path while this one waited.
                if (session.contains(path) || store.contains(backend, target, path)) {
                    approved(path, route, "remembered");
                    return;
                }
                ask(channel.get(), path, route, operation, reason);
            }
            return;
        }
        if (cron) {
            if (cronAllows) {
                approved(path, route, "cron (" + CRON_MODE_KEY + "=allow)");
                return;
            }
            throw denied(path, route, "cron", "needs approval, and this is a cron run where " + CRON_MODE_KEY + "=deny.");
        }
        throw denied(path, route, "no channel", "needs approval and no approval channel is available.");
    }

    private void ask(ApprovalChannel ch, String path, String route, String operation, String reason) {
        ApprovalChannel.ApprovalRequest req = new ApprovalChannel.ApprovalRequest(backend, target, path, operation, reason);
        FutureTask<ApprovalChannel.Decision> task = new FutureTask<>(() -> ch.ask(req, timeout));
        Thread t = new Thread(task, "airlock-approval");
        t.setDaemon(true);
        t.start();
        ApprovalChannel.Decision d;
        try {
            d = task.get(timeout.plus(GRACE).toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            t.interrupt();
            throw denied(path, route, "timeout", "needs approval and no answer came within "
                    + timeout.toSeconds() + "s (silence denies).");
        } catch (InterruptedException e) {
            t.interrupt();
            Thread.currentThread().interrupt();
            throw denied(path, route, "interrupted", "needs approval and the wait for an answer was interrupted.");
        } catch (ExecutionException e) {
            throw denied(path, route, "channel failed", "needs approval and the approval channel failed ("
                    + Safety.oneLine(String.valueOf(e.getCause())) + ").");
        }
        if (d == null) {
            d = ApprovalChannel.Decision.DENY;
        }
        switch (d) {
            case ONCE -> approved(path, route, "once");
            case SESSION -> {
                session.add(path);
                approved(path, route, "session");
            }
            case ALWAYS -> {
                try {
                    store.add(backend, target, path);
                } catch (IOException e) {
                    // The approval stands for this session; only remembering it failed.
                    session.add(path);
                    approved(path, route, "always (not saved: " + Safety.oneLine(e.getMessage()) + ")");
                    return;
                }
                session.add(path);
                approved(path, route, "always");
            }
            default -> throw denied(path, route, "refused", "needs approval and it was refused (or not answered in time).");
        }
    }

    private void approved(String path, String route, String scope) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("route", route);
        f.put("scope", scope);
        reporter.report("approved", path, f);
    }

    private ApprovalRequiredException denied(String path, String route, String why, String text) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("route", route);
        f.put("tier", Tier.APPROVAL.name().toLowerCase(java.util.Locale.ROOT));
        f.put("reason", why);
        reporter.report("denied", path, f);
        return new ApprovalRequiredException("Write denied: '" + Safety.oneLine(path) + "' " + text + DO_NOT_RETRY);
    }
}
