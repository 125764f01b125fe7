package dev.airlock.containment;

import dev.airlock.Target;
import dev.airlock.containment.DoctorReport.Verdict;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The doctor's rules on the facts its probe reports; the probe itself runs in backend-local's tests. */
class DoctorJudgeTest {
    private static final Target HOST = new Target("Linux", "box", 1000, "op", "/home/op", "/home/op", "/home/op", "/tmp",
            "/tmp/airlock-abc", "bash", false, "airlock.container=no");

    private static Map<String, String> hostFacts() {
        Map<String, String> f = new HashMap<>();
        f.put("uid", "1000");
        f.put("home", "/home/op");
        f.put("real_home", "/home/op");
        f.put("real_home_w", "1");
        f.put("real_home_ro", "0");
        f.put("crontab", "/usr/bin/crontab");
        f.put("crontab_shim", "0");
        f.put("crontab_real", "/usr/bin/crontab");
        f.put("spool", "/var/spool/cron/crontabs");
        f.put("spool_ro", "0");
        f.put("dbus", "unix:path=/run/user/1000/bus");
        f.put("xdg_runtime", "/run/user/1000");
        f.put("bus_socket", "/run/user/1000/bus");
        f.put("bus_socket_w", "1");
        f.put("tmpdir", "/tmp/airlock-abc/tmp");
        f.put("tmpdir_mode", "700");
        f.put("tmp_ro", "0");
        f.put("procs", "120");
        f.put("argv_hits", "0");
        return f;
    }

    private static Optional<Containment> plan(String... settings) {
        return Optional.of(Containment.plan(ContainmentSettings.from(Settings.of(settings)), "/home/op",
                Map.of("path", "/usr/bin"), false, "airlock.container=no"));
    }

    @Test
    void aPlainHostLeaksHomeCrontabAndTheBus() {
        DoctorReport r = Doctor.judge("local", HOST, plan(), "on (auto: test)", "none", hostFacts());
        assertEquals(Verdict.LEAKS, r.row("HOME").orElseThrow().verdict());
        assertEquals(Verdict.LEAKS, r.row("crontab").orElseThrow().verdict());
        assertEquals(Verdict.LEAKS, r.row("user bus").orElseThrow().verdict());
        assertEquals(Verdict.CONTAINED_BY_ENVIRONMENT, r.row("TMPDIR").orElseThrow().verdict());
        assertEquals(Verdict.CONTAINED_BY_ENVIRONMENT, r.row("argv secrecy").orElseThrow().verdict());
        assertEquals(Verdict.NOT_APPLICABLE, r.row("sockets").orElseThrow().verdict());
        assertEquals(5, r.exitCode());
        assertTrue(r.row("HOME").orElseThrow().evidence().contains("a host (airlock.container=no)"),
                r.row("HOME").orElseThrow().evidence());
    }

    @Test
    void theEvalProfileLeaksNothing() {
        Map<String, String> f = hostFacts();
        f.put("home", "/runs/1/home");
        f.put("crontab", "/runs/1/bin/crontab");
        f.put("crontab_shim", "1");
        f.put("systemctl", "/runs/1/bin/systemctl");
        f.put("systemctl_shim", "1");
        f.remove("dbus");
        f.remove("xdg_runtime");
        f.put("tmpdir", "/runs/1/tmp");
        DoctorReport r = Doctor.judge("local", HOST, plan("airlock.profile", "eval", "airlock.run-dir", "/runs/1"), "on (auto: test)", "none", f);
        assertEquals(Verdict.CONTAINED_BY_ENVIRONMENT, r.row("HOME").orElseThrow().verdict());
        assertEquals(Verdict.CONTAINED_BY_ENVIRONMENT, r.row("crontab").orElseThrow().verdict());
        assertEquals(Verdict.CONTAINED_BY_ENVIRONMENT, r.row("user bus").orElseThrow().verdict());
        assertTrue(r.row("TMPDIR").orElseThrow().evidence().contains("in the run dir"), r.row("TMPDIR").orElseThrow().evidence());
        assertEquals(0, r.exitCode());
        assertTrue(r.toText().contains("nothing leaks (exit status 0)"), r.toText());
    }

