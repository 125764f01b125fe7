package dev.airlock.containment;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Airlock's own state (the approvals list, the config file) as it was when the environment's
 * commands could first run, for environments whose commands can write it (the JVM's own host
 * without a sandbox). A command cannot be kept from writing what its user can write, so a change
 * made while commands could run is not honoured: the approvals read back are the witnessed ones
 * (plus those Airlock itself added since), and at close each changed file is put back as it was,
 * the changed one kept beside it for the operator ({@code FILE.changed-EPOCH}), with one warning.
 *
 * <p>Fails closed: a change another Airlock process made in that window is undone as well (the
 * operator approves again, or restores the kept copy); nothing tells the two writers apart.
 */
public final class StateWitness {
    private static final Logger LOG = LoggerFactory.getLogger(StateWitness.class);
    /** Larger state files are not Airlock's (approvals and settings are lines): not witnessed. */
    private static final long MAX_BYTES = 4L << 20;

    private final Map<Path, String> files;
    private final Object lock = new Object();
    /** The witnessed content of each file (empty: absent); null until commands may run. */
    private Map<Path, Optional<byte[]>> expected;
    private final Map<Path, Boolean> warned = new LinkedHashMap<>();

    private StateWitness(Map<Path, String> files) {
        this.files = Map.copyOf(files);
    }

    /** A witness of {@code files} (each with what it is, for messages); nothing is read until {@link #commandsMayRun()}. */
    public static StateWitness of(Map<Path, String> files) {
        return new StateWitness(files);
    }

    /** Records the files as they are now, once: what the operator had before any command could change it. */
    public void commandsMayRun() {
        synchronized (lock) {
            if (expected != null) {
                return;
            }
            Map<Path, Optional<byte[]>> now = new LinkedHashMap<>();
            for (Path f : files.keySet()) {
                read(f).ifPresent(content -> now.put(f, content));
            }
            expected = now;
        }
    }

    /** Whether {@code file} is witnessed and now differs from what was witnessed (plus Airlock's own additions). */
    public boolean changed(Path file) {
        synchronized (lock) {
            Optional<byte[]> want = expected == null ? null : expected.get(file);
            if (want == null) {
                return false;
            }
            Optional<Optional<byte[]>> now = read(file);
            return now.isEmpty() || !same(now.get(), want);
        }
    }

    /**
     * The witnessed lines of {@code file}, when it changed since; empty when it did not (read it as it is).
     * Warns once per file.
     */
    public Optional<List<String>> witnessedLines(Path file) {
        if (!changed(file)) {
            return Optional.empty();
        }
        synchronized (lock) {
            if (warned.put(file, true) == null) {
                LOG.warn("ignoring what changed in {} ({}) while commands of this environment could run; it is put back"
                        + " at close, the changed file kept beside it", file, files.getOrDefault(file, "Airlock's state"));
            }
            byte[] b = expected.get(file).orElse(new byte[0]);
            return Optional.of(new String(b, StandardCharsets.UTF_8).lines().toList());
        }
    }

    /** Airlock itself appended {@code added} to {@code file}: that is the operator's word, so it joins the witnessed content. */
    public void appendedByAirlock(Path file, byte[] added) {
        synchronized (lock) {
            Optional<byte[]> want = expected == null ? null : expected.get(file);
            if (want == null) {
                return;
            }
            byte[] before = want.orElse(new byte[0]);
            byte[] after = Arrays.copyOf(before, before.length + added.length);
            System.arraycopy(added, 0, after, before.length, added.length);
            expected.put(file, Optional.of(after));
        }
    }

    /**
     * Puts every file that changed since commands could run back as it was; the changed one is
     * kept beside it. Returns one line per file put back (also logged as a warning).
     */
    public List<String> undoChanges() {
        List<String> done = new ArrayList<>();
        synchronized (lock) {
            if (expected == null) {
                return done;
            }
            for (Map.Entry<Path, Optional<byte[]>> e : expected.entrySet()) {
                Path f = e.getKey();
                if (!changed(f)) {
                    continue;
                }
                try {
                    Path kept = f.resolveSibling(f.getFileName() + ".changed-" + Instant.now().getEpochSecond());
                    if (Files.exists(f, LinkOption.NOFOLLOW_LINKS)) {
                        Files.move(f, kept, StandardCopyOption.REPLACE_EXISTING);
                    }
                    if (e.getValue().isPresent()) {
                        Path tmp = Files.createTempFile(f.getParent(), ".airlock-restore-", ".part",
                                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                        Files.write(tmp, e.getValue().get());
                        Files.move(tmp, f, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                    }
                    String line = files.getOrDefault(f, "Airlock's state") + " " + f + " changed while commands of this"
                            + " environment could run; it is back as it was, the change kept in " + kept
                            + " (apply it yourself if you made it)";
                    LOG.warn("{}", line);
                    done.add(line);
                } catch (IOException ex) {
                    String line = "cannot put back " + f + " (" + ex.getMessage() + "): it changed while commands of this"
                            + " environment could run; check it before the next run";
                    LOG.warn("{}", line);
                    done.add(line);
                }
            }
        }
        return done;
    }

    private static boolean same(Optional<byte[]> a, Optional<byte[]> b) {
        return a.isPresent() == b.isPresent() && (a.isEmpty() || Arrays.equals(a.get(), b.get()));
    }

    /** The content (empty when absent); empty outer when unreadable or too large to witness. */
    private static Optional<Optional<byte[]>> read(Path f) {
        try {
            if (!Files.exists(f, LinkOption.NOFOLLOW_LINKS)) {
                return Optional.of(Optional.empty());
            }
            if (!Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS) || Files.size(f) > MAX_BYTES) {
                return Optional.of(Optional.of(("<not a small regular file: " + f + ">").getBytes(StandardCharsets.UTF_8)));
            }
            return Optional.of(Optional.of(Files.readAllBytes(f)));
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
