package dev.airlock.modal;

import dev.airlock.AirlockException;
import dev.airlock.modal.proto.Resources;
import dev.airlock.modal.proto.Sandbox;
import dev.airlock.modal.proto.SandboxCreateRequest;
import dev.airlock.remote.Resource;
import dev.airlock.remote.RetryPolicy;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The service's limits on a sandbox (a timeout of at most 24 hours, at most 64 cores and 336 GiB
 * of memory), refused INVALID_ARGUMENT before anything is made; the client's line for the one its
 * own settings let through (memory).
 */
class ModalLimitsTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture();

    private static ModalClient client() {
        var s = EMULATOR.settings();
        return new ModalClient(ModalSettings.from(s, Map.of()), RetryPolicy.from(s, ModalSettings.PREFIX));
    }

    @Test
    void aTimeoutOver24HoursIsRefused() {
        assertRefused(Sandbox.newBuilder().setTimeoutSecs(100 * 3600),
                "Modal refused SandboxCreate (INVALID_ARGUMENT) (Sandbox timeout of 360000 seconds exceeds the maximum of"
                        + " 86400 seconds (24 hours))");
    }

    @Test
    void moreThan64CoresAreRefused() {
        assertRefused(Sandbox.newBuilder().setTimeoutSecs(60).setResources(Resources.newBuilder().setMilliCpu(4096 * 1000)),
                "Modal refused SandboxCreate (INVALID_ARGUMENT) (CPU request of 4096.0 cores exceeds the maximum of 64 cores)");
    }

    @Test
    void moreThan336GibibytesOfMemoryAreRefused() {
        assertRefused(Sandbox.newBuilder().setTimeoutSecs(60).setResources(Resources.newBuilder().setMemoryMb(10_000_000)),
                "Modal refused SandboxCreate (INVALID_ARGUMENT) (Memory request of 10000000 MiB exceeds the maximum of"
                        + " 344064 MiB (336 GiB))");
    }

    /** The SDK's {@code command} (an entrypoint) is refused, never dropped: the emulator runs no entrypoint. */
    @Test
    void anEntrypointIsRefusedNotIgnored() {
        assertRefused(Sandbox.newBuilder().setTimeoutSecs(60).addEntrypointArgs("sleep").addEntrypointArgs("1"),
                "Modal refused SandboxCreate (INVALID_ARGUMENT) (entrypoint_args on a sandbox are not run by this emulator;"
                        + " create it without a command and exec the command instead)");
    }

    @Test
    void theClientSaysSoInOneLine() {
        long live = ((dev.airlock.modal.emulator.ModalEmulator) EMULATOR.served.emulator()).liveSandboxes();
        AirlockException e = assertThrows(AirlockException.class, () -> new ModalProvider().open(
                OpenContext.of(EMULATOR.settings().with(ModalSettings.MEMORY, "400000"))).close());
        assertEquals("Modal refused SandboxCreateV2 (INVALID_ARGUMENT) (Memory request of 400000 MiB exceeds the maximum of"
                + " 344064 MiB (336 GiB))", e.getMessage());
        assertEquals(live, ((dev.airlock.modal.emulator.ModalEmulator) EMULATOR.served.emulator()).liveSandboxes());
    }

    private static void assertRefused(Sandbox.Builder def, String message) {
        try (ModalClient c = client()) {
            long live = ((dev.airlock.modal.emulator.ModalEmulator) EMULATOR.served.emulator()).liveSandboxes();
            AirlockException e = assertThrows(AirlockException.class, () -> c.control("SandboxCreate", Resource.none(),
                    st -> st.sandboxCreate(SandboxCreateRequest.newBuilder().setAppId("ap-limits")
                            .setDefinition(def.setImageId("im-any")).build())));
            assertEquals(message, e.getMessage());
            assertEquals(live, ((dev.airlock.modal.emulator.ModalEmulator) EMULATOR.served.emulator()).liveSandboxes(),
                    "nothing made over a limit");
        }
    }
}
