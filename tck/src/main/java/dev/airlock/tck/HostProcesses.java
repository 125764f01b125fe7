package dev.airlock.tck;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What a test on this machine can tell about one of its processes from {@code /proc}. */
public final class HostProcesses {
    private HostProcesses() {
    }

    /**
     * Whether {@code pid} still runs code: it exists, is no zombie, is not exiting and has no SIGKILL
     * pending (a killed process the kernel is tearing down counts as gone, as does one its parent
     * has not reaped yet).
     */
    public static boolean runs(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            if (fields[0].startsWith("Z") || fields[0].startsWith("X")) {
                return false;
            }
            // PF_EXITING (0x4 in the flags field): the process is in the kernel's exit path, after a
            // fatal signal was taken, and never runs code again (under load that path can take a while).
            if (fields.length > 6 && (Long.parseLong(fields[6]) & 4) != 0) {
                return false;
            }
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if ((line.startsWith("SigPnd:") || line.startsWith("ShdPnd:"))
                        && (Long.parseUnsignedLong(line.substring(7).strip(), 16) & (1L << 8)) != 0) {
                    return false;
                }
            }
            return true;
        } catch (IOException e) {
            return false; // gone
        }
    }

    /** Whether process group {@code pgid} has a member that {@link #runs} (zombies and exiting ones are not). */
    public static boolean groupRuns(long pgid) {
        String want = Long.toString(pgid);
        try (var procs = Files.list(Path.of("/proc"))) {
            return procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).anyMatch(p -> {
                try {
                    String stat = Files.readString(p.resolve("stat"));
                    return stat.substring(stat.lastIndexOf(')') + 2).split(" ")[2].equals(want)
                            && runs(Long.parseLong(p.getFileName().toString()));
                } catch (IOException | RuntimeException e) {
                    return false; // gone meanwhile
                }
            });
        } catch (IOException e) {
            return true; // cannot tell: say yes, and the kill finds out
        }
    }
}
