package dev.airlock.modal;

import dev.airlock.BackendException;
import dev.airlock.ConfigurationException;
import dev.airlock.DeniedException;
import dev.airlock.NoSuchPathException;
import dev.airlock.Payload;
import dev.airlock.WriteOptions;
import dev.airlock.shell.AsideWrite;
import dev.airlock.shell.Shell;
import dev.airlock.shell.SpecialFiles;
import dev.airlock.spi.CoreAccess;
import dev.airlock.spi.ForwardingRemoteFiles;
import dev.airlock.spi.ProcessEnd;
import dev.airlock.spi.RawResult;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * Files on Modal. Reads go through Modal's container file tool, {@code modal-sandbox-fs-tools}, as
 * the official SDKs' {@code filesystem.readBytes} does: one exec of the image's own binary
 * ({@code ReadFile}), where the core's shell read is an exec of {@code sh} and its script. The same
 * four calls either way; what it saves is the shell's processes in the sandbox (on the emulator,
 * 20 to 30 ms a read). Its stdout is streamed as it comes (never gathered) and its exit checked at
 * the end, so a read cut short is an {@link IOException}, never a short file. A file it cannot read
 * (missing, a directory, unreadable, too large for the tool) is handed to the shell read before a
 * byte was returned, which says precisely why; so is a relative path, or one with a quote,
 * backslash, control or non-ASCII character that the tool's JSON argument would have to escape.
 *
 * <p>Changes (write, delete, mkdirs, copyIn) are the core's own scripts, run here as one exec each
 * ({@link CoreAccess#run}). Returning a file API puts the core's guard in front of it, which judges
 * each change (one path-resolution exec); handing a change on to the core's shell implementation
 * would judge it a second time, one more exec. So the change runs its script here, once judged: a
 * write of content that can be read again is the core's one-run write ({@link #oneRun}: place
 * judged from inside, temp file, mode, size, rename), its content streamed as stdin in the core's
 * chunks; a symlink at the target or on the way, which the guard judged only as written, hands it
 * to the shell write, which judges the physical place too and sends the content again. The core
 * keeps its own one-run write to 1 MiB for that second sending; here the script exits before
 * reading a byte and the router refuses stdin to an exec that has exited, so what is sent for
 * nothing is what was in flight, and a large write is two execs (the guard's and this) where the
 * shell write's is three. A stream, which cannot be sent again, goes to the shell write (judged
 * once more there: one exec more than before this class). The tool's
 * {@code WriteFile} is not used: it has no mode, no atomic replace and no judgement of the place,
 * so it would need a second exec to finish, one more than the one-run write.
 */
final class ModalFiles extends ForwardingRemoteFiles {
    /** The image's file tool, at the path the service mounts it (the SDKs' {@code SANDBOX_FS_TOOLS_PATH}). */
    static final String FS_TOOLS = "/__modal/.bin/modal-sandbox-fs-tools";

    /** The one-run write's exit when a symlink is at the target or on the way: the shell write does it. */
    private static final int USE_SHELL = 20;

    private final ModalSandbox sandbox;
    private final CoreAccess core;

    ModalFiles(ModalSandbox sandbox, CoreAccess core) {
        super(core.shellFiles());
        this.sandbox = sandbox;
        this.core = core;
    }

    // ---------------------------------------------------------------- read

    @Override
    public InputStream read(String path) {
        if (path == null || path.isEmpty() || path.indexOf('\0') >= 0) {
            return delegate().read(path); // its one line for a bad path
        }
        String t = core.target().expand(path);
        if (!plain(t)) {
            return delegate().read(path);
        }
        ModalProcess p = start(List.of(FS_TOOLS, "{\"ReadFile\":{\"path\":\"" + t + "\"}}"), "read " + t);
        InputStream out = p.stdout();
        int first;
        boolean cut = false;
        try {
            first = out.read();
        } catch (IOException e) {
            first = -1; // cut before the first byte: never an empty file, whatever the exit; the shell read reads it
            cut = true;
        }
        if (first < 0) {
            closeQuietly(out);
            if (exitOf(p) == 0 && !cut) {
                closeQuietly(p.stderr());
                return InputStream.nullInputStream();
            }
            closeQuietly(p.stderr());
            return delegate().read(path); // says precisely what is wrong (missing, a directory, unreadable)
        }
        return new Streamed(p, out, first, t);
    }

    /** The tool's stdout from its first byte, ended by its exit: EOF only when it exited 0. */
    private static final class Streamed extends InputStream {
        private final ModalProcess process;
        private final InputStream out;
        private final String path;
        private int first;
        private boolean ended;

        Streamed(ModalProcess process, InputStream out, int first, String path) {
            this.process = process;
            this.out = out;
            this.first = first;
            this.path = path;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (first >= 0) {
                b[off] = (byte) first;
                first = -1;
                return 1;
            }
            if (ended) {
                return -1;
            }
            int n = out.read(b, off, len);
            if (n < 0) {
                int exit = exitOf(process);
                if (exit != 0) {
                    String why = stderrLine(process);
                    throw new IOException("the read of " + path + " on Modal ended unfinished ("
                            + (why.isEmpty() ? exit == -1 ? "no exit status" : "exit " + exit : why) + ")");
                }
                ended = true;
            }
            return n;
        }

        /** Closing early stops the reader threads; the tool ends on its own (Modal has no per-exec kill). */
        @Override
        public void close() {
            closeQuietly(out);
            closeQuietly(process.stderr());
        }
    }

    // ---------------------------------------------------------------- changes (judged by the core's guard already)

    @Override
    public void write(String path, Payload content, WriteOptions options) {
        if (path == null || path.isEmpty() || path.indexOf('\0') >= 0 || !content.isRepeatable() || content.length().isEmpty()) {
            delegate().write(path, content, options);
            return;
        }
        String t = core.target().expand(path);
        if (!t.startsWith("/")) {
            delegate().write(path, content, options); // relative to the exec's directory: the shell write judges that
            return;
        }
        checkLength(t);
        RawResult r = run(oneRun(t, content.length().getAsLong(), options), content);
        switch (r.exit()) {
            case 0 -> {
            }
            case USE_SHELL -> delegate().write(path, content, options);
            case 2 -> throw new NoSuchPathException(parent(t));
            case SpecialFiles.REFUSED -> throw new DeniedException(r.stderrLine());
            default -> throw failure("write", t, r);
        }
    }

    /**
     * The write in one script, as the core's one-run write: {@link AsideWrite#enter} (exit
     * {@link #USE_SHELL} before reading a byte where a symlink is at the target or on the way, 2
     * without the parent), then stdin into the temp sibling and the core's atomic-write steps. On
     * any exit before the rename the temp file and the directories this write made are removed.
     */
    static String oneRun(String t, long size, WriteOptions options) {
        return "tmp=\nmade=\nd=\n"
                + "trap '[ -z \"$tmp\" ] || rm -f -- \"$tmp\"; [ -z \"$made\" ] || { c=$d; e=$made\n"
                + AsideWrite.removeMadeLoop() + "}' EXIT\n"
                // A cancel (SIGTERM to the group) must not leave the temp file: exit runs the EXIT trap.
                + "trap 'exit 143' TERM INT HUP\n"
                + AsideWrite.enter(t, options.createParents(), USE_SHELL, "", "")
                + "cat > \"$tmp\" || exit 7\n"
                + AsideWrite.refuseDirectory(t)
                + AsideWrite.mode(options)
                + AsideWrite.checkSize(size)
                + AsideWrite.rename(t)
                + "trap - EXIT\n";
    }

    /** The core's delete script, once judged; {@code /} refused here as there. */
    @Override
    public boolean delete(String path) {
        if (path == null || path.isEmpty() || path.indexOf('\0') >= 0) {
            return delegate().delete(path);
        }
        String t = core.target().expand(path);
        if (t.equals("/") || t.isBlank()) {
            throw new DeniedException("refusing to delete '/'");
        }
        RawResult r = run("p=" + Shell.quotePath(t) + "\n[ -e \"$p\" ] || [ -L \"$p\" ] || exit 2\n"
                + SpecialFiles.deleteCheck() + "exec rm -rf -- \"$p\"\n", null);
        switch (r.exit()) {
            case 0 -> {
                return true;
            }
            case 2 -> {
                return false;
            }
            case SpecialFiles.REFUSED -> throw new DeniedException(r.stderrLine());
            default -> throw failure("delete", t, r);
        }
    }

    /** The core's mkdirs script, once judged. */
    @Override
    public void mkdirs(String dir) {
        if (dir == null || dir.isEmpty() || dir.indexOf('\0') >= 0) {
            delegate().mkdirs(dir);
            return;
        }
        String t = core.target().expand(dir);
        RawResult r = run("exec mkdir -p -- " + Shell.quotePath(t) + "\n", null);
        if (r.exit() != 0) {
            throw failure("mkdirs", t, r);
        }
    }

    /** The core's copyIn script (the tar streamed as its stdin), once judged. */
    @Override
    public void copyIn(String dir, InputStream tar) {
        if (dir == null || dir.isEmpty() || dir.indexOf('\0') >= 0) {
            delegate().copyIn(dir, tar);
            return;
        }
        String t = core.target().expand(dir);
        RawResult r = run("mkdir -p -- " + Shell.quotePath(t) + " && cd -- " + Shell.quotePath(t) + " || exit 4\n"
                + "if tar --version 2>/dev/null | grep -q GNU; then exec tar -xpf - --no-same-owner; else exec tar -xf -; fi\n",
                Payload.ofStream(tar));
        if (r.exit() != 0) {
            throw failure("copyIn", t, r);
        }
    }

    // ---------------------------------------------------------------- helpers

    private RawResult run(String script, Payload stdin) {
        try {
            return core.run(script, stdin);
        } catch (IOException e) {
            throw new BackendException("a file operation on Modal failed: " + e.getMessage(), e);
        }
    }

    private static BackendException failure(String op, String path, RawResult r) {
        String why = r.stderrLine();
        return new BackendException(op + " " + path + " failed on modal: " + (why.isEmpty() ? "exit " + r.exit() : why));
    }

    /** The longest path and file name Linux takes (PATH_MAX without its NUL, NAME_MAX): the core's one line past them. */
    private static void checkLength(String t) {
        int bytes = t.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > 4095) {
            throw new ConfigurationException("the path is " + bytes + " bytes long; the target takes at most 4095 ("
                    + t.substring(0, Math.min(60, t.length())) + "...)");
        }
        for (String c : t.split("/")) {
            if (c.getBytes(StandardCharsets.UTF_8).length > 255) {
                throw new ConfigurationException("a name in the path is longer than 255 bytes ("
                        + c.substring(0, Math.min(60, c.length())) + "...)");
            }
        }
    }

    private static String parent(String path) {
        int slash = path.lastIndexOf('/');
        return slash <= 0 ? "/" : path.substring(0, slash);
    }

    /**
     * Whether the tool can take {@code t} as it is: absolute, printable ASCII without a quote or
     * backslash (nothing its JSON argument would have to escape). Anything else goes the shell way.
     */
    static boolean plain(String t) {
        if (t == null || !t.startsWith("/")) {
            return false;
        }
        for (int i = 0; i < t.length(); i++) {
            char c = t.charAt(i);
            if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
                return false;
            }
        }
        return true;
    }

    private ModalProcess start(List<String> argv, String what) {
        try {
            return sandbox.exec(argv, Map.of());
        } catch (IOException e) {
            throw new BackendException("could not " + what + " on Modal: " + e.getMessage(), e);
        }
    }

    /** The exec's exit code; -1 when it has none (lost, or the sandbox ended under it). */
    private static int exitOf(ModalProcess p) {
        try {
            ProcessEnd end = p.awaitEnd();
            return end instanceof ProcessEnd.Lost ? -1 : end.exitCode();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException("interrupted while waiting for the file tool on Modal");
        }
    }

    /** The tool's error: its {@code message} field when it printed one as JSON, else its last stderr line. */
    private static String stderrLine(ModalProcess p) {
        try (InputStream err = p.stderr()) {
            String s = new String(err.readNBytes(64 << 10), StandardCharsets.UTF_8).strip();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"message\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"").matcher(s);
            return m.find() ? m.group(1) : RawResult.lastLine(s.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            return "";
        }
    }




    private static void closeQuietly(InputStream in) {
        try {
            in.close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }

}
