package dev.airlock.modal;

import dev.airlock.AirlockException;
import dev.airlock.modal.proto.SandboxInfo;
import dev.airlock.modal.proto.SandboxTag;
import dev.airlock.spi.SnapshotLedger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code airlock gc} for the filesystem snapshots Airlock took on Modal. Their images carry no
 * tag, so the {@link SnapshotLedger} ({@code $AIRLOCK_HOME/snapshots/modal.ledger}) is what says
 * which are ours: each line is an image id, when it was taken, and its source as
 * {@code SANDBOX@SERVER#ENVIRONMENT}, so a gc against one Modal (or emulator, or environment)
 * never judges, deletes or forgets a snapshot taken on another.
 *
 * <p>A snapshot is deleted when it is older than {@code --older-than}, its source sandbox no longer
 * runs, and no running sandbox carries the {@link #FROM_SNAPSHOT} tag naming it (every sandbox
 * Airlock creates from a snapshot is tagged so at create). Modal says nothing else about which image
 * a sandbox started from, so a sandbox made from the image by other tools is not seen: that is the
 * documented limit. A source terminated by this same gc run counts as still there (the next run takes
 * the snapshot), as on Daytona.
 */
final class ModalSnapshotGc {
    /** The tag on a sandbox created from a snapshot: the image id it was made from. */
    static final String FROM_SNAPSHOT = ModalGc.PREFIX + "snapshot";
    private static final Logger LOG = LoggerFactory.getLogger(ModalSnapshotGc.class);

    private ModalSnapshotGc() {
    }

    /** Which Modal a ledger line belongs to: the control plane's URL and the environment. */
    static String scope(ModalSettings s) {
        return s.serverUrl() + "#" + s.environment();
    }

    /**
     * Records a snapshot just taken of {@code sandboxId}. A ledger that cannot be written costs only
     * the collection: the snapshot stands, and one warning line says so and why.
     */
    static void record(SnapshotLedger ledger, ModalSettings s, String imageId, String sandboxId) {
        try {
            ledger.record(imageId, sandboxId + "@" + scope(s), Instant.now());
        } catch (RuntimeException e) { // unwritable, a bad id, a lock this JVM holds through another path: the snapshot stands
            LOG.warn("the snapshot {} will not be collected by airlock gc (it expires after 30 days): {}", imageId, why(e));
        }
    }

    /**
     * Deletes this ledger's snapshots of {@code client}'s Modal that nothing needs (see the class
     * comment), forgets them and the ones Modal no longer has; returns the image ids deleted.
     *
     * @param terminatedNow the sandboxes this gc run just terminated: still counted as running
     */
    static List<String> collect(ModalClient client, SnapshotLedger ledger, Duration olderThan, Set<String> terminatedNow) {
        String suffix = "@" + scope(client.settings);
        Instant cutoff = Instant.now().minus(olderThan);
        List<SnapshotLedger.Entry> old = ledger.entries().stream()
                .filter(e -> e.source().endsWith(suffix) && !e.taken().isAfter(cutoff)).toList();
        if (old.isEmpty()) {
            return List.of();
        }
        Set<String> running = new HashSet<>(terminatedNow);
        Set<String> inUse = new HashSet<>();
        for (boolean v2 : List.of(false, true)) {
            for (SandboxInfo info : ModalGc.list(client, v2, List.<SandboxTag>of())) {
                running.add(info.getId());
                String from = ModalGc.tagMap(info).get(FROM_SNAPSHOT);
                if (from != null) {
                    inUse.add(from);
                }
            }
        }
        List<String> deleted = new ArrayList<>();
        List<String> gone = new ArrayList<>();
        for (SnapshotLedger.Entry e : old) {
            String source = e.source().substring(0, e.source().length() - suffix.length());
            if (running.contains(source) || inUse.contains(e.id())) {
                continue;
            }
            try {
                if (ModalSnapshots.delete(client, e.id())) {
                    deleted.add(e.id());
                }
                gone.add(e.id()); // deleted now, or Modal no longer has it (deleted by hand, or expired)
            } catch (AirlockException failed) {
                // This one stays in the ledger for the next run; the others are not held up by it.
                LOG.warn("gc left the Modal snapshot {}: {}", e.id(), why(failed));
            }
        }
        try {
            ledger.forget(gone);
        } catch (UncheckedIOException e) {
            // The images are gone all the same; the next run finds them gone and forgets them then.
            LOG.warn("the snapshots deleted stay listed in the ledger until the next gc: {}", why(e));
        }
        return deleted;
    }

    /** One line: the message, and the kind of I/O failure when the message is only a path. */
    private static String why(RuntimeException e) {
        String kind = e.getCause() == null ? "" : " (" + e.getCause().getClass().getSimpleName() + ")";
        return String.valueOf(e.getMessage()).replace('\n', ' ') + kind;
    }
}
