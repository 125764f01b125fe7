package dev.airlock.local.safety;

import dev.airlock.ApprovalRequiredException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.safety.ApprovalChannel.Decision;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 31, door 6: without a sandbox a command can write Airlock's approvals list (its user can),
 * so what it writes there must not matter: an approval planted while commands could run is not
 * honoured in this environment, and at close the list is put back, the planted one kept aside.
 * Airlock's own "always" approvals keep working.
 */
class OwnStateWitnessTest {
    @TempDir
    Path airlockHome;

    private Path approvals() {
        return airlockHome.resolve("approvals.list");
    }

    private String plantedLine(Environment env) throws Exception {
        String path = airlockHome.resolve("home/.ssh/config").toString();
        return String.join(" ", Stream.of("local", env.target().user() + "@" + env.target().hostname(), path)
                .map(s -> URLEncoder.encode(s, StandardCharsets.UTF_8)).toList());
    }

    @Test
    void anApprovalACommandPlantsIsNeitherHonouredNorKept() throws Exception {
        SafetyFixture fx = new SafetyFixture(airlockHome);
        SafetyFixture.ScriptedChannel ch = new SafetyFixture.ScriptedChannel(Decision.DENY);
        try (Environment env = fx.open(ch, "airlock.guard", "off", "airlock.local.isolation", "none")) {
            ExecResult r = env.exec(ExecRequest.builder("printf '%s\\n' \"$LINE\" >> \"$LIST\"")
                    .env("LINE", plantedLine(env)).env("LIST", approvals().toString()).build());
            assertEquals(0, r.exitCode(), r.stderr().text());
            assertTrue(Files.readString(approvals()).contains(plantedLine(env)), "the command did plant it");
            assertThrows(ApprovalRequiredException.class,
                    () -> env.files().write("~/.ssh/config", "Host evil\n".getBytes(StandardCharsets.UTF_8)));
            assertEquals(1, ch.asked.get(), "the human was asked: the planted approval was not taken");
        }
        assertFalse(Files.exists(approvals()), "put back as it was (absent) at close");
        try (Stream<Path> s = Files.list(airlockHome)) {
            List<Path> kept = s.filter(p -> p.getFileName().toString().startsWith("approvals.list.changed-")).toList();
            assertEquals(1, kept.size(), "the changed list is kept for the operator");
            assertTrue(Files.readString(kept.get(0)).contains("%2Fhome%2F.ssh%2Fconfig"));
        }
        assertFalse(Files.exists(airlockHome.resolve("home/.ssh/config")));
    }

    @Test
    void airlocksOwnAlwaysApprovalsAreKeptAndHonoured() throws Exception {
        SafetyFixture fx = new SafetyFixture(airlockHome);
        SafetyFixture.ScriptedChannel ch = new SafetyFixture.ScriptedChannel(Decision.ALWAYS);
        try (Environment env = fx.open(ch, "airlock.local.isolation", "none")) {
            assertEquals(0, env.exec(ExecRequest.of("true")).exitCode()); // commands could run from here on
            env.files().write("~/.ssh/config", "Host a\n".getBytes(StandardCharsets.UTF_8));
            env.files().write("~/.ssh/config", "Host b\n".getBytes(StandardCharsets.UTF_8));
            assertEquals(1, ch.asked.get(), "the second write took the approval Airlock wrote");
        }
        assertTrue(Files.readString(approvals()).contains("%2Fhome%2F.ssh%2Fconfig"), "kept at close");
        try (Stream<Path> s = Files.list(airlockHome)) {
            assertTrue(s.noneMatch(p -> p.getFileName().toString().contains(".changed-")));
        }
    }
}
