package dev.airlock.local.containment;

import dev.airlock.tck.Services;

import dev.airlock.BackendUnavailableException;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.containment.Doctor;
import dev.airlock.containment.DoctorReport;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the environment cannot stop and bubblewrap does: writes by absolute path, the real crontab
 * called by its path, host sockets, credentials inside a writable home. The command guard is off
 * here, so the kernel alone has to stop each one; the real filesystem is compared before and after.
 */
class BubblewrapEscapeTest {
    private final String token = Long.toHexString(System.nanoTime());
    private Path realHome;
    private Map<String, String> homeBefore;
    private Map<String, String> etcBefore;
    private Map<String, String> operatorTmpBefore;

    @BeforeEach
    void snapshot() {
        Services.require(Operator.executable("/usr/bin/bwrap"), "bubblewrap is not installed (apt-get install bubblewrap)");
        realHome = Operator.home();
        Operator.deleteTree(realHome.resolve(".airlock")); // another class's profile home; each test here removes its own
        homeBefore = Operator.snapshot(realHome);
        etcBefore = topLevel(Path.of("/etc"));
        operatorTmpBefore = Operator.snapshot(Operator.tmp());
    }

    @AfterEach
    void nothingChangedOutside() {
        if (homeBefore == null) {
            return; // skipped in snapshot(): there is nothing to compare
        }
        Operator.deleteTree(realHome.resolve(".airlock"));
        assertEquals(homeBefore, Operator.snapshot(realHome), "the real home changed");
        assertEquals(etcBefore, topLevel(Path.of("/etc")), "/etc changed");
        Map<String, String> tmpAfter = Operator.snapshot(Operator.tmp());
        tmpAfter.keySet().removeIf(k -> k.startsWith("airlock-") && !operatorTmpBefore.containsKey(k));
        assertEquals(operatorTmpBefore, tmpAfter, "the operator's temp dir changed");
        assertFalse(Files.exists(Path.of("/tmp/airlock-escape-" + token)), "the real /tmp changed");
    }

