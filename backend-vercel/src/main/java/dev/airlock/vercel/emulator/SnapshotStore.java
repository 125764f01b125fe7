package dev.airlock.vercel.emulator;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The emulator's snapshots: a copy of a stopped session's root (files, dirs, symlinks, their
 * modes) under the emulator's state dir, keyed by an id shaped like the service's
 * ({@code snap_...}). As the service: a deleted snapshot is kept as {@code status: deleted}
 * (its files go), and one past its {@code expiresAt} counts as gone.
 */
final class SnapshotStore {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One snapshot, as {@code GET /v2/sandboxes/snapshots/{id}} answers it. */
    record Snapshot(String id, String sourceSessionId, String sandboxName, Path files, long sizeBytes, long createdAt,
                    long expiresAt, String status) {
        /** Whether a create from it starts: neither deleted nor past its expiry. */
        boolean usable(long now) {
            return status.equals("created") && (expiresAt == 0 || now < expiresAt);
        }

        ObjectNode json() {
            ObjectNode n = JSON.createObjectNode();
            n.put("id", id).put("sourceSessionId", sourceSessionId).put("region", "iad1").put("status", status)
                    .put("sizeBytes", sizeBytes).put("createdAt", createdAt).put("updatedAt", createdAt);
            n.putArray("regions").add("iad1");
            if (expiresAt != 0) {
                n.put("expiresAt", expiresAt);
            }
            return n;
        }

        Snapshot deleted() {
            return new Snapshot(id, sourceSessionId, sandboxName, files, sizeBytes, createdAt, expiresAt, "deleted");
        }
    }

    private final Path dir;
    private final Map<String, Snapshot> snapshots = new ConcurrentHashMap<>();

    SnapshotStore(Path dir) {
        this.dir = dir;
    }

    /** Copies {@code root} (the session's, already stopped) into a new snapshot; {@code expiration} ms, 0 never. */
    Snapshot take(String sessionId, String sandboxName, Path root, long expiration) throws IOException {
        String id = "snap_" + UUID.randomUUID().toString().replace("-", "").substring(0, 24);
        Path files = dir.resolve(id);
        Files.createDirectories(dir);
        long size = copyTree(root, files);
        long now = System.currentTimeMillis();
        Snapshot s = new Snapshot(id, sessionId, sandboxName, files, size, now, expiration == 0 ? 0 : now + expiration, "created");
        snapshots.put(id, s);
        return s;
    }

    Optional<Snapshot> get(String id) {
        return Optional.ofNullable(snapshots.get(id));
    }

    /** Marks it deleted and removes its files; empty when there is no such snapshot. */
    Optional<Snapshot> delete(String id) {
        Snapshot s = snapshots.computeIfPresent(id, (k, v) -> v.deleted());
        if (s != null) {
            deleteTree(s.files());
        }
        return Optional.ofNullable(s);
    }

    /** Deletes every snapshot taken of {@code sandboxName} ({@code deleteOrphanSnapshots} on a sandbox delete). */
    void deleteOf(String sandboxName) {
        snapshots.values().stream().filter(s -> s.sandboxName().equals(sandboxName)).forEach(s -> delete(s.id()));
    }

    /** The snapshot's files over {@code root} (a fresh sandbox root): what it held comes back as it was. */
    void restoreInto(Snapshot s, Path root) throws IOException {
        copyTree(s.files(), root);
    }

    /** Removes every snapshot's files (the emulator closes). */
    void close() {
        deleteTree(dir);
    }

    /**
     * Copies {@code from} onto {@code to}: dirs made where missing (an existing one, such as a fresh
     * root's sticky {@code /tmp}, keeps its own mode), files and symlinks replaced, with their modes.
     * Returns the bytes of the regular files copied.
     */
    private static long copyTree(Path from, Path to) throws IOException {
        AtomicLong bytes = new AtomicLong();
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
                Path target = to.resolve(from.relativize(d).toString());
                if (!Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
                    Files.copy(d, target, StandardCopyOption.COPY_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) throws IOException {
                Path target = to.resolve(from.relativize(f).toString());
                Files.copy(f, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.COPY_ATTRIBUTES,
                        LinkOption.NOFOLLOW_LINKS);
                if (attrs.isRegularFile()) {
                    bytes.addAndGet(attrs.size());
                }
                return FileVisitResult.CONTINUE;
            }
        });
        return bytes.get();
    }

    private static void deleteTree(Path p) {
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (var paths = Files.walk(p)) {
            paths.sorted(Comparator.reverseOrder()).forEach(x -> {
                try {
                    Files.deleteIfExists(x);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove the snapshot files " + p, e);
        }
    }
}
