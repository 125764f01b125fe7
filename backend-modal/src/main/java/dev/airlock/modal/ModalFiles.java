package dev.airlock.modal;

import dev.airlock.BackendException;
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
 * <p>Changes (write, delete, mkdirs, copyIn) are the core's shell scripts
 * ({@link CoreAccess#shellFiles}): the guard in front of this API judged the path, and those
 * scripts do not judge it again. The tool's {@code WriteFile} is not used: it keeps no mode,
 * replaces nothing atomically and cannot judge the place a link leads to, so it would need a
 * finishing exec of its own, one more than the core's one-run write.
 */
final class ModalFiles extends ForwardingRemoteFiles {
    /** The image's file tool, at the path the service mounts it (the SDKs' {@code SANDBOX_FS_TOOLS_PATH}). */
    static final String FS_TOOLS = "/__modal/.bin/modal-sandbox-fs-tools";

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

    // ---------------------------------------------------------------- helpers

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
