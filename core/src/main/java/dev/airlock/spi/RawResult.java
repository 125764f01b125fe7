package dev.airlock.spi;

import java.nio.charset.StandardCharsets;

/**
 * The outcome of one of Airlock's own small scripts, run without the state machine.
 *
 * @param exit   its exit status
 * @param stdout its stdout (capped at 1 MiB)
 * @param stderr its stderr (capped at 1 MiB)
 */
public record RawResult(int exit, byte[] stdout, byte[] stderr) {

    /** The last line of stderr, for a one-line error message (see {@link #lastLine}). */
    public String stderrLine() {
        return lastLine(stderr);
    }

    /**
     * The last non-blank line of a script's stderr, at most 512 characters: a shell says why it
     * failed last, after whatever a login shell's startup files printed first.
     */
    public static String lastLine(byte[] stderr) {
        String s = new String(stderr, StandardCharsets.UTF_8).strip();
        String last = s.substring(s.lastIndexOf('\n') + 1);
        return last.length() <= 512 ? last : last.substring(0, 512);
    }
}
