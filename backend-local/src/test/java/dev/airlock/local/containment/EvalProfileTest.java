package dev.airlock.local.containment;

import dev.airlock.tck.Services;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.WriteOptions;
import dev.airlock.Payload;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The eval profile end to end on the local backend, with the real programs around it. */
class EvalProfileTest {
    private final Path runDir = Operator.newRunDir("eval");

    @AfterEach
    void removeRunDir() {
        Operator.deleteTree(runDir);
    }

    /** The eval profile; it runs under bubblewrap when that is installed, unless {@code more} says otherwise. */
    private Settings eval(String... more) {
        Settings s = Settings.of("airlock.container", "no", "airlock.profile", "eval", "airlock.run-dir", runDir.toString(),
                "airlock.local.workdir", "none");
        for (int i = 0; i < more.length; i += 2) {
            s = s.with(more[i], more[i + 1]);
        }
        return s;
    }

    private static ExecResult ok(Environment env, ExecRequest request) {
        ExecResult r = env.exec(request);
        assertEquals(0, r.exitCode(), () -> request.command() + " failed: " + r.stderr().text());
        return r;
    }

    /**
     * The seed articles' run: a script written under ~/.airlock, scheduled with crontab from stdin,
     * a user unit enabled, a temp dir made. Afterwards the operator's crontab, HOME and temp dir
     * are exactly as before, and the run's own view shows what it did.
     */
    @ParameterizedTest
    @ValueSource(strings = {"none", "bwrap"})
    void theSeedScenarioLeavesNothingOutsideTheRunDir(String isolation) throws Exception {
        Services.require(Operator.executable("/usr/bin/crontab"),
                "Debian's cron is not installed (apt-get install cron), so there is no real crontab to protect");
        if (isolation.equals("bwrap")) {
            Services.require(Operator.executable("/usr/bin/bwrap"), "bubblewrap is not installed (apt-get install bubblewrap)");
        }
        Path home = Operator.home();
        Path tmp = Operator.tmp();
        Operator.RealCrontab crontabBefore = Operator.RealCrontab.read();
        Map<String, String> homeBefore = Operator.snapshot(home);
        Map<String, String> tmpBefore = Operator.snapshot(tmp);
        String job = "0 3 * * * $HOME/.airlock/scripts/backup.sh\n";
        String made;
        String privateDir;
        try (Environment env = Environments.open(eval("airlock.local.isolation", isolation))) {
            privateDir = env.target().privateDir();
            assertTrue(privateDir.startsWith(runDir + "/tmp/"), privateDir);
            env.files().write("~/.airlock/scripts/backup.sh",
                    Payload.of("#!/bin/sh\ntar -czf \"$HOME/backup.tgz\" -C \"$HOME\" .\n".getBytes(StandardCharsets.UTF_8)),
                    WriteOptions.mode(0755));
            env.files().write("~/.config/systemd/user/backup.service", ("[Unit]\nDescription=Nightly backup\n"
                    + "[Service]\nExecStart=%h/.airlock/scripts/backup.sh\n[Install]\nWantedBy=default.target\n")
                    .getBytes(StandardCharsets.UTF_8));
            ok(env, ExecRequest.builder("crontab -").stdin(job.getBytes(StandardCharsets.UTF_8)).build());
            ExecResult enable = ok(env, ExecRequest.of("systemctl --user enable backup.service"));
            assertEquals("Created symlink " + runDir + "/home/.config/systemd/user/default.target.wants/backup.service → "
                    + runDir + "/home/.config/systemd/user/backup.service.\n", enable.stderr().text());
            made = ok(env, ExecRequest.of("mktemp -d")).stdout().text().trim();
            assertTrue(made.startsWith(runDir + "/tmp/tmp."), made);

            assertEquals(job, ok(env, ExecRequest.of("crontab -l")).stdout().text());
            assertEquals("enabled\n", ok(env, ExecRequest.of("systemctl --user is-enabled backup")).stdout().text());
            ExecResult at = ok(env, ExecRequest.builder("at now + 1 hour && atq").stdin("backup.sh\n".getBytes(StandardCharsets.UTF_8)).build());
            assertTrue(at.stdout().text().matches("1\\t.* a \\S+\\n"), at.stdout().text());
        }
        Operator.RealCrontab.read().assertSameAs(crontabBefore);
        assertEquals(homeBefore, Operator.snapshot(home), "the operator's HOME gained or lost entries");
        assertEquals(tmpBefore, Operator.snapshot(tmp), "the operator's TMPDIR gained or lost entries");
        String name = Path.of(made).getFileName().toString();
        assertFalse(Files.exists(Path.of("/tmp", name)), "mktemp went to the real /tmp");

        assertEquals(job, Files.readString(runDir.resolve("crontabs").resolve(
                Operator.run(List.of("id", "-un"), null).stdout().trim())));
        assertTrue(Files.isExecutable(runDir.resolve("home/.airlock/scripts/backup.sh")));
        assertTrue(Files.isSymbolicLink(runDir.resolve("home/.config/systemd/user/default.target.wants/backup.service")));
        assertTrue(Files.readString(runDir.resolve("systemd/calls.log")).contains("systemctl '--user' 'enable' 'backup.service'"));
        assertTrue(Files.isDirectory(Path.of(made)), "the run's temp dir stays in the run dir for inspection");
        assertFalse(Files.exists(Path.of(privateDir)), "the private dir is removed on close");
    }

