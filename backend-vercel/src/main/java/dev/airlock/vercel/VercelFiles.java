package dev.airlock.vercel;

import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.ConfigurationException;
import dev.airlock.DeniedException;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.NoSuchPathException;
import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.WriteOptions;
import dev.airlock.shell.AsideWrite;
import dev.airlock.shell.Shell;
import dev.airlock.shell.SpecialFiles;
import dev.airlock.shell.StdinScripts;
import dev.airlock.spi.ForwardingRemoteFiles;
import dev.airlock.spi.RawResult;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * Files through Vercel's file API where it has one. Content that can be read again (bytes, a file)
 * is two round trips: one {@code fs/write} (a gzipped tar, header mode 0600, streamed from its
 * source a buffer at a time and read again if the upload is retried) into the environment's
 * private staging dir, then one command that judges the place, moves the upload beside the
 * target, sets the mode, checks the size and renames it over the target. Airlock's own scripts
 * here run as one {@code POST cmd} each, waited on in the same call
 * ({@link VercelApi#runToEnd}). A stream, which cannot be read again, is read only once the place
 * is judged (the shell write may still have to take it) and goes up beside the target, in parts
 * of {@link #PART} bytes joined there when it is larger (no more than one part is ever held in
 * memory, and each part is one whole retryable upload); a last script finishes it.
 * {@code read} streams {@code fs/read}. The rest (stat, list, copyIn, copyOut) and the cases the
 * native path cannot judge (a symlinked target or a symlink on the way to it, which the shell
 * implementation resolves and judges where the write lands) go through the core's shell
 * implementation.
 *
 * <p>The core wraps this in its guarded files, so every change passes the write tiers first.
 */
final class VercelFiles extends ForwardingRemoteFiles {
    /** The size of one upload: small enough to hold in a 64 MiB heap, big enough to be few. */
    static final int PART = 8 << 20;
    private static final int PATH_MAX = 4095;
    private static final int NAME_MAX = 255;
    /** The place script's exit when the native write cannot judge the place: the shell write does it. */
    private static final int USE_SHELL = 20;
    /** The name prefix of an upload waiting in the staging dir for its place. */
    static final String STAGED_PREFIX = ".airlock-upload-";

    /** A small script through the environment's raw runs (probe-like: no guard, output capped). */
    interface Raw {
        RawResult run(String script) throws IOException;
    }

    /** The environment's removal of a staged file: its bytes are gone even where {@code rm} cannot run. */
    interface RemoveStaged {
        void remove(String path) throws IOException;
    }

    private final VercelApi api;
    /** The sandbox's current session (a snapshot moves the sandbox onto a new one). */
    private final Supplier<String> sessionId;
    private final Raw raw;
    private final UnaryOperator<String> expand;
    private final Supplier<String> stagingDir;
    private final RemoveStaged removeStaged;
    private final String backend;

    /**
     * {@code stagingDir}: the environment's private 0700 dir for staged files (asked per write: it
     * is known once the environment is up), where uploads wait for their place and from which
     * {@code removeStaged} removes them when a write ends early.
     */
    VercelFiles(VercelApi api, Supplier<String> sessionId, RemoteFiles shell, Raw raw, UnaryOperator<String> expand,
                Supplier<String> stagingDir, RemoveStaged removeStaged, String backend) {
        super(shell);
        this.api = api;
        this.sessionId = sessionId;
        this.raw = raw;
        this.expand = expand;
        this.stagingDir = stagingDir;
        this.removeStaged = removeStaged;
        this.backend = backend;
    }

    // ---------------------------------------------------------------- write

    @Override
    public void write(String path, Payload content, WriteOptions options) {
        String t = resolve(path);
        checkLength(t);
        if (content.isRepeatable() && content.length().isPresent()) {
            writeStaged(path, t, content, options);
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
            int parts = upload(p, content);
            finish(p, t, parts, options);
            done = true;
        } finally {
            if (!done) {
                p.cleanUp();
            }
        }
    }

    /**
     * Content that can be read again: one upload into the staging dir, then one command that judges
     * the place, moves the upload beside the target (a rename, or a copy where the staging dir is
     * on another filesystem), sets the mode, checks the size and renames it over the target
     * ({@link #placeStaged}). Two round trips, where a script per step cost one command each. The
     * command removes the upload whatever ends it (an exit trap), the shell write taking over
     * included; an upload that failed, or a command whose end was not heard, is removed from here.
     */
    private void writeStaged(String path, String t, Payload content, WriteOptions options) {
        String staged = stagingDir.get() + "/" + STAGED_PREFIX + StdinScripts.randomToken();
        Streamed source = new Streamed(content, content.length().getAsLong());
        RawResult r;
        try {
            api.write(sessionId.get(), staged, 0600, source);
            r = run(placeStaged(t, staged, source.size, options));
        } catch (RuntimeException e) {
            removeQuietly(staged);
            throw e;
        }
        switch (r.exit()) {
            case 0 -> {
            }
            case USE_SHELL -> delegate().write(path, content, options);
            case 2 -> throw new NoSuchPathException(parent(t));
            default -> throw failure("write", t, r);
        }
    }

    /**
     * The one command of a staged write: {@link AsideWrite#enter} (exit {@link #USE_SHELL} where a
     * symlink is at the target or on the way, 2 without the parent), then the core's atomic-write
     * steps on the temp sibling the upload was moved over. On any exit before the rename, the
     * upload, the temp file and the directories this write made are removed.
     */
    static String placeStaged(String t, String staged, long size, WriteOptions options) {
        return "st=" + Shell.quotePath(staged) + "\ntmp=\nmade=\nd=\n"
                + "trap 'rm -f -- \"$st\" ${tmp:+\"$tmp\"}; [ -z \"$made\" ] || { c=$d; e=$made\n"
                + AsideWrite.removeMadeLoop() + "}' EXIT\n"
                + "trap 'exit 143' TERM INT HUP\n"
                + AsideWrite.enter(t, options.createParents(), USE_SHELL, "", "")
                + "mv -f -- \"$st\" \"$tmp\" && [ -f \"$tmp\" ] || { echo \"the uploaded file is gone\" >&2; exit 7; }\n"
                + AsideWrite.refuseDirectory(t)
                + AsideWrite.mode(options)
                + AsideWrite.checkSize(size)
                + AsideWrite.rename(t)
                + "trap - EXIT\n";
    }

    /** Best effort: the staging dir goes with the environment. */
    private void removeQuietly(String staged) {
        try {
            removeStaged.remove(staged);
        } catch (IOException | AirlockException ignored) {
            // the write's own failure is what the caller hears about
        }
    }

    /** Where the write lands, and what to undo when it fails. */
    private final class Place {
        final String dir;
        final String name;
        final String temp;
        final String createdFrom;
        long sent;

        Place(String dir, String name, String temp, String createdFrom) {
            this.dir = dir;
            this.name = name;
            this.temp = temp;
            this.createdFrom = createdFrom;
        }

        String tempPath() {
            return (dir.equals("/") ? "" : dir) + "/" + temp;
        }

        /** The temp file, its parts, and the directories this write made: all gone, best effort. */
        void cleanUp() {
            try {
                raw.run(AsideWrite.cleanUp(dir, createdFrom, Shell.quotePath(temp) + " " + Shell.quotePath(temp) + ".p*"));
            } catch (IOException | AirlockException ignored) {
                // best effort: the write's own failure is what the caller hears about
            }
        }
    }

    /**
     * Checks the place and makes the temp sibling (0600). Empty when a symlink is at the target or
     * on the way to it: the guard judged the path as written, so the shell write, which judges the
     * physical place too, takes over.
     */
    private Optional<Place> enter(String t, boolean createParents) {
        RawResult r = run(AsideWrite.enter(t, createParents, USE_SHELL, "", ""));
        switch (r.exit()) {
            case 0 -> {
                String[] f = AsideWrite.places(r.stdout(), 0, t);
                return Optional.of(new Place(f[0], f[1], f[2], f[3]));
            }
            case USE_SHELL -> {
                return Optional.empty();
            }
            case 2 -> throw new NoSuchPathException(parent(t));
            default -> throw failure("write", t, r);
        }
    }

    /**
     * Uploads the content as one file, or a stream larger than one part as numbered parts; returns
     * the part count (0: one file).
     */
    private int upload(Place p, Payload content) {
        if (content.isRepeatable() && content.length().isPresent()) {
            Streamed source = new Streamed(content, content.length().getAsLong());
            api.write(sessionId.get(), p.tempPath(), 0600, source);
            p.sent = source.size;
            return 0;
        }
        byte[] buf = new byte[PART];
        try (InputStream in = content.open()) {
            int n = in.readNBytes(buf, 0, PART);
            int next = n == PART ? in.read() : -1;
            if (next < 0) {
                put(p.tempPath(), buf, n);
                p.sent = n;
                check(content, p.sent);
                return 0;
            }
            int part = 0;
            while (true) {
                put(p.tempPath() + ".p" + part++, buf, n);
                p.sent += n;
                if (next < 0) {
                    break;
                }
                buf[0] = (byte) next;
                n = 1 + in.readNBytes(buf, 1, PART - 1);
                next = n == PART ? in.read() : -1;
            }
            check(content, p.sent);
            return part;
        } catch (IOException e) {
            throw new BackendException("cannot read the content to write: " + e.getMessage(), e);
        }
    }

    private static void check(Payload content, long sent) {
        if (content.length().isPresent() && content.length().getAsLong() != sent) {
            throw new BackendException(notAsDeclared(sent, content.length().getAsLong()));
        }
    }

    /** The one wording for content whose length is not the one it declared, on both upload routes. */
    private static String notAsDeclared(long sent, long declared) {
        return "the content to write was " + sent + " bytes, not the " + declared + " it declared; nothing was written";
    }

    private void put(String path, byte[] data, int length) {
        api.write(sessionId.get(), path, 0600, new VercelApi.TarSource() {
            @Override
            public long size() {
                return length;
            }

            @Override
            public void writeTo(OutputStream o) throws IOException {
                o.write(data, 0, length);
            }
        });
    }

    /**
     * Content that can be read again, streamed into the upload a buffer at a time (again on a
     * retry). Content that cannot be read, or is not the length it declared, is a
     * {@link VercelApi.ContentFailure}: the write's reason, whatever the upload then reports.
     */
    private static final class Streamed implements VercelApi.TarSource {
        private static final int BUFFER = 64 << 10;
        final Payload content;
        final long size;

        Streamed(Payload content, long size) {
            this.content = content;
            this.size = size;
        }

        @Override
        public long size() {
            return size;
        }

        @Override
        public void writeTo(OutputStream o) throws IOException {
            byte[] buf = new byte[BUFFER];
            long left = size;
            InputStream in;
            try {
                in = content.open();
            } catch (IOException e) {
                throw unreadable(e);
            }
            try (in) {
                while (left > 0) {
                    int n = read(in, buf, (int) Math.min(buf.length, left));
                    if (n < 0) {
                        throw new VercelApi.ContentFailure(notAsDeclared(size - left, size));
                    }
                    o.write(buf, 0, n); // a failure here is the upload's own, not the content's
                    left -= n;
                }
                if (read(in, buf, 1) >= 0) {
                    throw new VercelApi.ContentFailure("the content to write was longer than the " + size
                            + " bytes it declared; nothing was written");
                }
            }
        }

        private static int read(InputStream in, byte[] buf, int len) throws IOException {
            try {
                return in.read(buf, 0, len);
            } catch (IOException e) {
                throw unreadable(e);
            }
        }

        private static VercelApi.ContentFailure unreadable(IOException e) {
            VercelApi.ContentFailure f = new VercelApi.ContentFailure("cannot read the content to write: " + e.getMessage());
            f.initCause(e);
            return f;
        }
    }

    /** Joins the parts, sets the mode, checks the size, renames over the target: the core's atomic-write steps. */
    private void finish(Place p, String t, int parts, WriteOptions options) {
        String dir = Shell.quotePath(p.dir);
        StringBuilder s = new StringBuilder();
        s.append("cd -P -- ").append(dir).append(" || exit 4\n")
                .append("[ \"$(pwd -P)\" = ").append(dir).append(" ] || { echo \"the directory changed while writing; nothing was written\" >&2; exit 11; }\n")
                .append("n=").append(Shell.quotePath(p.name)).append("\ntmp=").append(Shell.quotePath(p.temp)).append('\n')
                .append("trap 'rm -f -- \"$tmp\" \"$tmp\".p*' EXIT\n")
                .append("trap 'exit 143' TERM INT HUP\n");
        s.append("[ -f \"$tmp\" ] || { echo \"the uploaded file is gone\" >&2; exit 7; }\n");
        if (parts > 0) {
            s.append("i=0; while [ $i -lt ").append(parts).append(" ]; do cat -- \"$tmp.p$i\" >> \"$tmp\" || exit 7;"
                    + " rm -f -- \"$tmp.p$i\"; i=$((i+1)); done\n");
        }
        s.append(AsideWrite.refuseDirectory(t))
                .append(AsideWrite.mode(options))
                .append(AsideWrite.checkSize(p.sent))
                .append(AsideWrite.rename(t))
                .append("trap - EXIT\n");
        RawResult r = run(s.toString());
        if (r.exit() != 0) {
            throw failure("write", t, r);
        }
    }

    // ---------------------------------------------------------------- read

    /** {@code fs/read} streamed; what it cannot read (missing, a directory) the shell read reports precisely. */
    @Override
    public InputStream read(String path) {
        String t = resolve(path);
        try {
            return api.read(sessionId.get(), t);
        } catch (AirlockException e) {
            if (VercelApi.status(e) == 404) {
                return delegate().read(path);
            }
            throw e;
        }
    }

    // ---------------------------------------------------------------- delete, mkdirs (stat, list, copies: the shell's)

    /** {@code rm -rf} (there is no delete endpoint); the guard judged the path already. */
    @Override
    public boolean delete(String path) {
        String t = resolve(path);
        if (t.equals("/")) {
            throw new DeniedException("refusing to delete '/'");
        }
        RawResult r = run("p=" + Shell.quotePath(t) + "\n[ -e \"$p\" ] || [ -L \"$p\" ] || exit 2\n"
                + SpecialFiles.deleteCheck() + "exec rm -rf -- \"$p\"\n");
        if (r.exit() == SpecialFiles.REFUSED) {
            throw new DeniedException(r.stderrLine());
        }
        if (r.exit() == 2) {
            return false;
        }
        if (r.exit() != 0) {
            throw failure("delete", t, r);
        }
        return true;
    }

    /** {@code mkdir -p} ({@code fs/mkdir} makes one level only); the guard judged the path already. */
    @Override
    public void mkdirs(String dir) {
        String t = resolve(dir);
        RawResult r = run("exec mkdir -p -- " + Shell.quotePath(t) + "\n");
        if (r.exit() != 0) {
            throw failure("mkdirs", t, r);
        }
    }

    // ---------------------------------------------------------------- helpers

    private String resolve(String path) {
        if (path == null || path.isEmpty() || path.indexOf('\0') >= 0) {
            throw new ConfigurationException("a path must be non-empty and hold no NUL byte");
        }
        return expand.apply(path);
    }

    private RawResult run(String script) {
        try {
            return raw.run(script);
        } catch (IOException e) {
            throw new BackendException("a file operation on " + backend + " failed: " + e.getMessage(), e);
        }
    }

    private BackendException failure(String op, String path, RawResult r) {
        String why = r.stderrLine();
        return new BackendException(op + " " + path + " failed on " + backend + ": " + (why.isEmpty() ? "exit " + r.exit() : why));
    }

    private static void checkLength(String t) {
        int bytes = t.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > PATH_MAX) {
            throw new ConfigurationException("the path is " + bytes + " bytes long; the target takes at most " + PATH_MAX
                    + " (" + t.substring(0, Math.min(60, t.length())) + "...)");
        }
        for (String c : t.split("/")) {
            if (c.getBytes(StandardCharsets.UTF_8).length > NAME_MAX) {
                throw new ConfigurationException("a name in the path is longer than " + NAME_MAX + " bytes ("
                        + c.substring(0, Math.min(60, c.length())) + "...)");
            }
        }
    }

    private static String parent(String path) {
        int slash = path.lastIndexOf('/');
        return slash <= 0 ? "/" : path.substring(0, slash);
    }
}
