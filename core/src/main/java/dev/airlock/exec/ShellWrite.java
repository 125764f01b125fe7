package dev.airlock.exec;

import dev.airlock.BackendException;
import dev.airlock.NoSuchPathException;
import dev.airlock.Payload;
import dev.airlock.WriteOptions;
import dev.airlock.shell.AsideWrite;
import dev.airlock.shell.Shell;

import java.io.IOException;
import java.io.InputStream;
import java.security.SecureRandom;
import java.util.HexFormat;

import static dev.airlock.exec.ShellFiles.parent;
import static dev.airlock.exec.ShellFiles.refused;

/**
 * {@link ShellFiles}' write, for a path the guard judged as given: into a temp file beside the
 * target, then renamed over it, by scripts whose content travels through stdin.
 */
final class ShellWrite {
    private static final SecureRandom RANDOM = dev.airlock.shell.KernelRandom.create();
    /** The one-run write's exit when the path is not its own physical place (see {@link #writeInOneRun}). */
    private static final int PLACE_DIFFERS = 13;
    /** The largest payload the one-run write takes: what a fall-back to two runs may have sent for nothing. */
    static final long ONE_RUN_MAX = 1 << 20;

    private final CoreEnvironment env;
    private final ShellFileRuns runs;

    ShellWrite(CoreEnvironment env, ShellFileRuns runs) {
        this.env = env;
        this.runs = runs;
    }

    /**
     * Writes in steps so a parent symlink flipped meanwhile cannot move the write (the guard judged
     * the path as given): one script enters the physical parent (making it if asked) and reports
     * it; the guard judges that physical place; the writing script enters it again, checks it is the
     * same, and makes the temp file and renames it there, by name, never through a link in the
     * final component. Directories it made are removed again when the write fails. Where the path
     * as given is its own physical place (the common case) the last three steps are one script,
     * which checks that from inside the directory it writes in (see {@link #writeInOneRun}).
     */
    void write(String t, Payload content, WriteOptions options) {
        if (content.isRepeatable() && content.length().isPresent() && content.length().getAsLong() <= ONE_RUN_MAX
                && writeInOneRun(t, content, options)) {
            return;
        }
        Place place = enter(t, options.createParents());
        try {
            if (!(place.dir.equals("/") ? "/" + place.name : place.dir + "/" + place.name).equals(t)) {
                env.safety().checkWrite((place.dir.equals("/") ? "" : place.dir) + "/" + place.name, "write");
            }
            writeIn(place, t, content, options);
        } catch (RuntimeException e) {
            place.removeCreated();
            throw e;
        }
    }

    /**
     * The write in one run, where the path as given is its own physical place: absolute, no
     * symlink at the target or on the way to it, so the guard has judged where it lands. That is
     * the common case, and it costs one run where {@link #enter} and {@link #writeIn} cost two.
     * Anything else exits {@link #PLACE_DIFFERS} before reading a byte, having written nothing
     * and removed what it made; false then, and the two-run write (which judges the physical
     * place too) takes over with the same payload, which is why only a repeatable payload, of at
     * most {@link #ONE_RUN_MAX} bytes (what such a fall-back may send for nothing), comes here.
     */
    private boolean writeInOneRun(String t, Payload content, WriteOptions options) {
        WriteTemp temp = new WriteTemp();
        StringBuilder s = new StringBuilder();
        s.append("t=").append(Shell.quotePath(t)).append('\n')
                .append("tmp=\nmade=\n")
                .append("trap '[ -z \"$tmp\" ] || rm -f -- \"$tmp\"; [ -z \"$made\" ] || { c=$d; while [ \"$c\" != \"$made\" ] && [ \"$c\" != / ];"
                        + " do rmdir -- \"$c\" 2>/dev/null || break; c=$(dirname -- \"$c\"); done; }' EXIT\n")
                // A cancel (SIGTERM to the group) must not leave the temp file: exit runs the EXIT trap.
                .append("trap 'exit 143' TERM INT HUP\n")
                .append("[ -L \"$t\" ] && exit ").append(PLACE_DIFFERS).append('\n')
                .append("d=$(dirname -- \"$t\") && n=$(basename -- \"$t\") || exit 4\n")
                .append("e=$d; while [ ! -d \"$e\" ] && [ \"$e\" != / ]; do e=$(dirname -- \"$e\"); done\n")
                // The nearest existing directory is its own physical path (no symlink, no . or ..).
                .append("[ \"$(cd -P -- \"$e\" && pwd -P)\" = \"$e\" ] || exit ").append(PLACE_DIFFERS).append('\n');
        if (options.createParents()) {
            s.append("if [ \"$e\" != \"$d\" ]; then made=$e; mkdir -p -- \"$d\" || exit 4; fi\n");
        } else {
            s.append("[ -d \"$d\" ] || exit 2\n");
        }
        s.append("cd -P -- \"$d\" && [ \"$(pwd -P)\" = \"$d\" ] || exit ").append(PLACE_DIFFERS).append('\n')
                .append(AsideWrite.refuseDirectory(t))
                .append(temp.make())
                .append("cat > \"$tmp\" || exit 7\n")
                .append(AsideWrite.mode(options))
                .append(AsideWrite.checkSize(content.length().getAsLong()))
                .append(AsideWrite.rename(t))
                .append("trap - EXIT\n")
                .append("printf '%s' \"$c\"\n");
        ShellFileRuns.Outcome o = runWrite(s.toString(), content, parent(t), temp);
        if (o.exit() == PLACE_DIFFERS) {
            return false;
        }
        refused(o);
        switch (o.exit()) {
            case 0 -> {
                return true;
            }
            case 2 -> throw new NoSuchPathException(parent(t));
            default -> throw runs.failure("write", t, o);
        }
    }


