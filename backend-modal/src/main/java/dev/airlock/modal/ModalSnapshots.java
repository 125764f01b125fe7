package dev.airlock.modal;

import dev.airlock.ConfigurationException;
import dev.airlock.remote.CallKind;
import dev.airlock.remote.Resource;
import dev.airlock.shell.Shell;
import dev.airlock.modal.proto.ImageDeleteRequest;
import dev.airlock.modal.proto.ImageFromIdRequest;
import dev.airlock.modal.proto.router.TaskSnapshotFilesystemRequest;
import dev.airlock.spi.Deadline;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;

import java.io.IOException;
import java.util.Optional;
import java.util.UUID;

/**
 * Modal's filesystem snapshots, as the current SDKs take them: {@code TaskSnapshotFilesystem} on
 * the task's router (a client {@code snapshot_id} makes a resend the same snapshot; the image lives
 * {@link #TTL_SECONDS}), whose image id a new sandbox is created from after {@code ImageFromId} finds
 * it. The snapshot holds the whole filesystem, Airlock's private dir included (Modal saves no
 * directory apart): a sandbox made from one removes the private dirs it carries before its
 * environment makes its own ({@link #sweepScript}).
 */
final class ModalSnapshots {
    /** How long a snapshot's image lives on Modal: the SDKs' default, 30 days. */
    static final long TTL_SECONDS = 30L * 24 * 3600;

    private ModalSnapshots() {
    }

    /** Takes a filesystem snapshot of the sandbox's task, bounded by {@code deadline}; returns the image id. */
    static String take(ModalClient client, String sandboxId, Deadline deadline) throws IOException {
        TaskSnapshotFilesystemRequest req = TaskSnapshotFilesystemRequest.newBuilder().setTaskId(client.taskId())
                .setSnapshotId(UUID.randomUUID().toString()).setTtlSeconds(TTL_SECONDS).build();
        String id = client.bounded(CallKind.KEYED, "TaskSnapshotFilesystem", Resource.sandbox(sandboxId), deadline,
                "take the filesystem snapshot", (a, left) -> client.routed(left, r -> r.taskSnapshotFilesystem(req)).getImageId());
        if (id.isBlank()) {
            throw new IOException("Modal's TaskSnapshotFilesystem answered no image id");
        }
        return id;
    }

    /** The image of snapshot {@code imageId}; one line naming it and what to do when Modal has no such image. */
    static String image(ModalClient client, String imageId) {
        Optional<String> found = client.control("ImageFromId", Resource.none(), st -> {
            try {
                return Optional.of(st.imageFromId(ImageFromIdRequest.newBuilder().setImageId(imageId).build()).getImageId());
            } catch (StatusRuntimeException e) {
                if (notFound(e)) {
                    return Optional.empty();
                }
                throw e;
            }
        });
        return found.filter(id -> !id.isBlank()).orElseThrow(() -> new ConfigurationException("Modal has no image "
                + imageId + " (" + ModalSettings.SNAPSHOT + "): take a snapshot with airlock snapshot and use the id it"
                + " prints; a snapshot lives 30 days unless deleted"));
    }

    /** Deletes the snapshot's image; false when Modal has no such image (already gone). */
    static boolean delete(ModalClient client, String imageId) {
        return client.control("ImageDelete", Resource.none(), st -> {
            try {
                st.imageDelete(ImageDeleteRequest.newBuilder().setImageId(imageId).build());
                return true;
            } catch (StatusRuntimeException e) {
                if (notFound(e)) {
                    return false;
                }
                throw e;
            }
        });
    }

    /** The service's two answers for an image it does not know, as the SDKs read them. */
    private static boolean notFound(StatusRuntimeException e) {
        Status s = e.getStatus();
        return s.getCode() == Status.Code.NOT_FOUND || (s.getCode() == Status.Code.FAILED_PRECONDITION
                && String.valueOf(s.getDescription()).contains("Could not find image with ID"));
    }

    /**
     * Removes the private dirs ({@code BASE/airlock-XXXXXXXXXX}, as the core names them) that a
     * sandbox just made from a snapshot carries: no environment uses them (the sandbox is new), and
     * they hold what the environment the snapshot was taken of staged. {@code base} is the core's
     * private dir base (a path, or a shell expression with {@code $}).
     */
    static String sweepScript(String base) {
        String b = base.contains("$") ? "\"" + base + "\"" : Shell.quote(base);
        return String.join("\n",
                "b=" + b,
                "for d in \"$b\"/airlock-??????????; do",
                "  if [ -d \"$d\" ] && [ ! -L \"$d\" ]; then rm -rf -- \"$d\" || exit 1; fi",
                "done",
                "");
    }
}