    @Test
    void readOnlyMountsAreEnforcement() {
        Map<String, String> f = hostFacts();
        f.put("home", "/runs/1/home");
        f.put("real_home_ro", "1");
        f.put("spool_ro", "1");
        f.put("tmp_ro", "1");
        DoctorReport r = Doctor.judge("local", HOST, plan("airlock.home-mode", "profile"), "on (auto: test)", "none", f);
        assertEquals(Verdict.CONTAINED_ENFORCED, r.row("HOME").orElseThrow().verdict());
        assertEquals(Verdict.CONTAINED_ENFORCED, r.row("crontab").orElseThrow().verdict());
        assertEquals(Verdict.CONTAINED_ENFORCED, r.row("TMPDIR").orElseThrow().verdict());
    }

    @Test
    void theSharedTempDirAndArgvHitsLeak() {
        Map<String, String> f = hostFacts();
        f.put("tmpdir", "/tmp/");
        f.put("argv_hits", "2");
        DoctorReport r = Doctor.judge("local", HOST, Optional.empty(), "on (auto: test)", "none", f);
        assertEquals(Verdict.LEAKS, r.row("TMPDIR").orElseThrow().verdict());
        assertEquals(Verdict.LEAKS, r.row("argv secrecy").orElseThrow().verdict());
        assertEquals("unknown", r.homeMode());
        f.remove("tmpdir");
        f.remove("procs");
        DoctorReport r2 = Doctor.judge("local", HOST, Optional.empty(), "on (auto: test)", "none", f);
        assertEquals(Verdict.LEAKS, r2.row("TMPDIR").orElseThrow().verdict());
        assertEquals(Verdict.NOT_APPLICABLE, r2.row("argv secrecy").orElseThrow().verdict());
    }

    @Test
    void noCrontabAndNoBusAreNotApplicable() {
        Map<String, String> f = hostFacts();
        f.remove("crontab");
        f.remove("crontab_real");
        f.remove("crontab_shim");
        f.remove("dbus");
        f.remove("xdg_runtime");
        f.remove("bus_socket");
        DoctorReport r = Doctor.judge("local", HOST, plan(), "on (auto: test)", "none", f);
        assertEquals(Verdict.NOT_APPLICABLE, r.row("crontab").orElseThrow().verdict());
        assertEquals(Verdict.NOT_APPLICABLE, r.row("user bus").orElseThrow().verdict());
    }

