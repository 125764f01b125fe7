package dev.airlock.daytona;

import com.fasterxml.jackson.databind.JsonNode;
import dev.airlock.AirlockException;
import dev.airlock.ConfigurationException;
import dev.airlock.shell.StdinScripts;
import dev.airlock.spi.Deadline;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Locale;
import java.util.Optional;

/**
 * A snapshot of a running Daytona sandbox's filesystem: {@code POST /sandbox/{id}/snapshot {name}}
 * makes a Daytona snapshot, the same kind a sandbox is created from with {@code snapshot} (so
 * {@code airlock.daytona.snapshot=NAME} opens from it). The sandbox goes {@code snapshotting} and
 * back; the snapshot is ready once {@code active}. Its id is the name Airlock chose.
 *
 * <p>The service saves the whole filesystem, Airlock's private dir included: that dir lives under
 * {@link #PRIVATE_BASE}, which a sandbox opened from a snapshot clears before its first command.
 */
final class DaytonaSnapshot {
    /** Where this backend keeps the core's private dir and its command output: cleared in a sandbox made from a snapshot. */
    static final String PRIVATE_BASE = "/tmp/.airlock-daytona";
    /** Name prefix of the snapshots Airlock takes. */
    static final String PREFIX = "airlock-snapshot-";

    private DaytonaSnapshot() {
    }

    /** Takes the snapshot and waits until it is {@code active}; a failed or unfinished one is deleted. */
    static String take(DaytonaApi api, String sandboxId, String privateDir, Deadline deadline) throws IOException {
        if (!privateDir.startsWith(PRIVATE_BASE + "/")) {
            throw new ConfigurationException("the daytona backend snapshots the whole filesystem, and the private dir "
                    + privateDir + " is outside " + PRIVATE_BASE + ", which a sandbox opened from a snapshot clears"
                    + " (airlock.private-dir.base, or airlock.run-dir under airlock.profile=eval, put it there); unset that to take snapshots");
        }
        String name = PREFIX + StdinScripts.randomToken().substring(0, 16).toLowerCase(Locale.ROOT);
        boolean done = false;
        try {
            api.createSnapshot(sandboxId, name);
            awaitSandbox(api, sandboxId, deadline);
            awaitActive(api, name, deadline);
            done = true;
            return name;
        } catch (AirlockException e) {
            throw new IOException(e.getMessage(), e);
        } finally {
            if (!done) {
                try {
                    api.deleteSnapshot(name);
                } catch (RuntimeException ignored) {
                    // it is Airlock's by its name; gone with the organisation's snapshot cleanup otherwise
                }
            }
        }
    }

    /** Until the sandbox has left {@code snapshotting}; {@code error} fails with the service's reason. */
    private static void awaitSandbox(DaytonaApi api, String sandboxId, Deadline deadline) throws InterruptedIOException {
        for (long pause = 100; ; pause = Math.min(2000, pause * 3 / 2)) {
            JsonNode r = api.get(sandboxId);
            String state = r.path("state").asText("");
            if (state.equals("error") || state.equals("build_failed")) {
                throw new dev.airlock.BackendException("the Daytona sandbox " + sandboxId + " ended in " + state
                        + " while taking a snapshot: " + r.path("errorReason").asText("no reason given"));
            }
            if (!state.equals("snapshotting")) {
                return;
            }
            pause(pause, deadline);
        }
    }

    /** Until the snapshot is {@code active}; {@code error}/{@code build_failed} fail with its reason. */
    private static void awaitActive(DaytonaApi api, String name, Deadline deadline) throws InterruptedIOException {
        for (long pause = 100; ; pause = Math.min(2000, pause * 3 / 2)) {
            Optional<JsonNode> s = api.snapshot(name);
            String state = s.map(n -> n.path("state").asText("")).orElse("");
            if (state.equals("active")) {
                return;
            }
            if (state.equals("error") || state.equals("build_failed")) {
                throw new dev.airlock.BackendException("Daytona could not make the snapshot " + name + ": "
                        + s.get().path("errorReason").asText("no reason given"));
            }
            pause(pause, deadline);
        }
    }

    private static void pause(long millis, Deadline deadline) throws InterruptedIOException {
        if (deadline.passed()) {
            throw new InterruptedIOException("the snapshot is not ready yet");
        }
        try {
            Thread.sleep(Math.max(1, Math.min(millis, deadline.remaining().toMillis())));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for the snapshot");
        }
    }
}
