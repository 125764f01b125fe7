package dev.airlock.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Peak heap and peak RSS of this JVM over one measured action: the heap pools' peaks are reset
 * before it and summed after; the kernel's peak RSS (VmHWM) is reset through /proc/self/clear_refs.
 */
final class Memory {
    private Memory() {
    }

    static void reset() {
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            if (p.getType() == MemoryType.HEAP) {
                p.resetPeakUsage();
            }
        }
        try {
            Files.writeString(Path.of("/proc/self/clear_refs"), "5"); // 5: reset the peak RSS
        } catch (IOException | RuntimeException e) {
            // older kernels: the peak then covers the process's whole life
        }
    }

    static long heapPeak() {
        long sum = 0;
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            if (p.getType() == MemoryType.HEAP && p.getPeakUsage() != null) {
                sum += p.getPeakUsage().getUsed();
            }
        }
        return sum;
    }

    /** VmHWM of a process in bytes (0 when unknown). */
    static long rssPeak(String pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", pid, "status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        return 0;
    }

    static long rssPeak() {
        return rssPeak("self");
    }

    static String mib(long bytes) {
        return bytes <= 0 ? "-" : String.format(java.util.Locale.ROOT, "%.0f MiB", bytes / 1048576.0);
    }
}