    /**
     * The same run by a command that ignores its environment: the real crontab by full path (for
     * itself and another user), the passwd home by its real path, an interpreter writing there, the
     * shared temp dir. Under bubblewrap (the default) none of it lands; without it nothing could
     * hold, which doctor says (DoctorTest).
     */
    @Test
    void aHostileSeedRunLeavesNothingOutsideTheRunDirUnderTheDefaultSandbox() throws Exception {
        Services.require(Operator.executable("/usr/bin/crontab"),
                "Debian's cron is not installed (apt-get install cron), so there is no real crontab to protect");
        Services.require(Operator.executable("/usr/bin/bwrap"), "bubblewrap is not installed (apt-get install bubblewrap)");
        Path passwdHome = Path.of(System.getProperty("user.home"));
        String mark = ".airlock-hostile-" + System.nanoTime();
        Operator.RealCrontab crontabBefore = Operator.RealCrontab.read();
        Map<String, String> homeBefore = Operator.snapshot(Operator.home());
        String job = "0 3 * * * /bin/sh -c 'echo pwned'\n";
        try (Environment env = Environments.open(eval())) {
            String hostile = "pw=$(getent passwd $(id -u) | cut -d: -f6)\n"
                    + "printf '%s' \"$JOB\" | /usr/bin/crontab -\n"
                    + "printf '%s' \"$JOB\" | /usr/bin/crontab -u nobody -\n"
                    + "echo x > \"$pw/" + mark + "\"\n"
                    + "python3 -c 'import sys; open(sys.argv[1], \"w\").write(\"x\")' \"$pw/" + mark + ".py\" 2>/dev/null\n"
                    + "mkdir -p \"$pw/.ssh\" && echo key > \"$pw/.ssh/" + mark + "\"\n"
                    + "echo x > /tmp/" + mark + "\n"
                    + "exit 0\n";
            env.exec(ExecRequest.builder(hostile).env("JOB", job).build());
        }
        Operator.RealCrontab.read().assertSameAs(crontabBefore);
        String nobody = "/var/spool/cron/crontabs/nobody";
        assertFalse(Files.exists(Path.of(nobody)) && Files.readString(Path.of(nobody)).contains("pwned"), "nobody's crontab was written");
        for (Path p : List.of(passwdHome.resolve(mark), passwdHome.resolve(mark + ".py"), passwdHome.resolve(".ssh/" + mark),
                Path.of("/tmp", mark))) {
            assertFalse(Files.exists(p), p + " was written outside the run dir");
        }
        assertEquals(homeBefore, Operator.snapshot(Operator.home()), "the operator's HOME gained or lost entries");
    }