    @Test
    void theNetworkRowSaysWhatTheProbeFoundNotWhatWasAsked() {
        Map<String, String> f = hostFacts();
        f.put("routes", "0");
        assertEquals(Verdict.CONTAINED_ENFORCED, Doctor.judge("local", HOST, plan(), "on", "none", f).row("network")
                .orElseThrow().verdict());
        f.put("routes", "3");
        DoctorReport.Row on = Doctor.judge("local", HOST, plan(), "on", "none", f).row("network").orElseThrow();
        assertEquals(Verdict.NOT_APPLICABLE, on.verdict());
        assertTrue(on.evidence().contains("found 3 route(s) out of the sandbox"), on.evidence());
        f.put("network_asked", "allowlist");
        DoctorReport.Row listed = Doctor.judge("local", HOST, plan(), "on", "none", f).row("network").orElseThrow();
        assertEquals(Verdict.NOT_APPLICABLE, listed.verdict(), "an allowlist the probe cannot see must not be called enforced");
        assertTrue(listed.evidence().contains("a filter outside it, which no probe inside can read"), listed.evidence());
        f.put(DoctorRules.ALLOWLIST_CHECKED, "172.17.0.1:4242 (not on the list) was unreachable from inside");
        DoctorReport.Row checked = Doctor.judge("docker", HOST, plan(), "on", "none", f).row("network").orElseThrow();
        assertEquals(Verdict.CONTAINED_ENFORCED, checked.verdict(), "an allowlist checked from outside: " + checked.evidence());
        assertTrue(checked.evidence().endsWith("checked from outside: 172.17.0.1:4242 (not on the list) was unreachable from inside"),
                checked.evidence());
        f.remove(DoctorRules.ALLOWLIST_CHECKED);
        f.put("unlisted_tried", "127.0.0.1 10.0.2.2");
        f.put("unlisted_port", "4321");
        f.put("unlisted_reached", "");
        DoctorReport.Row unreached = Doctor.judge("local", HOST, plan(), "on", "none", f).row("network").orElseThrow();
        assertEquals(Verdict.NOT_APPLICABLE, unreached.verdict(), unreached.evidence());
        assertTrue(unreached.evidence().contains("did not answer it at 127.0.0.1 10.0.2.2 port 4321"), unreached.evidence());
        f.put("unlisted_reached", "10.0.2.2");
        DoctorReport.Row reached = Doctor.judge("local", HOST, plan(), "on", "none", f).row("network").orElseThrow();
        assertEquals(Verdict.LEAKS, reached.verdict(), "a server the list does not name answered: " + reached.evidence());
        assertTrue(reached.evidence().contains("answered the probe at 10.0.2.2 port 4321"), reached.evidence());
        f.put(DoctorRules.ALLOWLIST_CHECKED, "172.17.0.1:4242 (not on the list) was unreachable from inside");
        assertEquals(Verdict.LEAKS, Doctor.judge("local", HOST, plan(), "on", "none", f).row("network").orElseThrow().verdict(),
                "an unlisted server that answered is a leak whatever a check from outside said");
        f.remove(DoctorRules.ALLOWLIST_CHECKED);
        f.remove("unlisted_tried");
        f.remove("unlisted_reached");
        f.remove("unlisted_port");
        f.put("network_asked", "off");
        DoctorReport.Row asked = Doctor.judge("local", HOST, plan(), "on", "none", f).row("network").orElseThrow();
        assertEquals(Verdict.LEAKS, asked.verdict(), "off was asked but the probe found routes: " + asked.evidence());
        f.remove("routes");
        assertEquals(Verdict.NOT_APPLICABLE, Doctor.judge("local", HOST, plan(), "on", "none", f).row("network")
                .orElseThrow().verdict());
    }

    @Test
    void reachableHostSocketsLeakAndASandboxsOwnRunIsEnforcement() {
        Map<String, String> f = hostFacts();
        f.put("sockets", "/run/docker.sock /run/user/1000/bus");
        DoctorReport r = Doctor.judge("local", HOST, plan(), "on (auto: test)", "none", f);
        assertEquals(Verdict.LEAKS, r.row("sockets").orElseThrow().verdict());
        assertTrue(r.row("sockets").orElseThrow().evidence().contains("/run/docker.sock, /run/user/1000/bus"));

        Map<String, String> box = hostFacts();
        box.remove("dbus");
        box.remove("xdg_runtime");
        box.remove("bus_socket");
        box.put("home", "/home/op/.airlock/home");
        box.put("root_ro", "1");
        box.put("real_home_ro", "1");
        box.put("run_fs", "tmpfs");
        box.put("tmp_fs", "tmpfs");
        box.put("sockets", "");
        DoctorReport b = Doctor.judge("local", HOST, plan("airlock.home-mode", "profile"), "on (auto: test)", "bwrap: test", box);
        assertEquals(Verdict.CONTAINED_ENFORCED, b.row("HOME").orElseThrow().verdict());
        assertEquals(Verdict.CONTAINED_ENFORCED, b.row("user bus").orElseThrow().verdict());
        assertEquals(Verdict.CONTAINED_ENFORCED, b.row("TMPDIR").orElseThrow().verdict());
        assertEquals(Verdict.CONTAINED_ENFORCED, b.row("sockets").orElseThrow().verdict());
        assertTrue(b.toText().contains("isolation: bwrap: test"), b.toText());
    }

