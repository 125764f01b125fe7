package dev.airlock.local;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.LongPredicate;
import java.util.stream.Stream;

/**
 * This host's {@code /proc}, read cheaply. Reading {@code /proc/PID/stat} costs tens to hundreds
 * of microseconds per process on a busy host (a full scan took 30-45 ms with ~150 processes on the
 * loaded bench machine), so a search for a command's survivors reads only the processes forked
 * since the command was launched: the pids the kernel handed out after the leader's, up to the
 * last one ({@code /proc/loadavg}), as long as the pid counter cannot have gone all the way round
 * meanwhile (forks since launch, from {@code /proc/stat}, plus live tasks below {@code pid_max});
 * otherwise every process.
 */
final class Procfs {
    private static final Path PROC = Path.of("/proc");
    /** Enough for /proc/PID/stat, loadavg and a sysctl in one read. */
    private static final int READ_BUFFER = 2048;
    private static final long PID_MAX = readPidMax();
    /** Up to this many candidate pids are opened one by one; more, and /proc is listed (about 300-1000 entries here). */
    private static final int DIRECT_MAX = 256;

    private Procfs() {
    }

    /** A field of /proc/PID/stat counted after "(comm) ": 0 is the state, 2 the pgrp, 3 the session, 19 the start time. */
    static Optional<String> statField(Path proc, int index) {
        String name = proc.getFileName().toString();
        if (name.isEmpty() || !Character.isDigit(name.charAt(0))) {
            return Optional.empty();
        }
        try {
            String stat = read(proc.resolve("stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return f.length > index && !f[0].equals("Z") ? Optional.of(f[index]) : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /**
     * The live processes of process group {@code pgid} whose name ({@code comm}) is not
     * {@code except}; a full scan of /proc, for the rare moment a group is signalled.
     */
    static java.util.List<Long> groupMembersExcept(long pgid, String except) {
        java.util.List<Long> out = new java.util.ArrayList<>();
        String want = Long.toString(pgid);
        try (java.util.stream.Stream<Path> all = Files.list(PROC)) {
            all.forEach(proc -> {
                if (statField(proc, 2).filter(want::equals).isPresent()) {
                    try {
                        if (!read(proc.resolve("comm")).strip().equals(except)) {
                            out.add(Long.parseLong(proc.getFileName().toString()));
                        }
                    } catch (IOException | RuntimeException e) {
                        // gone meanwhile
                    }
                }
            });
        } catch (IOException e) {
            // no /proc to list: nothing found
        }
        return out;
    }

    /** Field 22 of /proc/PID/stat (start time in clock ticks), when the process lives. */
    static OptionalLong startTimeOf(long pid) {
        return statField(PROC.resolve(Long.toString(pid)), 19).map(v -> OptionalLong.of(Long.parseLong(v)))
                .orElse(OptionalLong.empty());
    }

    /** Forks since boot ({@code processes} in /proc/stat), or -1 when unknown. */
    static long forks() {
        try {
            // Read twice per exec: found in the raw text, not split into lines and decoded (the
            // "intr" line before it alone holds hundreds of counters).
            String stat = read(PROC.resolve("stat"));
            int at = stat.indexOf("\nprocesses ");
            if (at < 0) {
                return -1;
            }
            int from = at + "\nprocesses ".length();
            int end = stat.indexOf('\n', from);
            return Long.parseLong(stat.substring(from, end < 0 ? stat.length() : end).strip());
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * Whether any live (not zombie) process has {@code field} equal to {@code value}, looking only
     * at pids handed out after {@code firstPid} when {@code forksAtLaunch} (from {@link #forks()}
     * at the leader's launch) shows that this is enough; pass -1 to look at every process.
     */
    static boolean anyWith(int field, long value, long firstPid, long forksAtLaunch) {
        String want = Long.toString(value);
        long[] range = candidates(firstPid, forksAtLaunch);
        if (range != null && span(range) <= DIRECT_MAX) {
            // Fewer pids than /proc lists: open each (an unused pid fails at once; a thread's stat
            // names its process's session, a survivor's thread is one too).
            long pid = range[0];
            for (long left = span(range); left > 0; left--, pid = pid + 1 >= PID_MAX ? 1 : pid + 1) {
                if (has(PROC.resolve(Long.toString(pid)), field, want)) {
                    return true;
                }
            }
            return false;
        }
        LongPredicate candidate = range == null ? pid -> true
                : range[1] >= range[0] ? pid -> pid >= range[0] && pid <= range[1] : pid -> pid >= range[0] || pid <= range[1];
        try (Stream<Path> procs = Files.list(PROC)) {
            return procs.anyMatch(p -> {
                long pid = pidOf(p);
                return pid > 0 && candidate.test(pid) && has(p, field, want);
            });
        } catch (IOException | UncheckedIOException e) {
            return true; // cannot tell: assume there is one (the callers then signal, which finds out)
        }
    }

    private static boolean has(Path proc, int field, String want) {
        return statField(proc, field).map(want::equals).orElse(false);
    }

    /** How many pids {@code [first, last]} holds, going round at pid_max. */
    private static long span(long[] range) {
        return range[1] >= range[0] ? range[1] - range[0] + 1 : PID_MAX - range[0] + range[1];
    }

    /** {first, last}: the pids handed out since the launch (last may have gone round below first); null: any pid. */
    private static long[] candidates(long firstPid, long forksAtLaunch) {
        if (firstPid <= 0 || forksAtLaunch < 0 || PID_MAX <= 0) {
            return null;
        }
        long[] load = loadavg();
        long forksNow = forks();
        if (load == null || forksNow < 0) {
            return null;
        }
        long last = load[0];
        long tasks = load[1];
        // Each fork moves the counter at least one pid, and skipping a pid in use moves it once more.
        if (forksNow - forksAtLaunch + tasks >= PID_MAX) {
            return null;
        }
        return new long[] {firstPid, last};
    }

    /** {last pid, live tasks} from /proc/loadavg ("0.52 3.54 3.60 2/157 18887"), or null. */
    private static long[] loadavg() {
        try {
            String[] f = read(PROC.resolve("loadavg")).strip().split(" ");
            return new long[] {Long.parseLong(f[4]), Long.parseLong(f[3].substring(f[3].indexOf('/') + 1))};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static long pidOf(Path p) {
        String name = p.getFileName().toString();
        long pid = 0;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            pid = pid * 10 + (c - '0');
        }
        return name.isEmpty() ? -1 : pid;
    }

    /**
     * A small /proc file in one read. Not {@code Files.readString}: a /proc file says its size is 0,
     * so that reads one byte first and then the rest from offset 1, where a sysctl file
     * ({@code /proc/sys/...}) answers end-of-file: {@code pid_max} read as "3", and every survivor
     * check became a read of every process's stat.
     */
    static String read(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buf = new byte[READ_BUFFER];
            int len = 0;
            int n;
            while ((n = in.read(buf, len, buf.length - len)) > 0) {
                len += n;
                if (len == buf.length) {
                    buf = Arrays.copyOf(buf, buf.length * 2);
                }
            }
            return new String(buf, 0, len, StandardCharsets.ISO_8859_1);
        }
    }

    private static long readPidMax() {
        try {
            return Long.parseLong(read(PROC.resolve("sys/kernel/pid_max")).strip());
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** Whether this JVM ignores any of the signals a command must start with default dispositions (SigIgn in /proc/self/status). */
    static boolean ignoresAny(int... signals) {
        try {
            String status = read(PROC.resolve("self/status")); // per launch: found in the raw text, as forks()
            int at = status.indexOf("\nSigIgn:");
            if (at < 0) {
                return true;
            }
            int from = at + "\nSigIgn:".length();
            int end = status.indexOf('\n', from);
            long mask = Long.parseUnsignedLong(status.substring(from, end < 0 ? status.length() : end).strip(), 16);
            for (int s : signals) {
                if ((mask & (1L << (s - 1))) != 0) {
                    return true;
                }
            }
            return false;
        } catch (IOException | RuntimeException e) {
            return true; // cannot tell: reset them
        }
    }
}
