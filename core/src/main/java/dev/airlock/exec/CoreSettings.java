package dev.airlock.exec;

import dev.airlock.settings.Settings;

import java.time.Duration;

/**
 * The core's exec settings, read once at open.
 *
 * @param cancelStopsSandbox {@code airlock.cancel=sandbox}: a cancel stops the sandbox too
 * @param outputCap          bytes of each output kept ({@code airlock.output.max-bytes})
 * @param killGrace          SIGTERM to SIGKILL ({@code airlock.kill.grace})
 * @param killSlack          how long past the grace a stop waits on a backend that does not answer ({@code airlock.kill.slack})
 * @param outputGrace        how long output is drained after the command ended ({@code airlock.exec.output-grace})
 * @param maxStaged          the cap on a staged stdin of unknown length ({@code airlock.stdin.max-staged-bytes})
 * @param killSteps          what the backend's kill steps take, together ({@link dev.airlock.spi.Backend#killStepCost})
 * @param snapshotTimeout    how long the backend may take to save the sandbox's files ({@code airlock.snapshot.timeout})
 */
public record CoreSettings(boolean cancelStopsSandbox, long outputCap, Duration killGrace, Duration killSlack, Duration outputGrace,
                           long maxStaged, Duration killSteps, Duration snapshotTimeout) {
    /** The steps of one kill: a group read before the SIGTERM, the SIGTERM, a read before the SIGKILL, the SIGKILL. */
    static final int KILL_STEPS = 4;

    public static final String CANCEL_KEY = "airlock.cancel";
    public static final String OUTPUT_MAX_KEY = "airlock.output.max-bytes";
    public static final String KILL_GRACE_KEY = "airlock.kill.grace";
    public static final String KILL_SLACK_KEY = "airlock.kill.slack";
    public static final String MAX_STAGED_KEY = "airlock.stdin.max-staged-bytes";
    public static final String OUTPUT_GRACE_KEY = "airlock.exec.output-grace";
    public static final String AUDIT_FILE_KEY = "airlock.audit.file";
    public static final String SNAPSHOT_TIMEOUT_KEY = "airlock.snapshot.timeout";

    /** {@code killStepCost}: the backend's {@link dev.airlock.spi.Backend#killStepCost}. */
    static CoreSettings from(Settings settings, Duration killStepCost) {
        return new CoreSettings(
                "sandbox".equals(settings.getChoice(CANCEL_KEY, "exec", "exec", "sandbox")),
                settings.getBytes(OUTPUT_MAX_KEY, 16L << 20),
                settings.getDuration(KILL_GRACE_KEY, Duration.ofSeconds(1)),
                settings.getDuration(KILL_SLACK_KEY, Duration.ofSeconds(1)),
                settings.getDuration(OUTPUT_GRACE_KEY, Duration.ofSeconds(2)),
                settings.getBytes(MAX_STAGED_KEY, 1L << 30),
                killStepCost.multipliedBy(KILL_STEPS),
                settings.getDuration(SNAPSHOT_TIMEOUT_KEY, Duration.ofMinutes(30)));
    }

    /**
     * How long a timeout or cancel may take before the caller has its result: the kill grace, plus
     * the slack a backend's kill, removal or stuck hook is given to answer before the core stops
     * waiting on it (a remote kill is a round trip), plus what the backend declared its kill's
     * steps take.
     */
    Duration stopBound() {
        return killGrace.plus(killSlack).plus(killSteps);
    }
}
