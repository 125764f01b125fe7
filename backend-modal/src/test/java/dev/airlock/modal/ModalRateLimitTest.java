package dev.airlock.modal;

import dev.airlock.BackendUnavailableException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.modal.emulator.ModalEmulator;
import dev.airlock.modal.proto.Sandbox;
import dev.airlock.modal.proto.SandboxCreateV2Request;
import dev.airlock.remote.RetryPolicy;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Modal's sandbox creation rate (a burst of 150 refilled at 5 per second), made small by the
 * emulator's setting: a create over it is refused RESOURCE_EXHAUSTED and nothing is made; the
 * client sends the create again (same idempotency key) after its backoff and creates once the
 * window is over, and says in one line when its attempts run out.
 */
class ModalRateLimitTest {
    private static final String RATE = "airlock.modal.emulator.rate-limit.sandbox-create";
    private ModalFixture fixture;

    private ModalFixture start(String rate) {
        fixture = new ModalFixture("", Map.of(RATE, rate));
        fixture.start();
        return fixture;
    }

    @AfterEach
    void stop() {
        if (fixture != null && fixture.served != null) {
            fixture.served.close();
        }
    }

    private long live() {
        return ((ModalEmulator) fixture.served.emulator()).liveSandboxes();
    }

    private long creates() {
        return fixture.served.journal().entries("SandboxCreateV2").size();
    }

    @Test
    void aCreateOverTheRateIsRefusedResourceExhaustedAndMakesNothing() throws Exception {
        start("1/600");
        try (Environment first = new ModalProvider().open(OpenContext.of(fixture.settings()))) {
            assertEquals(0, first.exec(ExecRequest.of("true")).exitCode());
            Settings s = fixture.settings();
            try (ModalClient c = new ModalClient(ModalSettings.from(s, Map.of()), RetryPolicy.from(s, ModalSettings.PREFIX))) {
                StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> c.controlStub(null).sandboxCreateV2(
                        SandboxCreateV2Request.newBuilder().setAppId("ap-any")
                                .setDefinition(Sandbox.newBuilder().setImageId("im-any").setTimeoutSecs(60)).build()));
                assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
                assertTrue(e.getStatus().getDescription().matches(
                        "Sandbox creation rate limit exceeded: at most 1 sandboxes per 600 s; try again in (5\\d\\d|600) s"),
                        e.getStatus().getDescription());
            }
            assertEquals(1, live(), "nothing made over the rate");
        }
    }

    /** The refusal made nothing, so the client sends the create again after its backoff and creates once the window ends. */
    @Test
    void theClientWaitsOutTheWindowAndCreates() throws Exception {
        start("1/5");
        // Backoff 0.5 s doubling to 1 s (±20 %), 12 attempts: at least 8.4 s of waiting, over the 5 s window.
        Settings s = fixture.settings().with("airlock.modal.retry.initial-backoff", "500ms")
                .with("airlock.modal.retry.max-backoff", "1s").with("airlock.modal.retry.max-attempts", "12");
        try (Environment first = new ModalProvider().open(OpenContext.of(s));
             Environment second = new ModalProvider().open(OpenContext.of(s))) {
            assertEquals(0, first.exec(ExecRequest.of("true")).exitCode());
            assertEquals(0, second.exec(ExecRequest.of("true")).exitCode());
            assertEquals(2, live(), "two sandboxes made");
            assertTrue(creates() > 2, "the second create was refused at least once before it made its sandbox: " + creates());
        }
    }

    @Test
    void whenTheAttemptsRunOutItIsOneLine() throws Exception {
        start("1/600");
        Settings s = fixture.settings().with("airlock.modal.retry.max-attempts", "2");
        try (Environment first = new ModalProvider().open(OpenContext.of(s))) {
            BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
                    () -> new ModalProvider().open(OpenContext.of(s)).close());
            assertTrue(e.getMessage().matches("Modal refused to create a sandbox: rate limited \\(RESOURCE_EXHAUSTED: Sandbox creation"
                    + " rate limit exceeded: at most 1 sandboxes per 600 s; try again in (5\\d\\d|600) s\\), still after 2 attempts;"
                    + " Modal refills sandbox creation at 5 per second in bursts of up to 150, so try again in a few seconds,"
                    + " or create fewer sandboxes at once \\(airlock.modal.retry.max-attempts and airlock.modal.retry.max-backoff"
                    + " let this client wait longer\\)"), e.getMessage());
            assertEquals(3, creates(), "the first create, then the refused one sent twice, as max-attempts allows");
            assertEquals(1, live(), "nothing made over the rate");
        }
    }
}
