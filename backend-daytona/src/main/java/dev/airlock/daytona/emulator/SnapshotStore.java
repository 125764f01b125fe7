package dev.airlock.daytona.emulator;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The emulator's snapshots taken of sandboxes ({@code POST /sandbox/{id}/snapshot}): each a copy of
 * the sandbox's whole root filesystem, as the service saves it, made {@code active} once copied. A
 * sandbox created with {@code snapshot: NAME} starts from the copy.
 */
final class SnapshotStore {
    private final Path dir;
    private final ObjectMapper json = new ObjectMapper();
    private final Map<String, Snap> byName = new ConcurrentHashMap<>();

    /** One snapshot: its record and its files. */
    static final class Snap {
        final String id = UUID.randomUUID().toString();
        final String name;
        final String source;
        /** The image of the sandbox it was taken of (its tools). */
        final String image;
        final Path files;
        final Instant created = Instant.now();
        volatile String state = "pending";
        volatile String errorReason;

        Snap(String name, String source, String image, Path files) {
            this.name = name;
            this.source = source;
            this.image = image;
            this.files = files;
        }
    }

    SnapshotStore(Path dir) {
        this.dir = dir;
    }

    /** Registers a new snapshot of that name ({@code pending}); empty when the name is taken. */
    Optional<Snap> begin(String name, String sourceSandboxId, String image) {
        Snap s = new Snap(name, sourceSandboxId, image, dir.resolve(UUID.randomUUID().toString()));
        return byName.putIfAbsent(name, s) == null ? Optional.of(s) : Optional.empty();
    }

    /** Copies {@code root} (a sandbox's root filesystem) into the snapshot, which is then {@code active}, or {@code error}. */
    void copy(Snap s, Path root) {
        try {
            Files.createDirectories(s.files);
            copyTree(root, s.files);
            s.state = "active";
        } catch (IOException e) {
            s.errorReason = "copy of the sandbox's filesystem failed: " + e.getMessage();
            s.state = "error";
        }
    }

    /** Lays the snapshot's files over a new sandbox's root. */
    static void restore(Snap s, Path root) throws IOException {
        copyTree(s.files, root);
    }

    /** Those whose name contains {@code part}, oldest first. */
    java.util.List<Snap> matching(String part) {
        return byName.values().stream().filter(s -> s.name.contains(part))
                .sorted(java.util.Comparator.comparing((Snap s) -> s.created)).toList();
    }

    /** By id or by name. */
    Optional<Snap> find(String idOrName) {
        Snap s = byName.get(idOrName);
        return s != null ? Optional.of(s) : byName.values().stream().filter(x -> x.id.equals(idOrName)).findFirst();
    }

    /** Deletes by id (as the service's delete takes it); false when there is none. */
    boolean delete(String id) throws IOException {
        Optional<Snap> s = byName.values().stream().filter(x -> x.id.equals(id)).findFirst();
        if (s.isEmpty() || !byName.remove(s.get().name, s.get())) {
            return false;
        }
        run("rm", "-rf", "--", s.get().files.toString());
        return true;
    }

    /** The service's {@code SnapshotDto} fields a client reads. */
    ObjectNode describe(Snap s) {
        ObjectNode n = json.createObjectNode();
        n.put("id", s.id);
        n.put("organizationId", "emulated-org");
        n.put("general", false);
        n.put("name", s.name);
        n.put("imageName", s.name);
        n.put("state", s.state);
        n.putNull("size");
        n.putNull("entrypoint");
        n.put("cpu", 1);
        n.put("gpu", 0);
        n.put("mem", 1);
        n.put("disk", 3);
        if (s.errorReason == null) {
            n.putNull("errorReason");
        } else {
            n.put("errorReason", s.errorReason);
        }
        n.put("createdAt", s.created.toString());
        n.put("updatedAt", s.created.toString());
        n.putNull("lastUsedAt");
        n.put("sourceSandboxId", s.source);
        n.put("sandboxClass", "container");
        return n;
    }

    /** {@code cp -a FROM/. TO/}: files, modes, owners and links as they are. */
    private static void copyTree(Path from, Path to) throws IOException {
        run("cp", "-a", "--", from + "/.", to + "/");
    }

    private static void run(String... argv) throws IOException {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        try {
            if (!p.waitFor(5, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new IOException(argv[0] + " took over 5 minutes");
            }
            String out = new String(p.getInputStream().readAllBytes()).strip();
            if (p.exitValue() != 0) {
                throw new IOException(argv[0] + " failed: " + out);
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        }
    }
}