    private static Map<String, String> topLevel(Path dir) {
        Map<String, String> out = new java.util.TreeMap<>();
        try (var s = Files.list(dir)) {
            s.forEach(p -> out.put(p.getFileName().toString(), Files.isDirectory(p) ? "dir" : "file"));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return out;
    }

    private static Settings isolated(String... more) {
        Settings s = Settings.of("airlock.container", "no", "airlock.local.isolation", "bwrap", "airlock.local.workdir", "none",
                "airlock.guard", "off");
        for (int i = 0; i < more.length; i += 2) {
            s = s.with(more[i], more[i + 1]);
        }
        return s;
    }

    private static ExecResult run(Environment env, String command) {
        return env.exec(ExecRequest.of(command));
    }

    private static void assertStopped(ExecResult r, String what) {
        assertNotEquals(0, r.exitCode(), what + " must fail inside; stdout: " + r.stdout().text());
    }

    /**
     * A socket path under the host's {@code /run}, where daemons put theirs: {@code /run} itself
     * for root, else this user's {@code /run/user/UID} (a desktop's systemd makes it). A user with
     * neither cannot put a socket there, so the case has nothing to show.
     */
    private Path hostRunSocket() throws IOException {
        String name = "airlock-escape-" + token + ".sock";
        if (Files.isWritable(Path.of("/run"))) {
            return Path.of("/run", name);
        }
        Path own = Path.of("/run/user", String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid")));
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(own) && Files.isWritable(own),
                "no directory under /run this user can put a socket in (/run is root's, and there is no " + own + ")");
        return own.resolve(name);
    }

    @Test
    void writesByAbsolutePathToTheRealHomeAndEtcFail() {
        try (Environment env = Environments.open(isolated())) {
            ExecResult home = run(env, "printf x > \"$AIRLOCK_REAL_HOME/escape-" + token + "\"");
            assertStopped(home, "a write under $AIRLOCK_REAL_HOME");
            assertTrue(home.stderr().text().contains("Read-only file system"), home.stderr().text());
            assertStopped(run(env, "printf x > /etc/airlock-escape-" + token), "a write to /etc");
            assertStopped(run(env, "mkdir " + realHome + "/.config-escape-" + token), "a mkdir in the real home");
            assertEquals(env.target().home() + "|" + realHome, run(env, "printf '%s|%s' \"$HOME\" \"$AIRLOCK_REAL_HOME\"").stdout().text());
            assertEquals(0, run(env, "printf ok > ~/allowed").exitCode(), "the children's own home stays writable");
        }
        assertFalse(Files.exists(realHome.resolve("escape-" + token)));
        assertFalse(Files.exists(Path.of("/etc/airlock-escape-" + token)));
    }

    @Test
    void theRealTempDirsAreTheSandboxsOwn() {
        Path operatorTmp = Operator.tmp();
        try (Environment env = Environments.open(isolated())) {
            ExecResult r = run(env, "printf x > /tmp/airlock-escape-" + token + " && printf y > " + operatorTmp
                    + "/airlock-escape-" + token + " && ls -A /tmp");
            assertEquals(0, r.exitCode(), r.stderr().text());
            assertEquals("airlock-escape-" + token + "\n", r.stdout().text(), "/tmp inside starts empty");
        }
        assertFalse(Files.exists(operatorTmp.resolve("airlock-escape-" + token)));
    }

    @Test
    void theRealCrontabByAbsolutePathFails() {
        Services.require(Operator.executable("/usr/bin/crontab"), "Debian's cron is not installed (apt-get install cron)");
        Operator.RealCrontab before = Operator.RealCrontab.read();
        try (Environment env = Environments.open(isolated())) {
            ExecResult r = env.exec(ExecRequest.builder("/usr/bin/crontab -")
                    .stdin(("* * * * * touch /tmp/escaped-" + token + "\n").getBytes(StandardCharsets.UTF_8)).build());
            assertStopped(r, "/usr/bin/crontab -");
        }
        Operator.RealCrontab.read().assertSameAs(before);
    }

    @Test
    void hostSocketsAreOutOfReach() throws Exception {
        Services.require(Operator.executable("/usr/bin/python3"), "python3 is needed to connect to a UNIX socket (apt-get install python3)");
        Path runSocket = hostRunSocket();
        Path runtime = Path.of(System.getenv().getOrDefault("XDG_RUNTIME_DIR", ""));
        org.junit.jupiter.api.Assumptions.assumeTrue(runtime.isAbsolute(), "the test JVM has no XDG_RUNTIME_DIR; run through Maven");
        Files.createDirectories(runtime);
        Files.setPosixFilePermissions(runtime, PosixFilePermissions.fromString("rwx------"));
        Path bus = runtime.resolve("bus");
        Files.deleteIfExists(bus);
        String connect = "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' ";
        String busConnect = "python3 -c 'import os,socket; s=socket.socket(socket.AF_UNIX);"
                + " s.connect(os.environ[\"DBUS_SESSION_BUS_ADDRESS\"].split(\"=\",1)[1])'";
        try (ServerSocketChannel docker = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
             ServerSocketChannel session = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            docker.bind(UnixDomainSocketAddress.of(runSocket));
            session.bind(UnixDomainSocketAddress.of(bus));
            try (Environment plain = Environments.open(Settings.of("airlock.container", "no", "airlock.guard", "off",
                    "airlock.local.isolation", "none"))) {
                assertEquals(0, run(plain, connect + runSocket).exitCode(), "control: without isolation the socket answers");
                assertEquals(0, run(plain, busConnect).exitCode(), "control: without isolation the user bus answers");
            }
            try (Environment env = Environments.open(isolated())) {
                assertStopped(run(env, connect + runSocket), "a connection to a socket in /run");
                assertStopped(run(env, busConnect), "a connection to the user bus");
                for (String real : List.of("/var/run/docker.sock", "/run/docker.sock")) {
                    if (Files.exists(Path.of(real))) {
                        assertStopped(run(env, "test -S " + real), "the Docker socket " + real + " is visible");
                        assertStopped(run(env, connect + real), "a request to the Docker socket " + real);
                    }
                }
            }
        } finally {
            Files.deleteIfExists(runSocket);
            Files.deleteIfExists(bus);
        }
    }

    @Test
    void credentialsInsideTheWritableHomeStayReadOnly() {
        Path home;
        try (Environment env = Environments.open(isolated())) {
            home = Path.of(env.target().home());
            assertStopped(run(env, "mkdir -p ~/.ssh && printf key > ~/.ssh/id_rsa"), "a write to ~/.ssh/id_rsa");
            assertStopped(run(env, "mkdir -p ~/.aws && printf k > ~/.aws/credentials"), "a write to ~/.aws/credentials");
            assertEquals(0, run(env, "mkdir -p ~/.config/app && printf ok > ~/.config/app/settings").exitCode(),
                    "the rest of the home stays writable");
        }
        assertFalse(Files.exists(home.resolve(".ssh/id_rsa")));
        assertFalse(Files.exists(home.resolve(".aws/credentials")));
    }

    /**
     * Issue 31, door 3: a credential file that does not exist yet is as protected as one that does.
     * Inside it reads as empty and takes no write; outside nothing but an empty placeholder remains.
     */
    @Test
    void credentialFilesThatDoNotExistYetCannotBeCreated() throws IOException {
        List<String> files = List.of(".pgpass", ".git-credentials", ".npmrc", ".pypirc", ".netrc");
        Path home;
        try (Environment env = Environments.open(isolated())) {
            home = Path.of(env.target().home());
            for (String f : files) {
                assertStopped(run(env, "printf 'secret' > ~/" + f), "creating ~/" + f);
                assertStopped(run(env, "rm -f ~/" + f + " && printf 'secret' > ~/" + f), "replacing ~/" + f);
                assertStopped(run(env, "mv ~/" + f + " ~/" + f + ".old"), "moving ~/" + f + " aside");
            }
            assertEquals(0, run(env, "printf ok > ~/.bash_history").exitCode(), "other files of the home stay writable");
        }
        for (String f : files) {
            Path p = home.resolve(f);
            assertTrue(!Files.exists(p) || Files.size(p) == 0, f + " holds what a command wrote");
        }
    }

    /**
     * Issue 31, door 2: a command in a git checkout must not leave code for the operator's git
     * (core.fsmonitor, hooks, attributes selecting filters), while git itself keeps working there.
     */
    @Test
    void theWorkdirsGitMetadataIsReadOnlyWhileGitWorks() throws Exception {
        Services.require(Operator.executable("/usr/bin/git"), "git is not installed (apt-get install git)");
        Path work = Files.createTempDirectory("airlock-git-work-");
        try {
            Path hooksPath = Files.createDirectories(work.resolve("tools/hooks"));
            assertEquals(0, new ProcessBuilder("git", "init", "-q", work.toString()).inheritIO().start().waitFor());
            assertEquals(0, new ProcessBuilder("git", "-C", work.toString(), "config", "core.hooksPath", "tools/hooks")
                    .inheritIO().start().waitFor());
            String configBefore = Files.readString(work.resolve(".git/config"));
            try (Environment env = Environments.open(isolated("airlock.local.workdir", work.toString()))) {
                assertStopped(run(env, "git config core.fsmonitor 'touch /tmp/ran'"), "git config core.fsmonitor");
                assertStopped(run(env, "printf '[core]\\n\\tfsmonitor = touch /tmp/ran\\n' >> .git/config"), "appending to .git/config");
                assertStopped(run(env, "printf '#!/bin/sh\\ntouch /tmp/ran\\n' > .git/hooks/pre-commit"), "a hook in .git/hooks");
                assertStopped(run(env, "printf 'x' > tools/hooks/post-checkout"), "a hook in core.hooksPath");
                assertStopped(run(env, "printf '* filter=x\\n' > .git/info/attributes"), ".git/info/attributes");
                assertStopped(run(env, "mv .git .git.old && mkdir .git"), "moving .git aside");
                assertStopped(run(env, "mv .git/hooks .git/hooks.old"), "moving .git/hooks aside");
                ExecResult git = run(env, "printf hi > file && git add file && git -c user.name=a -c user.email=a@b.c"
                        + " commit -qm one && git log --oneline | wc -l && printf edit >> README");
                assertEquals(0, git.exitCode(), git.stderr().text());
                assertEquals("1\n", git.stdout().text());
                DoctorReport.Row row = Doctor.report(env).row("git metadata").orElseThrow();
                assertEquals(DoctorReport.Verdict.CONTAINED_ENFORCED, row.verdict(), row.toString());
            }
            try (Environment plain = Environments.open(Settings.of("airlock.container", "no", "airlock.guard", "off",
                    "airlock.local.isolation", "none",
                    "airlock.local.workdir", work.toString()))) {
                DoctorReport.Row row = Doctor.report(plain).row("git metadata").orElseThrow();
                assertEquals(DoctorReport.Verdict.LEAKS, row.verdict(), "control, without isolation: " + row);
            }
            assertEquals(configBefore, Files.readString(work.resolve(".git/config")));
            assertFalse(Files.exists(work.resolve(".git/hooks/pre-commit")));
            assertFalse(Files.exists(hooksPath.resolve("post-checkout")));
            assertTrue(!Files.exists(work.resolve(".git/info/attributes")) || Files.size(work.resolve(".git/info/attributes")) == 0);
            assertTrue(Files.isRegularFile(work.resolve("README")), "the rest of the workdir is writable");
        } finally {
            Operator.deleteTree(work);
        }
    }

    /** A linked .git in a writable workdir could be swapped for one with hooks: refused at open, naming it. */
    @Test
    void aLinkedGitDirInTheWorkdirIsRefused() throws Exception {
        Path work = Files.createTempDirectory("airlock-git-link-");
        try {
            Files.createDirectories(work.resolve("real.git"));
            Files.createSymbolicLink(work.resolve(".git"), Path.of("real.git"));
            ConfigurationException e = assertThrows(ConfigurationException.class,
                    () -> Environments.open(isolated("airlock.local.workdir", work.toString())).close());
            assertTrue(e.getMessage().startsWith("refusing to open: " + work.toRealPath().resolve(".git") + " is a symbolic link"),
                    e.getMessage());
        } finally {
            Operator.deleteTree(work);
        }
    }

    /**
     * A read-only bind lands on a link's target, not the link: with the children's {@code ~/.ssh}
     * a symbolic link, a command could remove the link and write keys into a fresh directory at the
     * same path. Such a home is refused at open, naming the link.
     */
    @Test
    void aCredentialDirThatIsASymbolicLinkInAWritableHomeIsRefused() throws Exception {
        Path home;
        try (Environment env = Environments.open(isolated())) {
            home = Path.of(env.target().home());
        }
        Path ssh = home.resolve(".ssh");
        Path keys = home.resolve("keys-" + token);
        Files.createDirectories(keys);
        Operator.deleteTree(ssh);
        Files.createSymbolicLink(ssh, keys);
        try {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> Environments.open(isolated()).close());
            assertTrue(e.getMessage().startsWith("refusing to open: " + ssh + " is a symbolic link (to " + keys + ")"),
                    e.getMessage());
            assertFalse(Files.exists(keys.resolve("id_rsa")));
        } finally {
            if (Files.isSymbolicLink(ssh)) {
                Files.delete(ssh);
            }
            Operator.deleteTree(ssh);
            Operator.deleteTree(keys);
        }
    }

