package dev.airlock.vercel.emulator;

import dev.airlock.ConfigurationException;
import dev.airlock.emulator.RateLimits;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The vCPU allocation rate counts vCPUs in fixed windows; a create that does not fit is refused and not counted. */
class VcpuAllocationTest {
    @Test
    void createsCountTheirVcpusUntilTheWindowEnds() {
        AtomicLong clock = new AtomicLong();
        VcpuAllocation a = VcpuAllocation.from(Settings.of(VcpuAllocation.SETTING, "10/60"), clock::get);
        assertEquals(2, a.acquire(8).remaining());
        RateLimits.Decision refused = a.acquire(4);
        assertFalse(refused.allowed(), "4 do not fit in the 2 left");
        assertEquals(2, refused.remaining(), "a refusal does not count");
        assertEquals(Duration.ofSeconds(60), refused.reset());
        assertTrue(a.acquire(2).allowed(), "2 still fit");
        clock.addAndGet(Duration.ofSeconds(45).toNanos());
        RateLimits.Decision later = a.acquire(1);
        assertFalse(later.allowed());
        assertEquals(Duration.ofSeconds(15), later.reset());
        clock.addAndGet(Duration.ofSeconds(15).toNanos());
        assertEquals(6, a.acquire(4).remaining(), "a new window");
    }

    @Test
    void theDefaultIsProAndTheSettingReplacesIt() {
        assertEquals(new RateLimits.Limit(400, Duration.ofSeconds(60)), VcpuAllocation.from(Settings.empty()).limit());
        assertEquals(new RateLimits.Limit(40, Duration.ofSeconds(600)),
                VcpuAllocation.from(Settings.of(VcpuAllocation.SETTING, "40/600")).limit());
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> VcpuAllocation.from(Settings.of(VcpuAllocation.SETTING, "lots")));
        assertEquals("airlock.vercel.emulator.rate-limit.vcpu-allocation must be N/SECONDS, at most N in each window of that many seconds"
                + " (for example 600/60), not lots", e.getMessage());
    }
}
