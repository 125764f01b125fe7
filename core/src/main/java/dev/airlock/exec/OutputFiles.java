package dev.airlock.exec;

import dev.airlock.FileStat;
import dev.airlock.RemoteFiles;
import dev.airlock.shell.Shell;
import dev.airlock.shell.StdinScripts;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Optional;

/**
 * Output transport {@link dev.airlock.OutputTransport#FILES}: the command writes its stdout and
 * stderr to two files in the private dir (0700), the core downloads them through the backend's
 * native files once the command ended, keeping at most the capture cap, and removes them whatever
 * happened (end, timeout, cancel, failure). The launcher record still travels on the transport.
 */
final class OutputFiles {
    private static final Logger LOG = LoggerFactory.getLogger(OutputFiles.class);

    final String out;
    final String err;

    private OutputFiles(String out, String err) {
        this.out = out;
        this.err = err;
    }

    static OutputFiles in(String stagingDir) {
        String token = StdinScripts.randomToken();
        return new OutputFiles(stagingDir + "/.airlock-out-" + token, stagingDir + "/.airlock-err-" + token);
    }

    /**
     * The line that sends the rest of the script's output to the files; the transport's stdout stays
     * open as fd 3 for the launcher record. A redirect that fails is a staging failure (201).
     */
    String redirect() {
        return "exec 3>&1 >" + Shell.quotePath(out) + " 2>" + Shell.quotePath(err) + " || exit 201\n";
    }

    /** The launcher record on fd 3 (the transport), which is then closed so the command does not hold it. */
    static String recordOnTransport(String recordLine) {
        return "{\n" + recordLine + "} >&3\nexec 3>&-\n";
    }

    /**
     * Copies one file into {@code to}: all of it into a caller's stream, at most {@code cap} bytes
     * into a capture (the rest counted as dropped, never downloaded). A file that is not there
     * (the command never ran) is empty.
     */
    static void download(RemoteFiles files, String path, OutputStream to, OutputCapture cap) throws IOException {
        Optional<FileStat> st = files.stat(path);
        if (st.isEmpty()) {
            return;
        }
        long size = st.get().size();
        long limit = cap == null ? Long.MAX_VALUE : Math.min(size, cap.room());
        long copied = 0;
        try (InputStream in = files.read(path)) {
            byte[] buf = new byte[64 * 1024];
            int n;
            while (copied < limit && (n = in.read(buf, 0, (int) Math.min(buf.length, limit - copied))) > 0) {
                to.write(buf, 0, n);
                copied += n;
            }
        }
        if (cap != null && size > copied) {
            cap.drop(size - copied);
        }
    }

    /** Removes both files; never fails (the private dir goes with the environment anyway). */
    void remove(Hooks hooks) {
        for (String p : new String[] {out, err}) {
            try {
                hooks.remove(p);
            } catch (IOException | RuntimeException e) {
                LOG.debug("could not remove the output file {}: {}", p, e.getMessage());
            }
        }
    }
}