    /**
     * /tmp bound from a dir of the environment's private dir is its own; the same bind from any
     * other dir (the host's /tmp itself, another environment's) is not.
     */
    @Test
    void aTempDirBoundFromThePrivateDirIsTheEnvironmentsOwn() {
        Map<String, String> box = hostFacts();
        box.put("root_ro", "1");
        box.put("tmp_fs", "ext4");
        box.put("tmp_root", "/tmp/airlock-abc/sandbox-tmp");
        DoctorReport own = Doctor.judge("local", HOST, plan(), "on (auto: test)", "bwrap: test", box);
        assertEquals(Verdict.CONTAINED_ENFORCED, own.row("TMPDIR").orElseThrow().verdict(), own.toText());
        assertTrue(own.row("TMPDIR").orElseThrow().evidence().contains("removed on close"), own.toText());
        for (String other : new String[] {"/tmp", "/", "/tmp/airlock-other/sandbox-tmp", "/tmp/airlock-abc/sandbox-tmp/x", "/tmp/airlock-abcd/sandbox-tmp",
                "/tmp/airlock-abc/tmp"}) {
            box.put("tmp_root", other);
            DoctorReport r = Doctor.judge("local", HOST, plan(), "on (auto: test)", "bwrap: test", box);
            assertEquals(Verdict.CONTAINED_BY_ENVIRONMENT, r.row("TMPDIR").orElseThrow().verdict(), other + ": " + r.toText());
        }
    }

    @Test
    void jsonCarriesEveryRowAndTheDecidingSignal() {
        String json = Doctor.judge("local", HOST, plan(), "on (auto: test)", "none", hostFacts()).toJson();
        assertTrue(json.startsWith("{\"backend\":\"local\",\"target\":\"op@box\""), json);
        assertTrue(json.contains("\"containerSignal\":\"airlock.container=no\""), json);
        assertTrue(json.contains("\"leaks\":true,\"exitCode\":5"), json);
        assertTrue(json.contains("\"commandGuard\":\"on (auto: test)\""), json);
        for (String exit : new String[] {"HOME", "crontab", "user bus", "TMPDIR", "argv secrecy", "sockets"}) {
            assertTrue(json.contains("{\"exit\":\"" + exit + "\",\"verdict\":"), exit + " in " + json);
        }
        assertTrue(json.contains("\"verdict\":\"LEAKS\",\"code\":\"leaks\""), json);
    }

    /** The sandbox rows judge what the probe measured; a sandbox that left sys_admin to root is no sandbox. */
    @Test
    void capabilitiesAndWhatTheyReachAreMeasured() {
        Map<String, String> f = hostFacts();
        f.put("root_ro", "1");
        f.put("cap_eff", "000001fffeffffff");
        f.put("mount_ok", "1");
        f.put("sibling_visible", "0");
        f.put("sibling_stdin", "0");
        f.put("jvm_visible", "1");
        f.put("jvm_environ", "1");
        f.put("survivors", "0");
        f.put("state_w", "/op/.airlock/approvals.list");
        DoctorReport r = Doctor.judge("local", HOST, plan(), "off", "bwrap: read-only /", f);
        for (String exit : new String[] {"capabilities", "mounts", "processes", "JVM environment", "Airlock's state"}) {
            assertEquals(Verdict.LEAKS, r.row(exit).orElseThrow().verdict(), exit);
        }
        assertEquals(Verdict.CONTAINED_ENFORCED, r.row("other stdin").orElseThrow().verdict());
        assertEquals(Verdict.CONTAINED_ENFORCED, r.row("setsid job").orElseThrow().verdict());
        f.put("cap_eff", "00000000000000cb"); // chown, dac_override, fowner, fsetid (+setgid/setuid): Docker's hardened set
        assertEquals(Verdict.CONTAINED_BY_ENVIRONMENT, Doctor.judge("local", HOST, plan(), "off", "none", f)
                .row("capabilities").orElseThrow().verdict());
        f.put("cap_eff", "0000000000000000");
        assertEquals(Verdict.CONTAINED_ENFORCED, Doctor.judge("local", HOST, plan(), "off", "none", f)
                .row("capabilities").orElseThrow().verdict());
    }

