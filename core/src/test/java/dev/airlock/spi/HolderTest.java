package dev.airlock.spi;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A holder reads as alive only while its very process runs, on this boot. */
class HolderTest {

    @Test
    void thisJvmHoldsAndAnEndedProcessOrAnotherBootDoesNot() throws Exception {
        String me = Holder.current().orElseThrow();
        assertTrue(Holder.alive(me), me);

        Process p = new ProcessBuilder("sleep", "30").start();
        ProcessHandle h = p.toHandle();
        String boot = Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).strip();
        String child = boot + "/" + h.pid() + "/" + h.info().startInstant().orElseThrow().toEpochMilli();
        assertTrue(Holder.alive(child), "a running child: " + child);
        p.destroy();
        p.waitFor();
        assertFalse(Holder.alive(child), "an ended process: " + child);

        String[] parts = me.split("/");
        assertFalse(Holder.alive("another-boot/" + parts[1] + "/" + parts[2]), "another boot");
        assertFalse(Holder.alive(parts[0] + "/" + parts[1] + "/" + (Long.parseLong(parts[2]) + 10)), "a reused pid");
        for (String damaged : new String[] {null, "", "x", parts[0] + "/pid/start", parts[0] + "/1"}) {
            assertFalse(Holder.alive(damaged), String.valueOf(damaged));
        }
    }
}
