package dev.airlock.daytona;

import com.fasterxml.jackson.databind.JsonNode;
import dev.airlock.AirlockException;
import dev.airlock.ConfigurationException;
import dev.airlock.shell.StdinScripts;
import dev.airlock.spi.ResourceLabels;
import dev.airlock.spi.Deadline;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

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

    /**
     * {@code airlock-snapshot-<owner>-}: Daytona snapshots carry no labels, so the name says whose
     * it is (the first 8 hex digits of SHA-256 of {@link ResourceLabels#currentOwner()}) for {@code gc}.
     */
    static String ownerPrefix() {
        try {
            byte[] h = java.security.MessageDigest.getInstance("SHA-256")
                    .digest(ResourceLabels.currentOwner().getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return PREFIX + java.util.HexFormat.of().formatHex(h, 0, 4) + "-";
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this JVM", e);
        }
    }

    /**
     * The names of this owner's snapshots {@code gc} may delete: made by Airlock for this owner,
     * older than {@code olderThan}, the sandbox they were taken of gone (so no environment that
     * took one still runs), and no sandbox made from them.
     */
    static List<JsonNode> collectable(DaytonaApi api, java.time.Duration olderThan) {
        Set<String> sandboxes = new HashSet<>();
        Set<String> used = new HashSet<>();
        for (JsonNode s : api.list(java.util.Map.of())) {
            sandboxes.add(s.path("id").asText());
            used.add(s.path("snapshot").asText(""));
        }
        Instant cutoff = Instant.now().minus(olderThan);
        List<JsonNode> out = new ArrayList<>();
        String prefix = ownerPrefix();
        for (JsonNode s : api.snapshots(prefix)) {
            String name = s.path("name").asText("");
            Instant created;
            try {
                created = Instant.parse(s.path("createdAt").asText(""));
            } catch (java.time.format.DateTimeParseException e) {
                continue; // no age to judge: left alone
            }
            if (name.startsWith(prefix) && !created.isAfter(cutoff) && !used.contains(name)
                    && !sandboxes.contains(s.path("sourceSandboxId").asText(""))) {
                out.add(s);
            }
        }
        return out;
    }

    /** Takes the snapshot and waits until it is {@code active}; a failed or unfinished one is deleted. */
    static String take(DaytonaApi api, String sandboxId, String privateDir, Deadline deadline) throws IOException {
        if (!privateDir.startsWith(PRIVATE_BASE + "/")) {
            throw new ConfigurationException("the daytona backend snapshots the whole filesystem, and the private dir "
                    + privateDir + " is outside " + PRIVATE_BASE + ", which a sandbox opened from a snapshot clears"
                    + " (airlock.private-dir.base, or airlock.run-dir under airlock.profile=eval, put it there); unset that to take snapshots");
        }
        String name = ownerPrefix() + StdinScripts.randomToken().substring(0, 16).toLowerCase(Locale.ROOT);
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
