package dev.airlock.spi;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Which process holds a resource a backend made (a container, a sandbox), written into its labels,
 * so {@code airlock gc} on this machine can tell an orphan from one a live process still uses,
 * whatever its age: the boot, the pid and the pid's start time, so a reused pid or a reboot reads
 * as gone. A holder from another machine cannot be checked and reads as unknown.
 */
public final class Holder {
    private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");

    private Holder() {
    }

    /** This JVM: {@code BOOT/PID/START}, or empty where the boot id or start time cannot be read. */
    public static Optional<String> current() {
        ProcessHandle self = ProcessHandle.current();
        return bootId().flatMap(boot -> self.info().startInstant()
                .map(start -> boot + "/" + self.pid() + "/" + start.toEpochMilli()));
    }

    /**
     * Whether the holder is a process that still runs on this machine, since the same boot; false
     * for a holder that is gone, from another boot, or not a holder at all (damaged, empty).
     */
    public static boolean alive(String holder) {
        String[] p = holder == null ? new String[0] : holder.split("/");
        if (p.length != 3 || bootId().filter(p[0]::equals).isEmpty()) {
            return false;
        }
        try {
            long pid = Long.parseLong(p[1]);
            long start = Long.parseLong(p[2]);
            return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                    .flatMap(h -> h.info().startInstant()).filter(s -> s.toEpochMilli() == start).isPresent();
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static Optional<String> bootId() {
        try {
            String id = Files.readString(BOOT_ID, StandardCharsets.US_ASCII).strip();
            return id.isEmpty() ? Optional.empty() : Optional.of(id);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
