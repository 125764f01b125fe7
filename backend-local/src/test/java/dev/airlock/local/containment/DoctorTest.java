package dev.airlock.local.containment;

import dev.airlock.tck.Services;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.containment.Doctor;
import dev.airlock.containment.DoctorReport;
import dev.airlock.containment.DoctorReport.Verdict;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code doctor} through the local backend: what it sees on a plain host and in the eval profile. */
class DoctorTest {
    private final Path runDir = Operator.newRunDir("doctor");

    @AfterEach
    void removeRunDir() {
        Operator.deleteTree(runDir);
    }

    @Test
    void autoModeOnAHostLeaks() {
        boolean cron = Operator.executable("/usr/bin/crontab");
        Operator.RealCrontab before = cron ? Operator.RealCrontab.read() : null;
        DoctorReport r;
        try (Environment env = Environments.open(Settings.of("airlock.container", "no", "airlock.local.isolation", "none"))) {
            r = Doctor.report(env);
        }
        assertTrue(r.isolation().startsWith("none, chosen with airlock.local.isolation=none"), r.isolation());
        assertEquals(Verdict.LEAKS, r.row("HOME").orElseThrow().verdict(), r.toText());
        assertTrue(r.row("HOME").orElseThrow().evidence().contains("a host (airlock.container=no)"), r.toText());
        assertEquals(cron ? Verdict.LEAKS : Verdict.NOT_APPLICABLE, r.row("crontab").orElseThrow().verdict(), r.toText());
        assertEquals(Verdict.LEAKS, r.row("user bus").orElseThrow().verdict(), "the test JVM's bus variables reach children: " + r.toText());
        assertEquals(Verdict.CONTAINED_BY_ENVIRONMENT, r.row("TMPDIR").orElseThrow().verdict(), r.toText());
        assertEquals(Verdict.CONTAINED_BY_ENVIRONMENT, r.row("argv secrecy").orElseThrow().verdict(), r.toText());
        // Measured, not assumed: what a command on a plain host can reach.
        for (String exit : new String[] {"processes", "JVM environment", "other stdin", "setsid job", "Airlock's state"}) {
            assertEquals(Verdict.LEAKS, r.row(exit).orElseThrow().verdict(), exit + ": " + r.toText());
        }
        if (Operator.isRoot()) {
            for (String exit : new String[] {"capabilities", "mounts", "passwd home"}) {
                assertEquals(Verdict.LEAKS, r.row(exit).orElseThrow().verdict(), exit + ": " + r.toText());
            }
        }
        assertEquals(DoctorReport.EXIT_LEAKS, r.exitCode());
        // The secret variables surefire sets are named, never shown.
        String secrets = r.row("secret variables").orElseThrow().evidence();
        assertTrue(secrets.contains("AIRLOCK_TEST_TOKEN") && secrets.contains("GITHUB_TOKEN") && secrets.contains("ACME_SESSION_BLOB"), r.toText());
        assertFalse(r.toText().contains("never-in-a-child") || r.toJson().contains("never-in-a-child"), "a secret value in the report");
        assertTrue(r.toText().contains("exits leak (exit status 5)"), r.toText());
        assertTrue(r.toJson().contains("\"leaks\":true,\"exitCode\":5"), r.toJson());
        if (cron) {
            Operator.RealCrontab.read().assertSameAs(before);
        }
    }

    /** The eval profile runs under bubblewrap when it is installed: every exit but argv is then enforced. */
    @ParameterizedTest
    @ValueSource(strings = {"native", "staged"})
    void theEvalProfileLeaksNothing(String envMode) {
        Services.require(Operator.executable("/usr/bin/bwrap"), "bubblewrap is not installed (apt-get install bubblewrap)");
        DoctorReport r;
        try (Environment env = Environments.open(Settings.of("airlock.container", "no", "airlock.profile", "eval",
                "airlock.run-dir", runDir.toString(), "airlock.local.env-mode", envMode, "airlock.local.workdir", "none",
                "airlock.local.network", "off"))) {
            r = Doctor.report(env);
        }
        assertEquals(0, r.exitCode(), r.toText());
        for (DoctorReport.Row row : r.rows()) {
            Verdict expected = row.exit().equals("argv secrecy") || row.exit().equals("secret variables")
                    ? Verdict.CONTAINED_BY_ENVIRONMENT
                    : row.exit().equals("git metadata") ? Verdict.NOT_APPLICABLE : Verdict.CONTAINED_ENFORCED; // no workdir here
            assertEquals(expected, row.verdict(), row + "\n" + r.toText());
        }
        assertTrue(r.row("HOME").orElseThrow().evidence().startsWith("HOME=" + runDir + "/home"), r.toText());
        assertTrue(r.row("crontab").orElseThrow().evidence().contains("the shim " + runDir + "/bin/crontab"), r.toText());
        assertTrue(r.row("TMPDIR").orElseThrow().evidence().contains("in the run dir"), r.toText());
        assertTrue(r.isolation().startsWith("bwrap: read-only /"), r.isolation());
        assertEquals("eval", r.profile());
        assertTrue(r.toText().contains("profile: eval (run dir " + runDir + ")"), r.toText());
        assertTrue(r.toJson().contains("\"leaks\":false,\"exitCode\":0"), r.toJson());
    }

