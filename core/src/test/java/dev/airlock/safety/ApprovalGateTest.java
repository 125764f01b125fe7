package dev.airlock.safety;

import dev.airlock.ApprovalRequiredException;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The approval gate's order and scopes, with a scripted channel. */
class ApprovalGateTest {
    private static final String PATH = "/home/dev/.ssh/config";

    @TempDir
    Path airlockHome;

    private final List<String> events = new ArrayList<>();

    /** A channel that answers as told and counts the questions. */
    static final class ScriptedChannel implements ApprovalChannel {
        final AtomicInteger asked = new AtomicInteger();
        final Decision answer;

        ScriptedChannel(Decision answer) {
            this.answer = answer;
        }

        @Override
        public Decision ask(ApprovalRequest request, Duration timeout) {
            asked.incrementAndGet();
            return answer;
        }
    }

    private ApprovalGate gate(Settings settings, ApprovalChannel channel) {
        return gate("local", "dev@box", settings, channel);
    }

    private ApprovalGate gate(String backend, String target, Settings settings, ApprovalChannel channel) {
        return new ApprovalGate(backend, target, settings, Optional.ofNullable(channel), new ApprovalStore(airlockHome),
                (type, subject, fields) -> events.add(type + " " + subject + " " + fields.get("scope") + " " + fields.get("reason")));
    }

    @Test
    void onceAsksEveryTime() {
        ScriptedChannel ch = new ScriptedChannel(ApprovalChannel.Decision.ONCE);
        ApprovalGate g = gate(Settings.empty(), ch);
        g.approve(PATH, "write", "write", "why");
        g.approve(PATH, "exec", "exec: x", "why");
        assertEquals(2, ch.asked.get());
        assertEquals(List.of("approved " + PATH + " once null", "approved " + PATH + " once null"), events);
    }

    @Test
    void sessionAsksOnceForThisGate() {
        ScriptedChannel ch = new ScriptedChannel(ApprovalChannel.Decision.SESSION);
        ApprovalGate g = gate(Settings.empty(), ch);
        g.approve(PATH, "write", "write", "why");
        g.approve(PATH, "exec", "exec: x", "why");
        assertEquals(1, ch.asked.get());
        assertEquals("approved " + PATH + " session (remembered) null", events.get(1));
        // A new session asks again, and nothing was saved.
        ScriptedChannel again = new ScriptedChannel(ApprovalChannel.Decision.SESSION);
        gate(Settings.empty(), again).approve(PATH, "write", "write", "why");
        assertEquals(1, again.asked.get());
        assertFalse(Files.exists(airlockHome.resolve(ApprovalStore.FILE_NAME)));
    }

