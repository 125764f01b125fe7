package dev.airlock.safety;

import dev.airlock.containment.StateWitness;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The "always" approvals: a 0600 file under {@code AIRLOCK_HOME}, one line per approval keyed by
 * backend, target ({@code user@host}) and canonical path, each field URL-encoded. Read afresh on
 * every check so other environments and processes see new entries; a file others may write is not
 * trusted.
 */
final class ApprovalStore {
    static final String FILE_NAME = dev.airlock.containment.OwnState.APPROVALS_FILE;
    private static final Logger LOG = LoggerFactory.getLogger(ApprovalStore.class);
    private static final String HEADER = "# Airlock approvals (scope: always). One per line: backend target path, URL-encoded.\n";

    private final Path file;
    private final Optional<StateWitness> witness;

    ApprovalStore(Path airlockHome) {
        this(airlockHome, Optional.empty());
    }

    /** With a witness, approvals a command may have written while it could run are not read (see {@link StateWitness}). */
    ApprovalStore(Path airlockHome, Optional<StateWitness> witness) {
        this.file = airlockHome.resolve(FILE_NAME);
        this.witness = witness;
    }

    Path file() {
        return file;
    }

    boolean contains(String backend, String target, String path) {
        Optional<List<String>> witnessed = witness.flatMap(w -> w.witnessedLines(file));
        if (witnessed.isPresent()) {
            return witnessed.get().contains(line(backend, target, path));
        }
        if (!Files.isRegularFile(file)) {
            return false;
        }
        try {
            if (writableByOthers()) {
                LOG.warn("ignoring {}: others may write it (chmod 600 it to use it)", file);
                return false;
            }
            String want = line(backend, target, path);
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            return lines.contains(want);
        } catch (IOException e) {
            LOG.warn("cannot read {}: {}", file, e.getMessage());
            return false;
        }
    }

    void add(String backend, String target, String path) throws IOException {
        Path dir = file.getParent();
        if (!Files.isDirectory(dir)) {
            Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
        try (FileChannel ch = FileChannel.open(file, Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            FileLock lock = ch.lock(); // other processes append to the same file
            try {
                Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
                StringBuilder b = new StringBuilder();
                if (ch.size() == 0) {
                    b.append(HEADER);
                }
                b.append(line(backend, target, path)).append('\n');
                byte[] added = b.toString().getBytes(StandardCharsets.UTF_8);
                ch.write(ByteBuffer.wrap(added));
                ch.force(false);
                witness.ifPresent(w -> w.appendedByAirlock(file, added));
            } finally {
                lock.release();
            }
        }
    }

    private boolean writableByOthers() throws IOException {
        try {
            Set<PosixFilePermission> p = Files.getPosixFilePermissions(file);
            return p.contains(PosixFilePermission.GROUP_WRITE) || p.contains(PosixFilePermission.OTHERS_WRITE);
        } catch (UnsupportedOperationException e) {
            return false;
        }
    }

    private static String line(String backend, String target, String path) {
        return enc(backend) + " " + enc(target) + " " + enc(path);
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