    /** Listeners in a shared network leak whatever the mounts say, and the advice names the backend's own setting. */
    @Test
    void listenersInASharedNetworkLeakWithAdviceForThatBackend() {
        Map<String, String> f = hostFacts();
        f.put("root_ro", "1");
        f.put("run_fs", "tmpfs");
        f.put("abstract_listeners", "2");
        f.put("tcp_listeners", "1");
        DoctorReport local = Doctor.judge("local", HOST, plan(), "on (auto: test)", "bwrap", f);
        DoctorReport docker = Doctor.judge("docker", HOST, plan(), "on (auto: test)", "container", f);
        assertEquals(Verdict.LEAKS, local.row("sockets").orElseThrow().verdict());
        assertEquals(Verdict.LEAKS, docker.row("sockets").orElseThrow().verdict());
        String l = local.row("sockets").orElseThrow().evidence();
        String d = docker.row("sockets").orElseThrow().evidence();
        assertTrue(l.contains("2 listening abstract UNIX sockets and 1 listening TCP ports") && l.contains("airlock.network=off"), l);
        assertTrue(d.contains("airlock.docker.network") && !d.contains("airlock.local"), d);
        f.put("abstract_listeners", "0");
        f.put("tcp_listeners", "0");
        assertEquals(Verdict.CONTAINED_ENFORCED, Doctor.judge("docker", HOST, plan(), "on", "container", f).row("sockets").orElseThrow().verdict());
    }
    @Test
    void aWritableGitConfigOrHooksLeakAndReadOnlyOnesAreEnforced() {
        Map<String, String> f = hostFacts();
        assertEquals(Verdict.NOT_APPLICABLE, Doctor.judge("local", HOST, plan(), "on", "none", f).row("git metadata").orElseThrow().verdict());
        f.put("git_dir", "/work/p/.git");
        f.put("git_config_ro", "1");
        f.put("git_hooks_ro", "0");
        DoctorReport hooks = Doctor.judge("local", HOST, plan(), "on", "none", f);
        assertEquals(Verdict.LEAKS, hooks.row("git metadata").orElseThrow().verdict());
        assertTrue(hooks.row("git metadata").orElseThrow().evidence().contains("/work/p/.git/config"));
        f.put("git_hooks_ro", "1");
        assertEquals(Verdict.CONTAINED_ENFORCED, Doctor.judge("local", HOST, plan(), "on", "none", f).row("git metadata")
                .orElseThrow().verdict());
        f.put("git_config_ro", "0");
        assertEquals(Verdict.LEAKS, Doctor.judge("local", HOST, plan(), "on", "none", f).row("git metadata").orElseThrow().verdict());
    }

    @Test
    void aProcessWithAnotherRootThatACommandCanOpenLeaks() {
        Map<String, String> f = hostFacts();
        assertEquals(Verdict.NOT_APPLICABLE, Doctor.judge("vercel", HOST, plan(), "on", "none", f).row("process roots")
                .orElseThrow().verdict());
        f.put("foreign_roots", "");
        assertEquals(Verdict.CONTAINED_ENFORCED, Doctor.judge("vercel", HOST, plan(), "on", "none", f).row("process roots")
                .orElseThrow().verdict());
        f.put("foreign_roots", "1 3 9 10 11 12");
        DoctorReport.Row row = Doctor.judge("vercel", HOST, plan(), "on", "none", f).row("process roots").orElseThrow();
        assertEquals(Verdict.LEAKS, row.verdict());
        assertTrue(row.evidence().contains("root of 6 process(es)") && row.evidence().contains("PID 1, 3, 9, 10, 11, ..."),
                row.evidence());
    }
}