    /** Where a write lands: the physical parent, the name in it, and the first directory the write made (if any). */
    private final class Place {
        final String dir;
        final String name;
        final String createdFrom;

        Place(String dir, String name, String createdFrom) {
            this.dir = dir;
            this.name = name;
            this.createdFrom = createdFrom;
        }

        /** Removes the (empty) directories this write made, deepest first, up to the one that existed. */
        void removeCreated() {
            if (createdFrom.isEmpty()) {
                return;
            }
            try {
                runs.run(AsideWrite.removeMade(dir, createdFrom), null);
            } catch (RuntimeException ignored) {
                // best effort: the write's own failure is what the caller hears about
            }
        }
    }

    private Place enter(String t, boolean createParents) {
        StringBuilder s = new StringBuilder();
        s.append("t=").append(Shell.quotePath(t)).append('\n')
                .append("if [ -L \"$t\" ]; then r=$(readlink -f -- \"$t\") && [ -n \"$r\" ] || { echo \"cannot resolve the symlink $t\" >&2; exit 3; }; t=$r; fi\n")
                .append("d=$(dirname -- \"$t\")\n")
                .append("e=\n");
        if (createParents) {
            s.append("if [ ! -d \"$d\" ]; then\n")
                    .append("  e=$d; while [ ! -d \"$e\" ] && [ \"$e\" != / ]; do e=$(dirname -- \"$e\"); done\n")
                    .append("  mkdir -p -- \"$d\" || { c=$d; while [ \"$c\" != \"$e\" ] && [ \"$c\" != / ]; do rmdir -- \"$c\" 2>/dev/null; c=$(dirname -- \"$c\"); done; exit 4; }\n")
                    .append("  e=$(cd -P -- \"$e\" && pwd -P) || exit 4\n")
                    .append("fi\n");
        } else {
            s.append("[ -d \"$d\" ] || { echo \"no such directory: $d\" >&2; exit 2; }\n");
        }
        s.append("cd -P -- \"$d\" || exit 4\n")
                .append("printf '%s\\0%s\\0%s' \"$(pwd -P)\" \"$(basename -- \"$t\")\" \"$e\"\n");
        ShellFileRuns.Outcome o = runs.run(s.toString(), null);
        switch (o.exit()) {
            case 0 -> {
                String[] f = o.out().split("\0", -1);
                if (f.length < 3 || !f[0].startsWith("/") || f[1].isEmpty()) {
                    throw new BackendException("write to " + t + ": the target reported no usable directory");
                }
                return new Place(f[0], f[1], f[2]);
            }
            case 2 -> throw new NoSuchPathException(parent(t));
            default -> throw runs.failure("write", t, o);
        }
    }