    /**
     * A command that holds capabilities inside can undo the sandbox: unmount the fresh /run to reach
     * the host's sockets, remount / writable, unmount the read-only bind over a credential dir, or
     * unmount the sandbox's /proc to see the host's (and the JVM's environment). Each must fail.
     */
    @Test
    void aCommandCannotUndoTheSandbox() throws Exception {
        Path runSocket = hostRunSocket();
        String jvm = Long.toString(ProcessHandle.current().pid());
        Path home;
        try (ServerSocketChannel host = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
             Environment env = Environments.open(isolated())) {
            host.bind(UnixDomainSocketAddress.of(runSocket));
            assertStopped(run(env, "umount /run && test -S " + runSocket), "umount /run, then the host's socket in /run");
            if (Files.exists(Path.of("/run/docker.sock"))) {
                assertStopped(run(env, "umount /run; umount /var/run; test -S /run/docker.sock"),
                        "umount /run, then the Docker socket");
            }
            assertStopped(run(env, "mount -o remount,rw / && printf x > /etc/airlock-escape-" + token),
                    "mount -o remount,rw /, then a write to /etc");
            assertStopped(run(env, "mount -o remount,bind,rw / && printf x > /etc/airlock-escape-" + token),
                    "mount -o remount,bind,rw /, then a write to /etc");
            home = Path.of(env.target().home());
            assertStopped(run(env, "umount ~/.ssh && { mkdir -p ~/.ssh; printf key > ~/.ssh/id_rsa; }"),
                    "umount ~/.ssh, then a key written");
            assertStopped(run(env, "umount -l ~/.ssh; mkdir -p ~/.ssh; printf key > ~/.ssh/id_ed25519"),
                    "umount -l ~/.ssh, then a key written");
            ExecResult proc = run(env, "umount -l /proc; cat /proc/" + jvm + "/environ");
            assertStopped(proc, "umount -l /proc, then the JVM's environment");
            assertFalse(proc.stdout().text().contains("PATH="), "the JVM's environment was read");
            assertStopped(run(env, "mount -t proc proc /mnt && test -r /mnt/" + jvm + "/environ"), "a fresh mount of proc");
            assertStopped(run(env, "exec 3</dev/tty"), "a controlling terminal (TIOCSTI would type into the caller's shell)");
            ExecResult caps = run(env, "grep -E '^Cap(Eff|Prm|Amb)' /proc/self/status");
            for (String line : caps.stdout().text().strip().split("\n")) {
                assertTrue(line.matches("Cap...:\\s+0+"), "a capability is held inside: " + caps.stdout().text());
            }
            assertTrue(Files.exists(runSocket), "the host's socket is untouched");
        } finally {
            Files.deleteIfExists(runSocket);
        }
        assertFalse(Files.exists(Path.of("/etc/airlock-escape-" + token)));
        assertFalse(Files.exists(home.resolve(".ssh/id_rsa")), "a key was planted in the home's .ssh");
        assertFalse(Files.exists(home.resolve(".ssh/id_ed25519")), "a key was planted in the home's .ssh");
    }

