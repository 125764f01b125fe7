package dev.airlock.docker;

import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.NoSuchPathException;
import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.WriteOptions;
import dev.airlock.shell.AsideWrite;
import dev.airlock.shell.Shell;
import dev.airlock.spi.ForwardingRemoteFiles;
import dev.airlock.spi.RawResult;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

/**
 * Writes through Docker's archive API where the daemon writes what the container's commands see,
 * the core's shell implementation everywhere else (and for every other operation). The daemon
 * unpacks an archive into the container's root filesystem or into a volume or bind mount it made;
 * beneath a tmpfs (the default {@code /tmp} of a read-only container, {@code --tmpfs}, or anything
 * a command mounted) the file would land in the layer under the mount, unseen, so those writes,
 * a read-only root, a symlink at or on the way to the target (the shell write judges where it
 * lands) and a stream of unknown length (a tar header holds the size) take the shell path.
 *
 * <p>The core's guard judged the path before this is called. One script then judges the place in
 * the container's own view: the physical parent (no link on the way), the mount that holds it
 * (read from {@code /proc/self/mountinfo} at each write, so a mount made at run time counts), for a
 * exec user of root only (the daemon writes as root and follows a link at the entry's name, which
 * any other user could plant in the directory it writes to), the parents made if asked, and a temp sibling made with {@code mktemp} as the exec user, whose owner
 * the archive entry copies. The archive replaces that temp file, streamed (one buffer at a time);
 * a second script checks the directory is still the same, sets the mode as the shell write does,
 * checks the size and renames over the target. A failure removes the temp file and the
 * directories this write made.
 */
final class DockerFiles extends ForwardingRemoteFiles {
    /** The place script's exit when the archive cannot be trusted to land where commands look: the shell write takes over. */
    private static final int USE_SHELL = 20;

    /** A small script in the container (probe-like: no guard, output capped). */
    interface Raw {
        RawResult run(String script) throws IOException;
    }

    /** Uploads a one-entry archive into a directory of the container. */
    interface Upload {
        void put(String dir, InputStream tar);
    }

    private final Raw raw;
    private final Upload upload;
    private final UnaryOperator<String> expand;
    private final ArchiveMounts mounts;
    private final AtomicLong archived = new AtomicLong();

    DockerFiles(RemoteFiles shell, Raw raw, Upload upload, UnaryOperator<String> expand, ArchiveMounts mounts) {
        super(shell);
        this.raw = raw;
        this.upload = upload;
        this.expand = expand;
        this.mounts = mounts;
    }

    /** How many writes went through the archive API (the rest took the shell path). */
    long archiveWrites() {
        return archived.get();
    }

    @Override
    public void write(String path, Payload content, WriteOptions options) {
        String t = path == null || path.isEmpty() || path.indexOf('\0') >= 0 ? null : expand.apply(path);
        if (t == null || !mounts.writable() || content.length().isEmpty() || !withinLimits(t)) {
            delegate().write(path, content, options); // the shell write reports bad paths in its own words
            return;
        }
        Optional<Place> place = enter(t, options.createParents());
        if (place.isEmpty()) {
            delegate().write(path, content, options);
            return;
        }
        Place p = place.get();
        boolean done = false;
        try {
            put(p, t, content);
            finish(p, t, content.length().getAsLong(), options);
            done = true;
            archived.incrementAndGet();
        } finally {
            if (!done) {
                p.cleanUp();
            }
        }
    }

    /** Where the write lands: the physical directory, the name, the temp file, its owner, and the first directory made. */
    private final class Place {
        final String dir;
        final String name;
        final String temp;
        final String createdFrom;
        final long uid;
        final long gid;

        Place(String[] f) {
            this.dir = f[0];
            this.name = f[1];
            this.temp = f[2];
            this.createdFrom = f[3];
            String[] owner = f[4].trim().split(" ");
            this.uid = Long.parseLong(owner[0]);
            this.gid = Long.parseLong(owner[1]);
        }

        /** The temp file and the directories this write made: gone, best effort. */
        void cleanUp() {
            try {
                raw.run(AsideWrite.cleanUp(dir, createdFrom, Shell.quotePath(temp)));
            } catch (IOException | AirlockException ignored) {
                // best effort: the write's own failure is what the caller hears about
            }
        }
    }

