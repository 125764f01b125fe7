package dev.airlock.modal.emulator;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The sandbox creation rate on a clock moved by hand: the documented default, the refusal, the next window. */
class SandboxCreationRateTest {
    @Test
    void theDefaultIsTheDocumentedBurstOf150AtFivePerSecond() {
        assertEquals(150, SandboxCreationRate.DEFAULT.requests());
        assertEquals(Duration.ofSeconds(30), SandboxCreationRate.DEFAULT.window());
        assertEquals(SandboxCreationRate.DEFAULT, SandboxCreationRate.from(Settings.empty()).limit());
    }

    @Test
    void the151stCreateInAWindowIsRefusedUntilTheWindowEnds() {
        AtomicLong now = new AtomicLong();
        SandboxCreationRate rate = SandboxCreationRate.from(Settings.empty(), now::get);
        for (int i = 0; i < 150; i++) {
            rate.acquire();
        }
        now.addAndGet(Duration.ofSeconds(10).toNanos());
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, rate::acquire);
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
        assertEquals("Sandbox creation rate limit exceeded: at most 150 sandboxes per 30 s; try again in 20 s",
                e.getStatus().getDescription());
        now.addAndGet(Duration.ofSeconds(20).toNanos());
        rate.acquire(); // a new window
    }

    @Test
    void theSettingReplacesTheLimitAndABadOneIsOneLine() {
        assertEquals(2, SandboxCreationRate.from(Settings.of(SandboxCreationRate.SETTING, "2/60")).limit().requests());
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> SandboxCreationRate.from(Settings.of(SandboxCreationRate.SETTING, "fast")));
        assertEquals("airlock.modal.emulator.rate-limit.sandbox-create must be N/SECONDS, at most N in each window of that many"
                + " seconds (for example 600/60), not fast", e.getMessage());
    }
}
