package dev.airlock.spi;

import dev.airlock.settings.AirlockHome;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The snapshots this user's Airlock took on a service whose snapshots carry no label to find them
 * by (Modal's images, Vercel's snapshots): what {@code gc} reads to know which are its own. One
 * 0600 file per backend under {@code $AIRLOCK_HOME/snapshots/}, a line per snapshot (when taken,
 * its id, the sandbox it was taken of), changed under an exclusive lock on a file beside it that
 * is never replaced, so processes taking snapshots and a {@code gc} at once neither lose nor
 * duplicate a line. A file others may write
 * is not trusted: it is read as empty, so nothing is deleted on its word.
 */
public final class SnapshotLedger {
    /** A service's id: no white space or control characters, so one per line, and short. */
    private static final Pattern ID = Pattern.compile("[\\x21-\\x7e]{1,256}");
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

    /** One snapshot taken: its id, the sandbox it was taken of, and when. */
    public record Entry(String id, String source, Instant taken) {
    }

    private final Path file;
    /**
     * This JVM's own guard per ledger: a file lock is held per process, and a second one asked by
     * another thread of it would fail (OverlappingFileLockException) instead of waiting.
     */
    private static final Map<Path, Object> IN_PROCESS = new java.util.concurrent.ConcurrentHashMap<>();
    private final Object inProcess;

    /** The ledger in {@code file} (made with its directory at the first record). */
    public SnapshotLedger(Path file) {
        this.file = file;
        this.inProcess = IN_PROCESS.computeIfAbsent(file.toAbsolutePath().normalize(), k -> new Object());
    }

    /** {@code backend}'s ledger under {@code $AIRLOCK_HOME} of this process's environment. */
    public static SnapshotLedger of(String backend) {
        return of(backend, System.getenv());
    }

    /** {@code backend}'s ledger under {@code $AIRLOCK_HOME} of {@code env}. */
    public static SnapshotLedger of(String backend, Map<String, String> env) {
        return new SnapshotLedger(AirlockHome.resolve(env).resolve("snapshots").resolve(backend + ".ledger"));
    }

    public Path file() {
        return file;
    }

    /**
     * Adds a snapshot just taken.
     *
     * @throws IllegalArgumentException for an id or source with white space or control characters (never a service's)
     * @throws UncheckedIOException     when the file cannot be written: the caller says the snapshot will not be collected
     */
    public void record(String id, String source, Instant taken) {
        check(id, "snapshot id");
        check(source, "source");
        String line = taken.getEpochSecond() + "\t" + id + "\t" + source + "\n";
        synchronized (inProcess) {
            try (FileChannel lock = lock(); FileLock ignored = lock.lock();
                 FileChannel ch = open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
                // A line a crash cut short is ended with two empty fields, which no well-formed line
                // has, so it stays unread (its source may be cut short too) and never heads this one.
                ByteBuffer b = StandardCharsets.UTF_8.encode(endsTorn() ? "\t\t\n" + line : line);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot record the snapshot " + id + " in " + file + ": " + e.getMessage(), e);
            }
        }
    }

    /** The snapshots recorded, oldest first; none when there is no file or others may write it. */
    public List<Entry> entries() {
        synchronized (inProcess) {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS) || !ownersOnly()) {
                return List.of();
            }
            try (FileChannel lock = lock(); FileLock ignored = lock.lock(); FileChannel ch = open(file, StandardOpenOption.READ)) {
                return parse(read(ch));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
            }
        }
    }

    /** Drops the entries of {@code ids} (deleted, or gone from the service); the others stay, lines added meanwhile too. */
    public void forget(Collection<String> ids) {
        synchronized (inProcess) {
            if (ids.isEmpty() || !Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                return;
            }
            try (FileChannel lock = lock(); FileLock ignored = lock.lock(); FileChannel ch = open(file, StandardOpenOption.READ)) {
                StringBuilder kept = new StringBuilder();
                for (Entry e : parse(read(ch))) {
                    if (!ids.contains(e.id())) {
                        kept.append(e.taken().getEpochSecond()).append('\t').append(e.id()).append('\t').append(e.source()).append('\n');
                    }
                }
                // Written beside and renamed over while the lock is held: a crash leaves the old file or the new one.
                Path next = file.resolveSibling(file.getFileName() + ".next");
                try (FileChannel out = open(next, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                        StandardOpenOption.TRUNCATE_EXISTING)) {
                    ByteBuffer b = StandardCharsets.UTF_8.encode(kept.toString());
                    while (b.hasRemaining()) {
                        out.write(b);
                    }
                }
                Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot update " + file + ": " + e.getMessage(), e);
            }
        }
    }

    /** Whether the file's last byte is not a line's end (a write cut short); read under the lock. */
    private boolean endsTorn() throws IOException {
        try (FileChannel ch = open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size == 0) {
                return false;
            }
            ByteBuffer last = ByteBuffer.allocate(1);
            ch.read(last, size - 1);
            return last.get(0) != '\n';
        }
    }

    /** The lock file beside the ledger (made at need, never replaced, so every process locks the same one). */
    private FileChannel lock() throws IOException {
        Files.createDirectories(file.getParent());
        return open(file.resolveSibling(file.getFileName() + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    }

    private static FileChannel open(Path p, StandardOpenOption... options) throws IOException {
        Set<java.nio.file.OpenOption> o = new java.util.HashSet<>(List.of(options));
        o.add(LinkOption.NOFOLLOW_LINKS);
        return FileChannel.open(p, o, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
    }

    private boolean ownersOnly() {
        try {
            Set<PosixFilePermission> p = Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS);
            return !p.contains(PosixFilePermission.GROUP_WRITE) && !p.contains(PosixFilePermission.OTHERS_WRITE);
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /** The ledger's bound: some 200 000 snapshots. Past it the file is refused whole, never read in part. */
    private static final long MAX_BYTES = 16L << 20;

    private String read(FileChannel ch) throws IOException {
        if (ch.size() > MAX_BYTES) {
            throw new IOException("it is over " + (MAX_BYTES >> 20) + " MiB; move it aside (its snapshots then expire"
                    + " on the service's schedule) and run gc again");
        }
        ByteBuffer all = ByteBuffer.allocate((int) ch.size());
        while (all.hasRemaining() && ch.read(all, all.position()) > 0) {
            // read to the end
        }
        all.flip();
        return StandardCharsets.UTF_8.decode(all).toString();
    }

    /**
     * The well-formed lines; a torn or foreign line is skipped (it names nothing to delete), and so
     * is a last one without its line's end (a write cut short: its source may be cut short too).
     */
    private static List<Entry> parse(String text) {
        List<Entry> out = new ArrayList<>();
        int end = text.lastIndexOf('\n');
        for (String line : (end < 0 ? "" : text.substring(0, end)).split("\n")) {
            String[] f = line.split("\t", -1);
            if (f.length != 3 || !ID.matcher(f[1]).matches() || !ID.matcher(f[2]).matches()) {
                continue;
            }
            try {
                out.add(new Entry(f[1], f[2], Instant.ofEpochSecond(Long.parseLong(f[0]))));
            } catch (NumberFormatException | java.time.DateTimeException e) {
                // skipped, as above
            }
        }
        return out;
    }

    private static void check(String s, String what) {
        if (s == null || !ID.matcher(s).matches()) {
            throw new IllegalArgumentException("a " + what + " for the snapshot ledger must be 1-256 printable characters"
                    + " without spaces: " + s);
        }
    }
}
