package dev.airlock.ssh;

import java.util.Locale;
import java.util.Map;

/**
 * SSH reports a command killed by a signal by name ({@code exit-signal "TERM"}, RFC 4254 6.10);
 * Airlock reports 128+N like a shell. Numbers are Linux's, which the common names share with
 * every other Unix for the first fifteen.
 */
final class ExitSignals {
    private static final Map<String, Integer> NUMBERS = Map.ofEntries(
            Map.entry("HUP", 1), Map.entry("INT", 2), Map.entry("QUIT", 3), Map.entry("ILL", 4),
            Map.entry("TRAP", 5), Map.entry("ABRT", 6), Map.entry("BUS", 7), Map.entry("FPE", 8),
            Map.entry("KILL", 9), Map.entry("USR1", 10), Map.entry("SEGV", 11), Map.entry("USR2", 12),
            Map.entry("PIPE", 13), Map.entry("ALRM", 14), Map.entry("TERM", 15), Map.entry("STKFLT", 16),
            Map.entry("CHLD", 17), Map.entry("CONT", 18), Map.entry("STOP", 19), Map.entry("TSTP", 20),
            Map.entry("TTIN", 21), Map.entry("TTOU", 22), Map.entry("URG", 23), Map.entry("XCPU", 24),
            Map.entry("XFSZ", 25), Map.entry("VTALRM", 26), Map.entry("PROF", 27), Map.entry("WINCH", 28),
            Map.entry("IO", 29), Map.entry("PWR", 30), Map.entry("SYS", 31));

    /** Used when a server names a signal we do not know: still a failure, and recognisably a signal. */
    static final int UNKNOWN_SIGNAL_EXIT = 128 + 127;

    private ExitSignals() {
    }

    /** 128+N for a signal name such as {@code TERM} or {@code SIGTERM}. */
    static int exitCode(String name) {
        String n = name.trim().toUpperCase(Locale.ROOT);
        if (n.startsWith("SIG")) {
            n = n.substring(3);
        }
        int at = n.indexOf('@');
        if (at >= 0) {
            n = n.substring(0, at);
        }
        Integer number = NUMBERS.get(n);
        return number == null ? UNKNOWN_SIGNAL_EXIT : 128 + number;
    }
}
