package dev.airlock.local.safety;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.event.AuditEvent;
import dev.airlock.event.ExecListener;
import dev.airlock.event.ExecTransition;
import dev.airlock.safety.ApprovalChannel;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Opens local environments whose HOME is a profile home in a temporary AIRLOCK_HOME, with a
 * scripted approval channel and a listener that keeps the approved/denied events.
 */
final class SafetyFixture {
    final Path airlockHome;
    final List<AuditEvent> events = new CopyOnWriteArrayList<>();

    SafetyFixture(Path airlockHome) {
        this.airlockHome = airlockHome;
    }

    /** An approval channel that gives one answer and counts the questions; a real implementation of the interface. */
    static final class ScriptedChannel implements ApprovalChannel {
        final AtomicInteger asked = new AtomicInteger();
        final List<ApprovalRequest> requests = new CopyOnWriteArrayList<>();
        final Decision answer;

        ScriptedChannel(Decision answer) {
            this.answer = answer;
        }

        @Override
        public Decision ask(ApprovalRequest request, Duration timeout) {
            asked.incrementAndGet();
            requests.add(request);
            return answer;
        }
    }

    Environment open(ApprovalChannel channel, String... extra) {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("airlock.container", "no");
        s.put("airlock.home-mode", "profile");
        s.put("airlock.home", airlockHome.toString());
        // The guard's own routes, where it is the only net: under bubblewrap (the default) the
        // kernel keeps the credential dirs read-only whatever the guard answers.
        s.put("airlock.local.isolation", "none");
        for (int i = 0; i < extra.length; i += 2) {
            s.put(extra[i], extra[i + 1]);
        }
        ExecListener listener = new ExecListener() {
            @Override
            public void onTransition(ExecTransition transition) {
            }

            @Override
            public void onEvent(AuditEvent event) {
                if (event.type().equals("approved") || event.type().equals("denied")) {
                    events.add(event);
                }
            }
        };
        Environment env = Environments.open(OpenContext.builder(Settings.of(s)).approvalChannel(channel).listener(listener).build());
        assertTrue(env.target().home().startsWith(airlockHome.toString()),
                "HOME must be the profile home in the temp AIRLOCK_HOME, got " + env.target().home());
        return env;
    }

    List<String> eventLines() {
        List<String> out = new ArrayList<>();
        for (AuditEvent e : events) {
            out.add(e.type() + " " + e.fields().get("route") + " " + e.subject());
        }
        return out;
    }

    /** The fake real home surefire gives this JVM; refuses to go on if HOME is the machine's real one. */
    static Path fakeRealHome(String processHome) {
        Path p = Path.of(processHome);
        assertTrue(p.toString().endsWith("/test-home"),
                "these tests need the fake HOME surefire sets (test-home under airlock.test.root), not " + p + "; run them through Maven");
        return p;
    }

    static String read(Path p) throws java.io.IOException {
        return Files.readString(p);
    }
}