    /** The same attempts by an unprivileged user (nobody), whose sandbox lives in a user namespace. */
    @Test
    void anUnprivilegedCommandCannotUndoTheSandboxEither() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Operator.isRoot(), "switching to an unprivileged user needs root");
        Services.require(Operator.executable("/usr/bin/setpriv"), "setpriv is not installed (util-linux)");
        Path base = Operator.home().getParent().resolve("nobody-" + token);
        Path home = base.resolve("home");
        Path lib = base.resolve("lib");
        Files.createDirectories(home);
        Files.createDirectories(lib);
        try {
            List<String> cp = new java.util.ArrayList<>();
            for (Class<?> c : List.of(Environments.class, dev.airlock.local.LocalProvider.class, EscapeAttemptsMain.class,
                    org.slf4j.LoggerFactory.class)) {
                Path from = Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
                Path to = lib.resolve(cp.size() + "-" + from.getFileName());
                Operator.run(List.of("cp", "-r", "--", from.toString(), to.toString()), null);
                cp.add(to.toString());
            }
            Operator.run(List.of("chmod", "-R", "a+rX", base.toString()), null);
            for (Path up = base.getParent(); up != null; up = up.getParent()) {
                Operator.run(List.of("chmod", "o+x", up.toString()), null);
            }
            Operator.run(List.of("chown", "-R", "nobody", home.toString()), null);
            String java = ProcessHandle.current().info().command().orElse("java");
            Operator.Result r = Operator.run(List.of("/usr/bin/setpriv", "--reuid", "65534", "--regid", "65534",
                    "--clear-groups", "env", "-i", "HOME=" + home, "TMPDIR=" + home, "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                    java, "-cp", String.join(":", cp), EscapeAttemptsMain.class.getName(), token), null);
            assertEquals(0, r.exit(), r.stdout() + r.stderr());
            assertTrue(r.stdout().contains("home " + home), r.stdout());
            for (String name : EscapeAttemptsMain.attempts(token).keySet()) {
                assertTrue(r.stdout().matches("(?s).*\\n" + name + " [1-9][0-9]*\\n.*"), name + " worked as nobody: " + r.stdout());
            }
            assertFalse(Files.exists(home.resolve(".airlock/home/.ssh/id_rsa")));
        } finally {
            Operator.deleteTree(base);
        }
    }

    /**
     * The agent working in a checkout of Airlock itself: the launcher, the build files, the sources
     * the launcher rebuilds from and the built jar stay read-only, so no command plants code that
     * runs on the host at the next call; the rest of the working directory stays writable.
     */
    @Test
    void airlocksOwnProgramIsReadOnlyInsideTheWorkdir() throws Exception {
        Path checkout = Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();
        Services.require(Files.isRegularFile(checkout.resolve("airlock")), "the tests run from a checkout of Airlock");
        Path scratch = checkout.resolve(".airlock-escape-" + token);
        try (Environment env = Environments.open(isolated("airlock.local.workdir", checkout.toString()))) {
            for (String planted : List.of("printf x >> airlock", "printf x >> mvnw", "printf x >> pom.xml",
                    "printf x >> core/pom.xml", "printf x > core/src/main/java/Planted-" + token + ".java",
                    "printf x > cli/target/planted-" + token, "printf x > core/target/planted-" + token,
                    "printf x > .mvn/planted-" + token)) {
                assertStopped(run(env, planted), planted);
            }
            assertEquals(0, run(env, "printf ok > " + scratch.getFileName()).exitCode(), "the rest of the workdir is writable");
        } finally {
            Files.deleteIfExists(scratch);
        }
        assertFalse(Files.exists(checkout.resolve("core/src/main/java/Planted-" + token + ".java")));
    }

    /**
     * A read-only bind stops writes to its path, not a rename of a directory above it: renaming the
     * parent and making a fresh one would put writable sources (or a credential dir) at the same
     * path on the host. The directories above each read-only bind cannot be renamed.
     */
    @Test
    void aDirectoryAboveAReadOnlyBindCannotBeRenamedAway() throws Exception {
        Path checkout = Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();
        Services.require(Files.isRegularFile(checkout.resolve("airlock")), "the tests run from a checkout of Airlock");
        Path moved = checkout.resolve("core/src-moved-" + token);
        try (Environment env = Environments.open(isolated("airlock.local.workdir", checkout.toString()))) {
            assertStopped(run(env, "mv core/src core/src-moved-" + token), "mv core/src away (then a fresh core/src/main would be writable)");
            assertStopped(run(env, "mv core core-moved-" + token), "mv core away");
        } finally {
            if (Files.isDirectory(moved)) {
                Files.move(moved, checkout.resolve("core/src")); // put the checkout back before failing
            }
            if (Files.isDirectory(checkout.resolve("core-moved-" + token))) {
                Files.move(checkout.resolve("core-moved-" + token), checkout.resolve("core"));
            }
        }
        Path home;
        try (Environment env = Environments.open(isolated())) {
            home = Path.of(env.target().home());
            assertStopped(run(env, "mv ~/.config ~/.config-moved && mkdir -p ~/.config/gh && printf t > ~/.config/gh/hosts.yml"),
                    "mv ~/.config away, then a token planted in ~/.config/gh");
        }
        assertFalse(Files.exists(home.resolve(".config/gh/hosts.yml")), "a token was planted in the home's .config/gh");
    }

    /** A config file named inside a writable bind is refused: a command could rewrite it for the next run. */
    @Test
    void aConfigFileInsideAWritableBindIsRefused() throws Exception {
        Path work = Operator.newRunDir("workdir");
        Files.createDirectories(work);
        try {
            Path config = work.resolve("airlock.properties");
            Files.writeString(config, "airlock.guard=off\n");
            Settings s = Settings.builder().configFile(config).values(Map.of("airlock.container", "no",
                    "airlock.local.isolation", "bwrap", "airlock.local.workdir", work.toString())).build();
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> Environments.open(s).close());
            assertEquals("refusing the config file " + config + ": it is inside the working directory " + work
                    + ", which commands can write; keep Airlock's state outside it (point --config FILE elsewhere;"
                    + " the default is ~/.airlock)", e.getMessage());
        } finally {
            Operator.deleteTree(work);
        }
    }

    @Test
    void theNetworkCanBeCut() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            String connect = "exec 3<>/dev/tcp/127.0.0.1/" + server.getLocalPort();
            try (Environment on = Environments.open(isolated())) {
                assertEquals("bash", on.target().shell(), "this check uses bash's /dev/tcp");
                assertEquals(0, run(on, connect).exitCode(), "with the network on, loopback on the host answers");
            }
            try (Environment off = Environments.open(isolated("airlock.local.network", "off"))) {
                assertStopped(run(off, connect), "a connection with airlock.local.network=off");
            }
        }
    }

    @Test
    void writableBindsThatWouldExposeTooMuchAreRefused() {
        for (String[] bad : new String[][] {
                {"airlock.local.workdir", realHome.toString(), "the real home"},
                {"airlock.local.workdir", realHome.getParent().toString(), "the real home"},
                {"airlock.local.writable.all", "/", "/"},
                {"airlock.local.workdir", "/tmp", "the shared temp dir"}}) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> Environments.open(isolated(bad[0], bad[1])));
            assertTrue(e.getMessage().contains("refuses") && e.getMessage().contains(bad[2]), e.getMessage());
        }
        ConfigurationException real = assertThrows(ConfigurationException.class,
                () -> Environments.open(isolated("airlock.home-mode", "real")));
        assertTrue(real.getMessage().contains("airlock.home-mode=real"), real.getMessage());
        ConfigurationException missing = assertThrows(ConfigurationException.class,
                () -> Environments.open(isolated("airlock.local.writable.cache", "/nonexistent-" + token)));
        assertTrue(missing.getMessage().contains("airlock.local.writable.cache"), missing.getMessage());
    }

    @Test
    void aMissingOrBrokenBubblewrapIsAClearError() throws IOException {
        BackendUnavailableException missing = assertThrows(BackendUnavailableException.class,
                () -> Environments.open(isolated("airlock.local.bwrap", "/nonexistent/bwrap")));
        assertTrue(missing.getMessage().contains("apt-get install bubblewrap"), missing.getMessage());
        // A kernel without user namespaces cannot be made here; a bwrap that fails the same way stands in for it.
        Path fake = Files.createTempFile("airlock-fake-bwrap", "");
        try {
            Files.writeString(fake, "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because"
                    + " the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n");
            Files.setPosixFilePermissions(fake, PosixFilePermissions.fromString("rwx------"));
            BackendUnavailableException broken = assertThrows(BackendUnavailableException.class,
                    () -> Environments.open(isolated("airlock.local.bwrap", fake.toString())));
            assertTrue(broken.getMessage().contains("No permissions to creating new namespace")
                    && broken.getMessage().contains("user namespaces"), broken.getMessage());
        } finally {
            Files.deleteIfExists(fake);
        }
    }
}