    /**
     * With the host's network shared, a read-only / and a private /run hide no abstract socket and
     * no TCP port: doctor must say the sockets leak, never "enforced", while a listener is there.
     */
    @Test
    void aSharedNetworkIsNeverCalledEnforced() throws Exception {
        Services.require(Operator.executable("/usr/bin/bwrap"), "bubblewrap is not installed (apt-get install bubblewrap)");
        try (java.net.ServerSocket listener = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            DoctorReport shared;
            try (Environment env = Environments.open(Settings.of("airlock.container", "no", "airlock.profile", "eval",
                    "airlock.run-dir", runDir.toString(), "airlock.local.workdir", "none", "airlock.local.network", "on"))) {
                shared = Doctor.report(env);
            }
            DoctorReport.Row row = shared.row("sockets").orElseThrow();
            assertEquals(Verdict.LEAKS, row.verdict(), shared.toText());
            assertTrue(row.evidence().contains("airlock.network=off"), row.evidence());
            assertEquals(DoctorReport.EXIT_LEAKS, shared.exitCode(), shared.toText());
            DoctorReport cut;
            try (Environment env = Environments.open(Settings.of("airlock.container", "no", "airlock.profile", "eval",
                    "airlock.run-dir", runDir.toString(), "airlock.local.workdir", "none", "airlock.local.network", "off"))) {
                cut = Doctor.report(env);
            }
            assertEquals(Verdict.CONTAINED_ENFORCED, cut.row("sockets").orElseThrow().verdict(), cut.toText());
            // what the probe reached: no route out with the network off, this machine's routes with it on
            assertEquals(Verdict.CONTAINED_ENFORCED, cut.row("network").orElseThrow().verdict(), cut.toText());
            assertTrue(shared.row("network").orElseThrow().evidence().contains("route(s) out of the sandbox"), shared.toText());
        }
    }

    /** Without bubblewrap the eval profile contains by environment, and doctor says why there is no sandbox. */
    @Test
    void theEvalProfileWithoutBubblewrapSaysSo() {
        DoctorReport r;
        try (Environment env = Environments.open(Settings.of("airlock.container", "no", "airlock.profile", "eval",
                "airlock.run-dir", runDir.toString(), "airlock.local.bwrap", "/nonexistent/bwrap"))) {
            r = Doctor.report(env);
        }
        assertTrue(r.isolation().contains("apt-get install bubblewrap"), r.isolation());
        // Without a kernel to hold them, it names the exits a command can take whatever its environment says.
        for (String exit : new String[] {"the passwd home", "/usr/bin/crontab by full path", "/proc/PID/environ", "a link flipped after the check"}) {
            assertTrue(r.isolation().contains(exit), exit + ": " + r.isolation());
        }
        assertFalse(r.toText().contains("contained (by"), r.toText());
        assertTrue(r.toText().contains("exits are steered, not enforced"), r.toText());
        // Without a sandbox the eval profile does not call itself contained: what it cannot stop, it says.
        assertEquals(DoctorReport.EXIT_LEAKS, r.exitCode(), r.toText());
        for (String exit : new String[] {"processes", "JVM environment", "other stdin", "setsid job"}) {
            assertEquals(Verdict.LEAKS, r.row(exit).orElseThrow().verdict(), exit + ": " + r.toText());
        }
        for (String exit : new String[] {"HOME", "crontab", "TMPDIR", "argv secrecy"}) {
            assertEquals(Verdict.CONTAINED_BY_ENVIRONMENT, r.row(exit).orElseThrow().verdict(), r.toText());
        }
        boolean hostSocket = Operator.run(java.util.List.of("sh", "-c", "for s in /run/docker.sock /run/containerd/containerd.sock; do"
                + " [ -S $s ] && [ -w $s ] && exit 0; done; exit 1"), null).exit() == 0;
        if (hostSocket) {
            assertEquals(Verdict.LEAKS, r.row("sockets").orElseThrow().verdict(), r.toText());
            assertEquals(DoctorReport.EXIT_LEAKS, r.exitCode());
        }
    }

    /** The argv row is not vacuous: the same probe finds a marker that does sit in some argv. */
    @Test
    void theArgvProbeFindsAMarkerThatIsInAnArgv() {
        try (Environment env = Environments.open(Settings.of("airlock.container", "no"))) {
            String marker = "airlock-doctor-control-" + System.nanoTime();
            ExecResult r = env.exec(ExecRequest.builder("sh -c 'sleep 5' " + marker + " &\nsleep 0.3\n" + Doctor.script())
                    .stdin((marker + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8)).timeout(java.time.Duration.ofSeconds(30)).build());
            // the marker sits in the control's argv (and in the script text this exec was given)
            assertTrue(r.stdout().text().matches("(?s).*\0argv_hits=[1-9][0-9]*\0.*"), r.stdout().text());
        }
    }

    @Test
    void theProfileHomeInAContainerIsContainedByEnvironment() {
        DoctorReport r;
        try (Environment env = Environments.open(Settings.of("airlock.container", "yes", "airlock.local.isolation", "none"))) {
            r = Doctor.report(env);
        }
        assertEquals(Verdict.CONTAINED_BY_ENVIRONMENT, r.row("HOME").orElseThrow().verdict(), r.toText());
        assertTrue(r.row("HOME").orElseThrow().evidence().contains("a container (airlock.container=yes)"), r.toText());
        assertTrue(r.containerSignal().equals("airlock.container=yes") && r.container());
        Operator.deleteTree(Operator.home().resolve(".airlock"));
    }
}
