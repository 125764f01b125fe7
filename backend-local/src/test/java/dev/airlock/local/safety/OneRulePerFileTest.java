package dev.airlock.local.safety;

import dev.airlock.ApprovalRequiredException;
import dev.airlock.DeniedException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.safety.ApprovalChannel.Decision;
import dev.airlock.local.BubblewrapRequirement;
import dev.airlock.safety.Safety;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The seed's contradiction, fixed: the file API and a shell command that write the same file meet
 * the same tier and the same gate, and get the same decision, through the real local backend.
 */
class OneRulePerFileTest {
    private static final String SEED_COMMAND = "printf 'Host work\\n' >> ~/.ssh/config";

    @TempDir
    Path airlockHome;
    @TempDir
    Path project;
    private SafetyFixture fx;

    @BeforeEach
    void setUp() {
        fx = new SafetyFixture(airlockHome);
    }

    private Path sshConfig() {
        return airlockHome.resolve("home/.ssh/config");
    }

    private static ExecResult exec(Environment env, String command) {
        return env.exec(ExecRequest.builder(command).build());
    }

    @ParameterizedTest(name = "answer {0}")
    @EnumSource(Decision.class)
    void writeFileAndTheSeedCommandGetTheSameDecision(Decision answer) throws Exception {
        SafetyFixture.ScriptedChannel ch = new SafetyFixture.ScriptedChannel(answer);
        try (Environment env = fx.open(ch)) {
            if (answer == Decision.DENY) {
                ApprovalRequiredException w = assertThrows(ApprovalRequiredException.class,
                        () -> env.files().write("~/.ssh/config", "Host a\n".getBytes(StandardCharsets.UTF_8)));
                ApprovalRequiredException x = assertThrows(ApprovalRequiredException.class, () -> exec(env, SEED_COMMAND));
                assertEquals(w.getMessage(), x.getMessage(), "one rule, one message, whichever route");
                assertFalse(w.getMessage().contains("\n"));
                assertFalse(Files.exists(sshConfig()));
                assertEquals(2, ch.asked.get());
                assertEquals(List.of("denied write " + sshConfig(), "denied exec " + sshConfig()), fx.eventLines());
                return;
            }
            env.files().write("~/.ssh/config", "Host a\n".getBytes(StandardCharsets.UTF_8));
            ExecResult r = exec(env, SEED_COMMAND);
            assertEquals(0, r.exitCode(), r.stderr().text());
            assertEquals("Host a\nHost work\n", SafetyFixture.read(sshConfig()));
            assertEquals(answer == Decision.ONCE ? 2 : 1, ch.asked.get());
            assertEquals(List.of("approved write " + sshConfig(), "approved exec " + sshConfig()), fx.eventLines());
            ch.requests.forEach(q -> assertEquals(sshConfig().toString(), q.path()));
            assertTrue(ch.requests.get(ch.requests.size() - 1).operation().startsWith(ch.asked.get() == 2 ? "exec: printf" : "write"));
        }
        if (answer == Decision.ALWAYS) {
            Path allow = airlockHome.resolve("approvals.list");
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(allow)));
            SafetyFixture.ScriptedChannel never = new SafetyFixture.ScriptedChannel(Decision.DENY);
            try (Environment env = fx.open(never)) {
                assertEquals(0, exec(env, SEED_COMMAND).exitCode());
                env.files().write("~/.ssh/config", "Host b\n".getBytes(StandardCharsets.UTF_8));
            }
            assertEquals(0, never.asked.get(), "always approvals persist across environments");
            assertEquals("Host b\n", SafetyFixture.read(sshConfig()));
        }
        if (answer == Decision.SESSION) {
            SafetyFixture.ScriptedChannel next = new SafetyFixture.ScriptedChannel(Decision.DENY);
            try (Environment env = fx.open(next)) {
                assertThrows(ApprovalRequiredException.class, () -> exec(env, SEED_COMMAND));
            }
            assertEquals(1, next.asked.get(), "a session approval ends with its environment");
        }
    }

    @Test
    void theCommandRouteFirstThenTheFileApiShareTheSession() throws Exception {
        SafetyFixture.ScriptedChannel ch = new SafetyFixture.ScriptedChannel(Decision.SESSION);
        try (Environment env = fx.open(ch)) {
            env.files().mkdirs("~/.ssh");
            assertEquals(0, exec(env, "cp /dev/null ~/.ssh/config").exitCode());
            env.files().write("~/.ssh/config", "Host c\n".getBytes(StandardCharsets.UTF_8));
            assertEquals(0, exec(env, "sed -i 's/c/d/' ~/.ssh/config").exitCode());
            assertEquals(0, exec(env, "echo 'Host e' | tee -a ~/.ssh/config >/dev/null").exitCode());
        }
        assertEquals(1, ch.asked.get());
        assertEquals("Host d\nHost e\n", SafetyFixture.read(sshConfig()));
    }

    @ParameterizedTest(name = "yolo={0}")
    @ValueSource(booleans = {false, true})
    void aPrivateKeyIsDeniedThroughBothRoutesYoloIncluded(boolean yolo) throws Exception {
        SafetyFixture.ScriptedChannel ch = new SafetyFixture.ScriptedChannel(Decision.ALWAYS);
        Path key = airlockHome.resolve("home/.ssh/id_rsa");
        try (Environment env = fx.open(ch, "airlock.yolo", String.valueOf(yolo))) {
            DeniedException w = assertThrows(DeniedException.class,
                    () -> env.files().write("~/.ssh/id_rsa", "KEY".getBytes(StandardCharsets.UTF_8)));
            assertFalse(w instanceof ApprovalRequiredException, "hard-deny is not an approval question");
            assertEquals("Write denied: '" + key + "' is a protected system/credential file.", w.getMessage());
            Path ran = project.resolve("ran");
            DeniedException x = assertThrows(DeniedException.class,
                    () -> exec(env, "touch " + ran + "; echo KEY > ~/.ssh/id_rsa"));
            assertEquals(w.getMessage(), x.getMessage());
            assertFalse(Files.exists(ran), "a denied command does not run at all");
            for (String spelling : List.of("cat /dev/null >| \"$HOME/.ssh/id_rsa\"", "bash -c 'tee ~/.ssh/id_rsa </dev/null'",
                    "cp /dev/null ~/.ssh/id_rsa", "X=~/.ssh; dd if=/dev/zero of=$X/id_rsa count=1")) {
                assertInstanceOf(DeniedException.class, assertThrows(DeniedException.class, () -> exec(env, spelling)));
            }
            assertThrows(DeniedException.class, () -> env.files().delete("~/.ssh"));
            assertThrows(DeniedException.class, () -> env.files().mkdirs("~/.aws/cli"));
        }
        assertFalse(Files.exists(key));
        assertEquals(0, ch.asked.get());
        assertTrue(fx.eventLines().stream().allMatch(l -> l.startsWith("denied")), fx.eventLines().toString());
    }

    @Test
    void aSymlinkToAKeyIsDeniedAndTheLinkEntryIsCheckedToo() throws Exception {
        SafetyFixture.ScriptedChannel ch = new SafetyFixture.ScriptedChannel(Decision.ALWAYS);
        Path home = airlockHome.resolve("home");
        try (Environment env = fx.open(ch)) {
            env.files().mkdirs("~/.ssh");
            ExecRequest links = ExecRequest.builder("ln -s \"$HOME/.ssh/id_rsa\" key && ln -s \"$HOME/.ssh\" sshdir")
                    .cwd(project.toString()).build();
            assertEquals(0, env.exec(links).exitCode());

            DeniedException w = assertThrows(DeniedException.class,
                    () -> env.files().write(project.resolve("key").toString(), "KEY".getBytes(StandardCharsets.UTF_8)));
            assertTrue(w.getMessage().contains("resolves to '" + home.resolve(".ssh/id_rsa") + "'"), w.getMessage());
            assertThrows(DeniedException.class, () -> env.exec(ExecRequest.builder("echo KEY > key").cwd(project.toString()).build()));
            assertThrows(DeniedException.class, () -> env.exec(ExecRequest.builder("echo KEY > sshdir/new_key").cwd(project.toString()).build()));
            assertThrows(DeniedException.class, () -> env.files().write(project.resolve("sshdir/anything").toString(), new byte[] {1}));
            assertThrows(DeniedException.class, () -> env.exec(ExecRequest.builder("cp /dev/null sshdir").cwd(project.toString()).build()));

            // The key path is itself a link to a harmless file: writing the link entry is still denied.
            Path harmless = project.resolve("harmless");
            Files.writeString(harmless, "x");
            Files.createSymbolicLink(home.resolve(".ssh/id_ed25519"), harmless);
            assertThrows(DeniedException.class, () -> env.files().write("~/.ssh/id_ed25519", new byte[] {1}));
            env.files().write(harmless.toString(), new byte[] {2});
        }
        assertFalse(Files.exists(home.resolve(".ssh/id_rsa")));
        assertFalse(Files.exists(home.resolve(".ssh/new_key")));
        // Only the links themselves were asked about (a later write through one would land in ~/.ssh);
        // every write through them was denied without asking.
        assertEquals(2, ch.asked.get());
    }

    /**
     * A directory a command made a link into ~/.ssh: delete, copyIn and mkdirs through it are
     * judged where they land, as a write through it is, and leave ~/.ssh as it was.
     */
    @Test
    void deleteCopyInAndMkdirsThroughALinkedDirectoryAreJudgedWhereTheyLand() throws Exception {
        SafetyFixture.ScriptedChannel ch = new SafetyFixture.ScriptedChannel(Decision.ALWAYS);
        Path ssh = Files.createDirectories(airlockHome.resolve("home/.ssh"));
        Files.writeString(ssh.resolve("authorized_keys"), "operator key\n");
        Path src = Files.createDirectories(project.resolve("src"));
        Files.writeString(src.resolve("authorized_keys"), "attacker key\n");
        Process p = new ProcessBuilder("tar", "-cf", project.resolve("keys.tar").toString(), "-C", src.toString(), "authorized_keys").start();
        assertEquals(0, p.waitFor());
        try (Environment env = fx.open(ch)) {
            Files.createSymbolicLink(project.resolve("sshdir"), ssh);
            assertThrows(DeniedException.class, () -> env.files().delete(project.resolve("sshdir/authorized_keys").toString()));
            assertThrows(DeniedException.class, () -> env.files().copyIn(project.resolve("sshdir").toString(),
                    Files.newInputStream(project.resolve("keys.tar"))));
            assertThrows(DeniedException.class, () -> env.files().mkdirs(project.resolve("sshdir/new/deeper").toString()));
        }
        assertEquals("operator key\n", Files.readString(ssh.resolve("authorized_keys")));
        assertFalse(Files.exists(ssh.resolve("new")));
        assertEquals(0, ch.asked.get());
    }

    @Test
    void withHomePinnedToTheProfileTheRealHomeIsStillGuarded() throws Exception {
        SafetyFixture.ScriptedChannel ch = new SafetyFixture.ScriptedChannel(Decision.DENY);
        try (Environment env = fx.open(ch)) {
            Path realHome = SafetyFixture.fakeRealHome(env.target().processHome());
            assertNotEquals(realHome.toString(), env.target().home());
            DeniedException w = assertThrows(DeniedException.class,
                    () -> env.files().write(realHome.resolve(".ssh/id_rsa").toString(), "KEY".getBytes(StandardCharsets.UTF_8)));
            assertEquals("Write denied: '" + realHome.resolve(".ssh/id_rsa") + "' is a protected system/credential file.", w.getMessage());
            assertThrows(DeniedException.class, () -> exec(env, "echo KEY > \"$AIRLOCK_REAL_HOME/.ssh/id_rsa\""));
            assertThrows(DeniedException.class, () -> exec(env, "echo KEY > " + realHome + "/.aws/credentials"));
            // The approval tier follows too: the real home's ssh config asks, and the answer here is no.
            assertThrows(ApprovalRequiredException.class, () -> exec(env, "cat /dev/null > " + realHome + "/.ssh/config"));
            assertEquals(1, ch.asked.get());
            // An outer Airlock's real home (AIRLOCK_REAL_HOME in this JVM's environment) is protected as well.
            String outer = System.getenv("AIRLOCK_REAL_HOME");
            assertTrue(outer != null && outer.endsWith("/test-real-home"), "surefire sets AIRLOCK_REAL_HOME");
            assertThrows(DeniedException.class, () -> env.files().write(outer + "/.netrc", new byte[] {1}));
            assertThrows(DeniedException.class, () -> exec(env, "echo x >> " + outer + "/.git-credentials"));
        }
        assertFalse(Files.exists(Path.of(System.getenv("HOME"), ".ssh")));
        assertFalse(Files.exists(Path.of(System.getenv("AIRLOCK_REAL_HOME"), ".netrc")));
    }

    @ParameterizedTest(name = "cron-mode={0}")
    @ValueSource(strings = {"deny", "allow", "default"})
    void cronContextFollowsTheCronMode(String mode) throws Exception {
        String[] settings = mode.equals("default") ? new String[] {"airlock.context", "cron"}
                : new String[] {"airlock.context", "cron", "airlock.approvals.cron-mode", mode};
        try (Environment env = fx.open(null, settings)) {
            if (mode.equals("allow")) {
                env.files().write("~/.ssh/config", "Host a\n".getBytes(StandardCharsets.UTF_8));
                assertEquals(0, exec(env, SEED_COMMAND).exitCode());
                assertEquals("Host a\nHost work\n", SafetyFixture.read(sshConfig()));
                assertThrows(DeniedException.class, () -> exec(env, "echo x > ~/.ssh/id_rsa"), "cron never unlocks hard-deny");
            } else {
                ApprovalRequiredException w = assertThrows(ApprovalRequiredException.class,
                        () -> env.files().write("~/.ssh/config", "Host a\n".getBytes(StandardCharsets.UTF_8)));
                assertTrue(w.getMessage().contains("cron run"), w.getMessage());
                ApprovalRequiredException x = assertThrows(ApprovalRequiredException.class, () -> exec(env, SEED_COMMAND));
                assertEquals(w.getMessage(), x.getMessage());
                assertFalse(Files.exists(sshConfig()));
            }
        }
    }

    @Test
    void withoutAChannelApprovalFailsClosed() throws Exception {
        try (Environment env = fx.open(null)) {
            ApprovalRequiredException w = assertThrows(ApprovalRequiredException.class,
                    () -> env.files().write("~/.ssh/config", "Host a\n".getBytes(StandardCharsets.UTF_8)));
            ApprovalRequiredException x = assertThrows(ApprovalRequiredException.class, () -> exec(env, SEED_COMMAND));
            assertEquals(w.getMessage(), x.getMessage());
            assertEquals("Write denied: '" + sshConfig() + "' needs approval and no approval channel is available."
                    + " Do not retry it through the terminal, code execution or another tool unless the user explicitly agrees.",
                    x.getMessage());
        }
        assertFalse(Files.exists(sshConfig()));
    }

    /** A config file named with --config is Airlock's own state wherever it is: hard-denied on every route. */
    @Test
    void theConfigFileInUseIsHardDenied() throws Exception {
        Path config = Files.writeString(project.resolve("airlock-test.properties"), "airlock.container=no\n");
        dev.airlock.settings.Settings s = dev.airlock.settings.Settings.builder().configFile(config)
                .values(java.util.Map.of("airlock.home-mode", "profile", "airlock.home", airlockHome.toString())).build();
        try (Environment env = dev.airlock.Environments.open(s)) {
            DeniedException x = assertThrows(DeniedException.class, () -> exec(env, "printf 'airlock.guard=off\\n' >> " + config));
            assertTrue(x.getMessage().contains("protected"), x.getMessage());
            assertThrows(DeniedException.class, () -> env.files().write(config.toString(), "x".getBytes(StandardCharsets.UTF_8)));
        }
        assertEquals("airlock.container=no\n", Files.readString(config));
    }

    /** A place the guard cannot resolve that may be a protected file asks a human; with none there it is denied, and nothing is written. */
    @Test
    void anUnresolvablePathThatMayBeProtectedAsks() throws Exception {
        try (Environment env = fx.open(null)) {
            env.files().mkdirs("~/.ssh");
            for (String command : List.of("echo X > ${HOME:0:100}/.ssh/authorized_keys",
                    "printf -v d %s ~/.ssh; echo X > $d/authorized_keys", "echo ~/.ssh/authorized_keys | xargs touch")) {
                ApprovalRequiredException e = assertThrows(ApprovalRequiredException.class, () -> exec(env, command), command);
                assertTrue(e.getMessage().contains("needs approval"), e.getMessage());
            }
            assertEquals(0, exec(env, "d=$(mktemp -d) && echo x > $d/out && rm -r $d").exitCode(),
                    "an unresolvable place with nothing protected in sight runs");
            assertFalse(Files.exists(Path.of(env.target().home(), ".ssh/authorized_keys")));
        }
    }

    @Test
    void alwaysApprovalsAreScopedToTheirTarget() throws Exception {
        try (Environment env = fx.open(new SafetyFixture.ScriptedChannel(Decision.ALWAYS))) {
            assertEquals(0, exec(env, "mkdir -p ~/.ssh && " + SEED_COMMAND).exitCode());
        }
        Path allow = airlockHome.resolve("approvals.list");
        List<String> lines = Files.readAllLines(allow);
        String entry = lines.get(lines.size() - 1);
        assertTrue(entry.startsWith("local "), entry);
        // Move the approval to another host: this target no longer has it.
        String[] f = entry.split(" ");
        Files.write(allow, List.of(f[0] + " " + f[1].replaceAll("%40.*$", "%40elsewhere") + " " + f[2]));
        SafetyFixture.ScriptedChannel ch = new SafetyFixture.ScriptedChannel(Decision.DENY);
        try (Environment env = fx.open(ch)) {
            assertThrows(ApprovalRequiredException.class, () -> exec(env, SEED_COMMAND));
        }
        assertEquals(1, ch.asked.get());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(allow)));
        // The agent cannot approve itself by writing the allowlist.
        try (Environment env = fx.open(ch, "airlock.yolo", "true")) {
            assertThrows(DeniedException.class, () -> exec(env, "echo 'local x y' >> " + allow));
            assertThrows(DeniedException.class, () -> env.files().write(allow.toString(), new byte[] {1}));
            assertThrows(DeniedException.class, () -> env.files().write(airlockHome.resolve("airlock.properties").toString(),
                    "airlock.guard=off\n".getBytes(StandardCharsets.UTF_8)));
            assertEquals(Safety.targetId(env.target()), f[1].replace("%40", "@"));
        }
    }

    @Test
    void ordinaryCommandsRunUntouched() throws Exception {
        Path notes = project.resolve("notes.txt");
        Files.writeString(notes, "alpha\n");
        SafetyFixture.ScriptedChannel ch = new SafetyFixture.ScriptedChannel(Decision.DENY);
        try (Environment env = fx.open(ch)) {
            String script = String.join("\n",
                    "echo x > ./out.txt",
                    "sed -i 's/alpha/beta/' notes.txt",
                    "mkdir -p build && cp notes.txt build/ && mv build/notes.txt build/n.txt",
                    "cat notes.txt > \"$TMPDIR/copy\" && cat \"$TMPDIR/copy\" >> out.txt",
                    "ls -la ~ > /dev/null 2>&1",
                    "mkdir -p ~/.ssh && ls ~/.ssh > listing.txt",
                    "find . -name '*.tmp' -delete",
                    "echo 'rm -rf / and > ~/.ssh/id_rsa are only words here' > words.txt",
                    "printf '%s\\n' a b | sort -o sorted.txt",
                    "echo done | tee -a out.txt >/dev/null");
            ExecResult r = env.exec(ExecRequest.builder(script).cwd(project.toString()).build());
            assertEquals(0, r.exitCode(), r.stderr().text());
        }
        assertEquals("x\nbeta\ndone\n", Files.readString(project.resolve("out.txt")));
        assertEquals("beta\n", Files.readString(project.resolve("build/n.txt")));
        assertEquals("a\nb\n", Files.readString(project.resolve("sorted.txt")));
        assertEquals(0, ch.asked.get());
        assertTrue(fx.events.isEmpty(), fx.eventLines().toString());
    }

    @Test
    void hardlineCommandsAreDeniedBeforeTheyRun() throws Exception {
        try (Environment env = fx.open(new SafetyFixture.ScriptedChannel(Decision.ALWAYS), "airlock.yolo", "true")) {
            DeniedException e = assertThrows(DeniedException.class, () -> exec(env, "rm -rf /"));
            assertEquals("Command denied: rm -r of '/' is a hardline command; nothing unlocks it.", e.getMessage());
            assertFalse(e instanceof ApprovalRequiredException);
            assertThrows(DeniedException.class, () -> exec(env, "mkfs.ext4 /dev/airlock-does-not-exist"));
            assertThrows(DeniedException.class, () -> exec(env, "bash -c 'rm -fr --no-preserve-root /'"));
            assertEquals("denied", fx.events.get(0).type());
            assertEquals("hardline", fx.events.get(0).fields().get("tier"));
        }
    }

    @Test
    void theGuardSettingSwitchesTheCommandGuardOnly() throws Exception {
        try (Environment env = fx.open(null, "airlock.guard", "off")) {
            assertEquals("off", ((dev.airlock.containment.ContainedEnvironment) env).commandGuard().setting());
            assertFalse(((dev.airlock.containment.ContainedEnvironment) env).commandGuard().on());
            assertThrows(DeniedException.class, () -> env.files().write("~/.ssh/id_rsa", new byte[] {1}), "the file API keeps its tiers");
            // With the guard off a command reaches the (temporary) profile home: the boundary is bubblewrap or a container.
            assertEquals(0, exec(env, "mkdir -p ~/.ssh && echo x > ~/.ssh/id_rsa").exitCode());
        }
        try (Environment env = fx.open(null)) {
            assertTrue(((dev.airlock.containment.ContainedEnvironment) env).commandGuard().on());
            assertEquals("on (auto: the environment is not a disposable sandbox)",
                    ((dev.airlock.containment.ContainedEnvironment) env).commandGuard().describe());
        }
    }

    /**
     * Under bubblewrap the kernel keeps {@code ~/.ssh} read-only for commands, so an approval could
     * not make {@code ~/.ssh/config} writable for one: the guard says so before it asks, and the
     * file API, which writes from the host, keeps the same rule instead of writing what a command could not.
     */
    @Test
    void underBubblewrapTheSshConfigIsReadOnlyForEveryToolAndNobodyIsAsked() throws Exception {
        BubblewrapRequirement.require();
        SafetyFixture.ScriptedChannel ch = new SafetyFixture.ScriptedChannel(Decision.ALWAYS);
        try (Environment env = fx.open(ch, "airlock.local.isolation", "bwrap", "airlock.local.workdir", project.toString())) {
            DeniedException w = assertThrows(DeniedException.class,
                    () -> env.files().write("~/.ssh/config", "Host a\n".getBytes(StandardCharsets.UTF_8)));
            DeniedException x = assertThrows(DeniedException.class, () -> exec(env, SEED_COMMAND));
            assertFalse(w instanceof ApprovalRequiredException, w.getMessage());
            assertEquals(w.getMessage(), x.getMessage(), "one rule, one message, whichever route");
            assertTrue(w.getMessage().contains("read-only") && w.getMessage().contains("no approval can open it"), w.getMessage());
            assertEquals(0, ch.asked.get(), "asked for what the kernel refuses anyway");
            assertFalse(Files.exists(sshConfig()));
            // the guard stays out of the way of what the sandbox allows
            assertEquals(0, exec(env, "printf x > notes.txt").exitCode());
            assertEquals("x", Files.readString(project.resolve("notes.txt")));
        }
    }

    /**
     * Under bubblewrap a link in the sandbox's own {@code /tmp} (which the host's {@code /tmp} never
     * shows) that leads to {@code ~/.ssh} takes a write there, so the rule for {@code ~/.ssh/config}
     * holds for it: the guard reads the link in the sandbox's names (HostPathsTest shows it does so
     * in this JVM), and the write's own re-check at the physical place would catch it too.
     */
    @Test
    void underBubblewrapTheGuardFollowsALinkInTheSandboxsOwnTmp() throws Exception {
        BubblewrapRequirement.require();
        SafetyFixture.ScriptedChannel ch = new SafetyFixture.ScriptedChannel(Decision.ALWAYS);
        String link = "/tmp/airlock-guard-view-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        try (Environment env = fx.open(ch, "airlock.local.isolation", "bwrap", "airlock.local.workdir", project.toString())) {
            assertEquals(0, exec(env, "ln -s \"$HOME/.ssh\" " + link).exitCode());
            assertFalse(Files.exists(Path.of(link), java.nio.file.LinkOption.NOFOLLOW_LINKS), "the link reached the host's /tmp");
            DeniedException w = assertThrows(DeniedException.class,
                    () -> env.files().write(link + "/config", "Host a\n".getBytes(StandardCharsets.UTF_8)));
            assertTrue(w.getMessage().contains("read-only"), w.getMessage());
            assertFalse(Files.exists(sshConfig()));
        }
    }
}