    @Test
    void alwaysIsSavedPrivatelyAndScopedToBackendAndTarget() throws Exception {
        ScriptedChannel ch = new ScriptedChannel(ApprovalChannel.Decision.ALWAYS);
        gate(Settings.empty(), ch).approve(PATH, "write", "write", "why");
        Path file = airlockHome.resolve(ApprovalStore.FILE_NAME);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));

        ScriptedChannel never = new ScriptedChannel(ApprovalChannel.Decision.DENY);
        gate(Settings.empty(), never).approve(PATH, "exec", "exec: x", "why");
        assertEquals(0, never.asked.get(), "a new environment on the same target remembers");

        ScriptedChannel otherTarget = new ScriptedChannel(ApprovalChannel.Decision.DENY);
        assertThrows(ApprovalRequiredException.class,
                () -> gate("local", "dev@elsewhere", Settings.empty(), otherTarget).approve(PATH, "write", "write", "why"));
        assertEquals(1, otherTarget.asked.get());
        ScriptedChannel otherBackend = new ScriptedChannel(ApprovalChannel.Decision.DENY);
        assertThrows(ApprovalRequiredException.class,
                () -> gate("docker", "dev@box", Settings.empty(), otherBackend).approve(PATH, "write", "write", "why"));
        ScriptedChannel otherPath = new ScriptedChannel(ApprovalChannel.Decision.DENY);
        assertThrows(ApprovalRequiredException.class,
                () -> gate(Settings.empty(), otherPath).approve("/srv/airlock/home/.ssh/config", "write", "write", "why"));
    }

    @Test
    void anAllowlistOthersMayWriteIsIgnored() throws Exception {
        gate(Settings.empty(), new ScriptedChannel(ApprovalChannel.Decision.ALWAYS)).approve(PATH, "write", "write", "why");
        Path file = airlockHome.resolve(ApprovalStore.FILE_NAME);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-rw-"));
        ScriptedChannel ch = new ScriptedChannel(ApprovalChannel.Decision.DENY);
        assertThrows(ApprovalRequiredException.class, () -> gate(Settings.empty(), ch).approve(PATH, "write", "write", "why"));
        assertEquals(1, ch.asked.get());
    }

    @Test
    void denyIsAnApprovalRequiredErrorOnOneLine() {
        ScriptedChannel ch = new ScriptedChannel(ApprovalChannel.Decision.DENY);
        ApprovalRequiredException e = assertThrows(ApprovalRequiredException.class,
                () -> gate(Settings.empty(), ch).approve(PATH, "write", "write", "why"));
        assertFalse(e.getMessage().contains("\n"));
        assertTrue(e.getMessage().startsWith("Write denied: '" + PATH + "'"), e.getMessage());
        assertTrue(e.getMessage().contains("unless the user explicitly agrees"), e.getMessage());
        assertEquals("denied", e.kind());
        assertTrue(events.get(0).startsWith("denied " + PATH), events.toString());
    }

    @Test
    void yoloApprovesWithoutAsking() {
        ScriptedChannel ch = new ScriptedChannel(ApprovalChannel.Decision.DENY);
        gate(Settings.of(ApprovalGate.YOLO_KEY, "1"), ch).approve(PATH, "write", "write", "why");
        assertEquals(0, ch.asked.get());
        assertEquals("approved " + PATH + " yolo null", events.get(0));
    }

    @Test
    void silenceDenies() {
        CountDownLatch never = new CountDownLatch(1);
        AtomicInteger interrupted = new AtomicInteger();
        ApprovalChannel hangs = (req, timeout) -> {
            try {
                never.await();
            } catch (InterruptedException e) {
                interrupted.incrementAndGet();
            }
            return ApprovalChannel.Decision.ALWAYS;
        };
        ApprovalRequiredException e = assertThrows(ApprovalRequiredException.class,
                () -> gate(Settings.of(ApprovalGate.TIMEOUT_KEY, "1s"), hangs).approve(PATH, "write", "write", "why"));
        assertTrue(e.getMessage().contains("no answer came within 1s"), e.getMessage());
        assertFalse(Files.exists(airlockHome.resolve(ApprovalStore.FILE_NAME)));
    }

    @Test
    void aFailingChannelDenies() {
        ApprovalChannel broken = (req, timeout) -> {
            throw new IllegalStateException("chat backend down\nsecond line");
        };
        ApprovalRequiredException e = assertThrows(ApprovalRequiredException.class,
                () -> gate(Settings.empty(), broken).approve(PATH, "write", "write", "why"));
        assertFalse(e.getMessage().contains("\n"));
    }

    @Test
    void cronFollowsTheCronMode() {
        ApprovalRequiredException e = assertThrows(ApprovalRequiredException.class,
                () -> gate(Settings.of(ApprovalGate.CONTEXT_KEY, "cron"), null).approve(PATH, "write", "write", "why"));
        assertTrue(e.getMessage().contains("cron"), e.getMessage());
        gate(Settings.of(ApprovalGate.CONTEXT_KEY, "cron", ApprovalGate.CRON_MODE_KEY, "allow"), null)
                .approve(PATH, "write", "write", "why");
        assertTrue(events.get(events.size() - 1).startsWith("approved " + PATH + " cron"), events.toString());
    }

    @Test
    void noChannelFailsClosed() {
        ApprovalRequiredException e = assertThrows(ApprovalRequiredException.class,
                () -> gate(Settings.empty(), null).approve(PATH, "exec", "exec: x", "why"));
        assertTrue(e.getMessage().contains("no approval channel is available"), e.getMessage());
        assertTrue(e.getMessage().contains("Do not retry it through the terminal, code execution or another tool"), e.getMessage());
    }

    @Test
    void aBadCronModeIsAConfigurationError() {
        Map<String, String> bad = Map.of(ApprovalGate.CRON_MODE_KEY, "maybe");
        dev.airlock.ConfigurationException e = assertThrows(dev.airlock.ConfigurationException.class,
                () -> gate(Settings.of(bad), null));
        assertTrue(e.getMessage().contains("deny, allow"), e.getMessage());
    }
}