    /**
     * Judges the place and makes the temp sibling (0600, the exec user's); empty when the shell
     * write must do it: a symlink at or on the way to the target, a name mountinfo would escape,
     * or a directory on a mount the daemon does not write through.
     */
    private Optional<Place> enter(String t, boolean createParents) {
        // The daemon unpacks as root and opens the entry's path without O_NOFOLLOW: an exec user
        // other than root can always swap the temp file (it sits in a directory that user writes
        // to) for a link to a file only root may write, between this script and the upload. So the
        // archive is root's route only; root could write anywhere in the container itself.
        String checks = mounts.checkScript("e", USE_SHELL)
                + "[ \"$(id -u)\" = 0 ] || exit " + USE_SHELL + "\n";
        RawResult r = run(AsideWrite.enter(t, createParents, USE_SHELL, checks, "printf '\\0%s' \"$(stat -c '%u %g' -- \"$tmp\")\"\n"));
        switch (r.exit()) {
            case 0 -> {
                String[] f = AsideWrite.places(r.stdout(), 1, t);
                if (!f[4].trim().matches("[0-9]+ [0-9]+")) {
                    throw new BackendException("write to " + t + ": the target reported no owner for the temp file");
                }
                Place p = new Place(f);
                if (!TarEntryStream.fitsOwner(p.uid) || !TarEntryStream.fitsOwner(p.gid)) {
                    p.cleanUp(); // an id beyond the tar header's seven octal digits: the shell write takes it
                    return Optional.empty();
                }
                return Optional.of(p);
            }
            case USE_SHELL -> {
                return Optional.empty();
            }
            case 2 -> throw new NoSuchPathException(parent(t));
            default -> throw failure(t, r);
        }
    }

    /** Streams the content as one archive entry over the temp file; a source that failed is named as the cause. */
    private void put(Place p, String t, Payload content) {
        InputStream in;
        try {
            in = content.open();
        } catch (IOException e) {
            throw new BackendException("cannot open the content to write: " + e.getMessage(), e);
        }
        TarEntryStream tar;
        try {
            tar = new TarEntryStream(p.temp, 0600, p.uid, p.gid, content.length().getAsLong(),
                    System.currentTimeMillis() / 1000, in);
        } catch (RuntimeException e) {
            try {
                in.close();
            } catch (IOException ignored) {
                // the header's failure is the one to report
            }
            throw e;
        }
        try (tar) {
            upload.put(p.dir, tar);
        } catch (IOException e) {
            throw new BackendException("write to " + t + ": closing the content failed: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throwIfSourceFailed(t, tar);
            throw e;
        }
        // A source that failed ends the archive early, and the daemon answered after it stopped
        // unpacking: usually an error, but a tail cut at a block's end can look whole to it.
        throwIfSourceFailed(t, tar);
    }

    /** The content source's failure is the write's, whatever the daemon answered. */
    private static void throwIfSourceFailed(String t, TarEntryStream tar) {
        IOException source = tar.failure();
        if (source != null) {
            throw new BackendException("write to " + t + " failed on docker: " + source.getMessage(), source);
        }
    }

    /** Checks the directory and the uploaded file, sets the mode, checks the size, renames over the target. */
    private void finish(Place p, String t, long size, WriteOptions options) {
        String dir = Shell.quotePath(p.dir);
        StringBuilder s = new StringBuilder();
        s.append("cd -P -- ").append(dir).append(" || exit 4\n")
                .append("[ \"$(pwd -P)\" = ").append(dir).append(" ] || { rm -f -- ").append(Shell.quotePath(p.dir + "/" + p.temp))
                .append("; echo \"the directory changed while writing; nothing was written\" >&2; exit 11; }\n")
                .append("n=").append(Shell.quotePath(p.name)).append("\ntmp=").append(Shell.quotePath(p.temp)).append('\n')
                .append("trap 'rm -f -- \"$tmp\"' EXIT\n")
                .append("trap 'exit 143' TERM INT HUP\n")
                .append("[ -f \"$tmp\" ] && [ ! -L \"$tmp\" ] || { echo \"the uploaded file is not where it was put; nothing was written\" >&2; exit 7; }\n")
                .append(AsideWrite.refuseDirectory(t))
                .append(AsideWrite.mode(options))
                .append(AsideWrite.checkSize(size))
                .append("touch -c -- \"$tmp\" 2>/dev/null\n") // the target's clock, as the shell write's file has, not the header's whole second
                .append(AsideWrite.rename(t))
                .append("trap - EXIT\n");
        RawResult r = run(s.toString());
        if (r.exit() != 0) {
            throw failure(t, r);
        }
    }

    // ---------------------------------------------------------------- helpers

    private RawResult run(String script) {
        try {
            return raw.run(script);
        } catch (IOException e) {
            throw new BackendException("a file operation on docker failed: " + e.getMessage(), e);
        }
    }

    /** The shell write's wording: {@code write PATH failed on docker: FIRST STDERR LINE}. */
    private static BackendException failure(String path, RawResult r) {
        String why = r.stderrLine();
        return new BackendException("write " + path + " failed on docker: " + (why.isEmpty() ? "exit " + r.exit() : why));
    }

    /** Whether the path is within Linux's PATH_MAX and NAME_MAX (the shell write refuses others in its words). */
    private static boolean withinLimits(String t) {
        if (t.getBytes(StandardCharsets.UTF_8).length > 4095) {
            return false;
        }
        for (String c : t.split("/")) {
            if (c.getBytes(StandardCharsets.UTF_8).length > 255) {
                return false;
            }
        }
        return true;
    }

    private static String parent(String path) {
        int slash = path.lastIndexOf('/');
        return slash <= 0 ? "/" : path.substring(0, slash);
    }
}