    @ParameterizedTest
    @ValueSource(strings = {"native", "staged"})
    void childrenLoseTheUserBusAndFindTheShimsFirst(String envMode) {
        String probe = "printf '%s|%s|%s|%s|%s' \"${DBUS_SESSION_BUS_ADDRESS-unset}\" \"${XDG_RUNTIME_DIR-unset}\" "
                + "\"$HOME\" \"$TMPDIR\" \"$(command -v crontab)\"";
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv("DBUS_SESSION_BUS_ADDRESS") != null,
                "the test JVM has no DBUS_SESSION_BUS_ADDRESS to remove; run through Maven");
        try (Environment plain = Environments.open(Settings.of("airlock.container", "no", "airlock.local.env-mode", envMode))) {
            String v = plain.exec(ExecRequest.of(probe)).stdout().text();
            assertTrue(v.startsWith(System.getenv("DBUS_SESSION_BUS_ADDRESS") + "|" + System.getenv("XDG_RUNTIME_DIR") + "|"),
                    "without the eval profile children inherit the bus: " + v);
        }
        try (Environment env = Environments.open(eval("airlock.local.env-mode", envMode))) {
            assertEquals("unset|unset|" + runDir + "/home|" + runDir + "/tmp|" + runDir + "/bin/crontab",
                    env.exec(ExecRequest.of(probe)).stdout().text());
            assertEquals(runDir + "/bin/crontab", env.exec(ExecRequest.builder("command -v crontab")
                    .env("PATH", "/usr/bin:/bin").build()).stdout().text().trim(), "the shims stay first on a caller's PATH");
        }
    }

    @Test
    void systemctlRefusesTheSystemManagerClearly() {
        try (Environment env = Environments.open(eval())) {
            for (String cmd : List.of("systemctl enable ssh", "systemctl --system restart cron", "systemctl --global enable x")) {
                ExecResult r = env.exec(ExecRequest.of(cmd));
                assertEquals(1, r.exitCode(), cmd);
                assertTrue(r.stderr().text().contains("only 'systemctl --user' is contained in this run"), r.stderr().text());
            }
            ExecResult missing = env.exec(ExecRequest.of("systemctl --user enable nosuch"));
            assertEquals(1, missing.exitCode());
            assertEquals("Failed to enable unit, unit nosuch.service does not exist.\n", missing.stderr().text());
            ok(env, ExecRequest.of("systemctl --user daemon-reload"));
            ExecResult units = ok(env, ExecRequest.of("systemctl --user list-units --no-legend"));
            assertEquals("", units.stdout().text());
        }
        assertTrue(Files.exists(runDir.resolve("systemd/calls.log")));
    }

    @Test
    void atJobsAreRecordedAndRemovable() throws Exception {
        try (Environment env = Environments.open(eval())) {
            ExecResult first = ok(env, ExecRequest.builder("at 03:00 tomorrow").stdin("echo one\n".getBytes(StandardCharsets.UTF_8)).build());
            assertTrue(first.stderr().text().startsWith("warning: commands will be executed using /bin/sh\njob 1 at "),
                    first.stderr().text());
            ok(env, ExecRequest.builder("batch").stdin("echo two\n".getBytes(StandardCharsets.UTF_8)).build());
            String q = ok(env, ExecRequest.of("atq")).stdout().text();
            assertTrue(q.matches("1\\t.* 03:00:00 .* a \\S+\\n2\\t.* b \\S+\\n"), q);
            assertTrue(ok(env, ExecRequest.of("at -c 1")).stdout().text().endsWith("echo one\n"));
            ok(env, ExecRequest.of("atrm 1"));
            ExecResult again = env.exec(ExecRequest.of("atrm 1"));
            assertEquals(1, again.exitCode());
            assertEquals("Cannot find jobid 1\n", again.stderr().text());
            ExecResult garbled = env.exec(ExecRequest.builder("at soonish").stdin("x\n".getBytes(StandardCharsets.UTF_8)).build());
            assertEquals(1, garbled.exitCode());
            assertTrue(garbled.stderr().text().endsWith("Garbled time\n"), garbled.stderr().text());
        }
        assertTrue(Files.exists(runDir.resolve("at/2.job")));
        assertFalse(Files.exists(runDir.resolve("at/1.job")));
    }

    /**
     * The operator's AIRLOCK_HOME set to the run dir's airlock/ (as the eval layout invites): a
     * command could plant {@code airlock.guard=off} in its airlock.properties or a bypass in its
     * approvals list. Airlock refuses to read either there, in one line, before anything runs.
     */
    @ParameterizedTest
    @ValueSource(strings = {"none", "bwrap"})
    void stateInsideTheRunDirIsRefused(String isolation) throws Exception {
        if (isolation.equals("bwrap")) {
            Services.require(Operator.executable("/usr/bin/bwrap"), "bubblewrap is not installed (apt-get install bubblewrap)");
        }
        Path state = runDir.resolve("airlock");
        Files.createDirectories(state);
        Files.writeString(state.resolve("airlock.properties"), "airlock.guard=off\nairlock.local.isolation=none\n");
        Map<String, String> operatorEnv = Map.of("AIRLOCK_HOME", state.toString(), "HOME", Operator.home().toString());
        Settings fromFile = Settings.builder().configFile(null).environment(operatorEnv)
                .values(Map.of("airlock.container", "no", "airlock.profile", "eval", "airlock.run-dir", runDir.toString(),
                        "airlock.local.workdir", "none", "airlock.local.isolation", isolation)).build();
        dev.airlock.ConfigurationException e = org.junit.jupiter.api.Assertions.assertThrows(
                dev.airlock.ConfigurationException.class, () -> Environments.open(fromFile).close());
        assertTrue(e.getMessage().startsWith("refusing the approvals list " + state + "/approvals.list: it is inside the eval run dir "),
                e.getMessage());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        // The approvals alone (airlock.home in the run dir), and a config file named with --config there.
        dev.airlock.ConfigurationException approvals = org.junit.jupiter.api.Assertions.assertThrows(
                dev.airlock.ConfigurationException.class,
                () -> Environments.open(eval("airlock.home", state.toString(), "airlock.local.isolation", isolation)).close());
        assertTrue(approvals.getMessage().contains("the approvals list"), approvals.getMessage());
        Settings named = Settings.builder().configFile(state.resolve("airlock.properties")).values(Map.of("airlock.container", "no",
                "airlock.profile", "eval", "airlock.run-dir", runDir.toString(), "airlock.local.workdir", "none",
                "airlock.local.isolation", isolation)).build();
        dev.airlock.ConfigurationException config = org.junit.jupiter.api.Assertions.assertThrows(
                dev.airlock.ConfigurationException.class, () -> Environments.open(named).close());
        assertTrue(config.getMessage().startsWith("refusing the config file " + state.resolve("airlock.properties")), config.getMessage());
    }
}
