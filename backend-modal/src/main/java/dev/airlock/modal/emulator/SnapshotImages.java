package dev.airlock.modal.emulator;

import io.grpc.Status;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The images filesystem snapshots make: each a copy of a sandbox's root (bytes, modes, owners,
 * links, as {@code cp -a} keeps them) under the emulator's state dir, by an {@code im-} id. A
 * sandbox created from one starts with those files; {@code ImageDelete} removes one; the
 * emulator's close removes them all, so a run leaves none behind.
 */
final class SnapshotImages {
    private static final long COPY_BOUND_SECONDS = 120;

    private final Path dir;
    private final Map<String, Path> images = new ConcurrentHashMap<>();
    /** The image of each snapshot id (the client's idempotency key): a resent snapshot is the same image. */
    private final Map<String, String> bySnapshotId = new ConcurrentHashMap<>();

    SnapshotImages(Path dir) {
        this.dir = dir;
    }

    /** The service's words for an image id it does not know (the SDKs map them to NotFoundError). */
    static RuntimeException unknown(String imageId) {
        return Status.FAILED_PRECONDITION.withDescription("Could not find image with ID " + imageId).asRuntimeException();
    }

    boolean contains(String imageId) {
        return images.containsKey(imageId);
    }

    /** Copies {@code root} to a new image once per {@code snapshotId} (empty: always a new one) and returns its id. */
    String take(Path root, String snapshotId) {
        if (snapshotId.isEmpty()) {
            return copy(root);
        }
        return bySnapshotId.computeIfAbsent(snapshotId, k -> copy(root));
    }

    private String copy(Path root) {
        String id = ModalState.id("im-");
        Path image = dir.resolve(id);
        try {
            Files.createDirectories(image);
            cp(root, image);
        } catch (IOException e) {
            delete(image);
            throw Status.INTERNAL.withDescription("snapshot failed: " + e.getMessage()).asRuntimeException();
        }
        images.put(id, image);
        return id;
    }

    /** Fills a new sandbox's {@code root} with the image's files (over the top level the sandbox was made with). */
    void restore(String imageId, Path root) {
        Path image = images.get(imageId);
        if (image == null) {
            throw unknown(imageId);
        }
        try {
            cp(image, root);
        } catch (IOException e) {
            throw Status.INTERNAL.withDescription("could not start from image " + imageId + ": " + e.getMessage())
                    .asRuntimeException();
        }
    }

    /** {@code ImageDelete}: the image is gone; an unknown id is refused as the service refuses it. */
    void remove(String imageId) {
        Path image = images.remove(imageId);
        if (image == null) {
            throw unknown(imageId);
        }
        bySnapshotId.values().removeIf(imageId::equals);
        delete(image);
    }

    void close() {
        images.keySet().forEach(id -> delete(images.remove(id)));
        bySnapshotId.clear();
    }

    private static void cp(Path from, Path to) throws IOException {
        Process p = new ProcessBuilder(List.of("cp", "-a", "--", from + "/.", to + "/")).redirectErrorStream(true).start();
        try {
            if (!p.waitFor(COPY_BOUND_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("the copy took over " + COPY_BOUND_SECONDS + " s");
            }
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).strip();
            if (p.exitValue() != 0) {
                throw new IOException("cp exited " + p.exitValue() + ": " + out.replace('\n', ' '));
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while copying");
        }
    }

    private static void delete(Path p) {
        if (p == null) {
            return;
        }
        try {
            new ProcessBuilder("rm", "-rf", "--", p.toString()).start().waitFor(COPY_BOUND_SECONDS, TimeUnit.SECONDS);
        } catch (IOException e) {
            // left in the state dir, which the emulator's own cleanup removes
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