    private void writeIn(Place place, String t, Payload content, WriteOptions options) {
        long expected = content.length().orElse(-1);
        WriteTemp temp = new WriteTemp();
        String dir = Shell.quote(place.dir);
        StringBuilder s = new StringBuilder();
        s.append("cd -P -- ").append(dir).append(" || exit 4\n")
                .append("[ \"$(pwd -P)\" = ").append(dir).append(" ] || { echo \"the directory changed while writing; nothing was written\" >&2; exit 11; }\n")
                .append("n=").append(Shell.quotePath(place.name)).append('\n')
                .append(AsideWrite.refuseDirectory(t))
                .append("tmp=\n")
                .append("trap '[ -z \"$tmp\" ] || rm -f -- \"$tmp\"' EXIT\n")
                // A cancel (SIGTERM to the group) must not leave the temp file: exit runs the EXIT trap.
                .append("trap 'exit 143' TERM INT HUP\n")
                .append(temp.make())
                .append("cat > \"$tmp\" || exit 7\n");
        s.append(AsideWrite.mode(options))
                .append(AsideWrite.checkSize(expected))
                .append(AsideWrite.rename(t))
                .append("trap - EXIT\n")
                .append("printf '%s' \"$c\"\n");
        Counting counted = expected < 0 ? new Counting(content) : null;
        ShellFileRuns.Outcome o = runWrite(s.toString(), counted != null ? counted.payload() : content, place.dir, temp);
        refused(o);
        if (o.exit() == 0) {
            long written = Long.parseLong(o.out().trim());
            if (counted != null && written != counted.count) {
                throw new BackendException("write to " + t + " stored " + written + " bytes of the "
                        + counted.count + " sent; the file is incomplete, write it again");
            }
            return;
        }
        throw runs.failure("write", t, o);
    }

    /**
     * Runs a write's script, whose temp file goes in {@code dir}. Its EXIT trap removes the file,
     * but a script can end without running it: SIGKILLed (the kill's SIGKILL after the grace, when the SIGTERM
     * reached the shell just before it started {@code cat}, which then blocked on an input the
     * core keeps open until the kill is done; or the OOM killer), or SIGTERMed while {@code mktemp}
     * had made the file but not yet told the script its name. When the run failed (a broken
     * payload, a cancel) or the script died by a signal, the file is removed here by its stem.
     */
    private ShellFileRuns.Outcome runWrite(String script, Payload content, String dir, WriteTemp temp) {
        ShellFileRuns.Outcome o;
        try {
            o = runs.run(script, content);
        } catch (RuntimeException e) {
            temp.removeIn(dir);
            throw e;
        }
        if (o.exit() > 128) {
            temp.removeIn(dir);
        }
        return o;
    }

    /**
     * A write's temp file: {@code mktemp} names it (0600, created exclusively) from a stem no other
     * write shares, so the core can remove it without knowing its name, and nothing but it.
     */
    private final class WriteTemp {
        private final String stem = AsideWrite.TEMP_PREFIX + HexFormat.of().formatHex(randomBytes()) + "-";

        /** The script line that makes the file and sets {@code $tmp} (exit 6 when it cannot). */
        String make() {
            return "tmp=$(mktemp ./" + stem + "XXXXXX) || exit 6\n";
        }

        /** Removes the file from {@code dir}, best effort: the write's own failure is what the caller hears about. */
        void removeIn(String dir) {
            try {
                runs.run(AsideWrite.cleanUp(dir, "", "./" + stem + "*"), null);
            } catch (RuntimeException ignored) {
                // the target cannot be reached: nothing more to do from here
            }
        }
    }

    private static byte[] randomBytes() {
        byte[] b = new byte[8];
        RANDOM.nextBytes(b);
        return b;
    }

    /** Counts the bytes of a payload of unknown length as they are sent, to verify what was stored. */
    private static final class Counting {
        private final Payload source;
        private volatile long count;

        Counting(Payload source) {
            this.source = source;
        }

        Payload payload() {
            InputStream in;
            try {
                in = source.open();
            } catch (IOException e) {
                throw new BackendException("cannot open the content to write: " + e.getMessage(), e);
            }
            return Payload.ofStream(new java.io.FilterInputStream(in) {
                @Override
                public int read() throws IOException {
                    int b = super.read();
                    if (b >= 0) {
                        count++;
                    }
                    return b;
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    int n = super.read(b, off, len);
                    if (n > 0) {
                        count += n;
                    }
                    return n;
                }
            });
        }
    }

}
