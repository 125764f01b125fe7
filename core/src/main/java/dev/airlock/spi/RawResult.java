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

    /** The first line of stderr, for a one-line error message. */
    public String stderrLine() {
        String s = new String(stderr, StandardCharsets.UTF_8).strip();
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
