package dev.airlock.local;

import dev.airlock.DeniedException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.event.AuditEvent;
import dev.airlock.event.ExecState;
import dev.airlock.event.ExecTransition;
import dev.airlock.safety.ApprovalChannel;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The public way to open with an approval channel and listeners: {@code Environments.builder()...open()}. */
class EnvironmentsBuilderTest {

    private static Settings settings(Path airlockHome) {
        // The guard's approval route, where it is the only net (bubblewrap keeps ~/.ssh read-only whatever it answers).
        return Settings.of("airlock.container", "no", "airlock.home-mode", "profile", "airlock.home", airlockHome.toString(),
                "airlock.local.isolation", "none");
    }

    @Test
    void listenersGivenAsLambdasSeeExecsAndTransitions(@TempDir Path airlockHome) {
        List<AuditEvent> events = new CopyOnWriteArrayList<>();
        List<ExecTransition> transitions = new CopyOnWriteArrayList<>();
        try (Environment env = Environments.builder().settings(settings(airlockHome))
                .onEvent(events::add)
                .onTransition(transitions::add)
                .open()) {
            assertEquals(0, env.exec(ExecRequest.of("true")).exitCode());
        }
        assertTrue(events.stream().anyMatch(e -> e.type().equals("exec")), "an exec event: " + events);
        assertTrue(transitions.stream().anyMatch(t -> t.to() == ExecState.DONE), "a DONE transition: " + transitions);
    }

    @Test
    void theApprovalChannelDecidesWritesThatNeedApproval(@TempDir Path airlockHome) {
        List<ApprovalChannel.ApprovalRequest> asked = new CopyOnWriteArrayList<>();
        byte[] bytes = "Host work\n".getBytes(StandardCharsets.UTF_8);
        try (Environment env = Environments.builder().settings(settings(airlockHome))
                .approvalChannel((request, timeout) -> {
                    asked.add(request);
                    return ApprovalChannel.Decision.DENY;
                })
                .open()) {
            assertThrows(DeniedException.class, () -> env.files().write("~/.ssh/config", bytes));
            assertEquals(1, asked.size(), "the channel was asked once");
            assertTrue(asked.get(0).path().endsWith("/.ssh/config"), asked.toString());
            assertFalse(Files.exists(Path.of(env.target().home(), ".ssh/config")));
        }
        try (Environment env = Environments.builder().settings(settings(airlockHome))
                .approvalChannel((request, timeout) -> ApprovalChannel.Decision.ONCE)
                .open()) {
            env.files().write("~/.ssh/config", bytes);
            assertTrue(Files.exists(Path.of(env.target().home(), ".ssh/config")), "approved once: written");
        }
    }
}
