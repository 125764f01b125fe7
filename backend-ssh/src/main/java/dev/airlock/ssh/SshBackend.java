package dev.airlock.ssh;

import com.jcraft.jsch.JSch;
import com.jcraft.jsch.JSchException;
import dev.airlock.Capabilities;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.NetworkMode;
import dev.airlock.PortSupport;
import dev.airlock.Target;
import dev.airlock.containment.Containment;
import dev.airlock.containment.TargetProbe;
import dev.airlock.shell.Shell;
import dev.airlock.spi.Backend;
import dev.airlock.spi.ControlShell;
import dev.airlock.spi.CoreAccess;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.GroupState;
import dev.airlock.spi.Killer;
import dev.airlock.spi.Launch;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.PortForwarder;
import dev.airlock.spi.RawResult;
import dev.airlock.spi.RemoteProcess;
import dev.airlock.spi.ResourceLabels;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Commands on a remote host over SSH, one exec channel each (PIPE mode: stdin streams in and its
 * end is an SSH EOF). The target is a real host, so the core's probe, home mode, scratch TMPDIR,
 * staged env (never in the command text) and guard all apply.
 *
 * <p>Each command's shell is the process sshd started (session leader, so it leads its own process
 * group), which the core's launcher record reports before the command starts. A timeout or cancel is then the core's
 * checked {@code kill -TERM -PGID}, which reaches grandchildren too, sent through the control
 * shell while it lives, else in a second exec.
 */
public final class SshBackend implements Backend, Killer {
    private static final Logger LOG = LoggerFactory.getLogger(SshBackend.class);
    /** A single argument on Linux holds at most 128 KiB (MAX_ARG_STRLEN); the command text is one. */
    private static final int MAX_COMMAND_BYTES = 120 * 1024;

    private final SshSettings ssh;
    private final Connections connections;
    private final Capabilities capabilities;
    /**
     * A group read or signal through the control shell answers within a round trip; past this the
     * shell is taken for gone and each step is an exec of its own again.
     */
    private static final Duration CONTROL_ANSWER = Duration.ofSeconds(2);

    private final String nonce;
    private final String id;
    private volatile CoreAccess core;
    private volatile ControlShell control;
    private volatile String privateDir;
    private volatile ScheduledFuture<?> heartbeat;
    /** Guards the start of the control shell and the waiting channel (open's steps run them once). */
    private final Object startLock = new Object();
    private boolean controlStarted;
    /** The channel opened at open for the first launch (see {@link WarmChannel}); null once taken. */
    private WarmChannel warm;
    /**
     * Why the waiting channel, the environment's first, could not open (a refused login, an
     * unreachable host); thrown by the next launch, the core's own probe, instead of logging in
     * again: a wrong password is tried once per open, not once per step (the core's probe hook
     * answers nothing when it fails, and the core then runs its script).
     */
    private Exception firstFailure;

    private SshBackend(SshSettings ssh, Connections connections, String nonce) {
        this.id = "ssh-" + ssh.display() + "-" + nonce.substring(0, 8);
        this.ssh = ssh;
        this.connections = connections;
        this.nonce = nonce;
        // The core stages scripts longer than argvLimit (counting 3 bytes a character); escaping can
        // grow a byte 5x, so 24 KiB keeps the escaped text under Linux's 128 KiB per argument.
        this.capabilities = Capabilities.pipe().withArgvLimit(24 * 1024).withPorts(PortSupport.ANY);
    }

    /** A local forward over the pooled connection to the port on the host's loopback; ended at close. */
    @Override
    public Optional<PortForwarder> portForwarder() {
        return Optional.of(new PortForwarder() {
            @Override
            public URI open(int port, Deadline deadline) throws IOException {
                return URI.create("http://127.0.0.1:" + connections.forward(port) + "/");
            }

            @Override
            public void close(int port, URI uri) {
                connections.unforward(uri.getPort());
            }
        });
    }

    static Environment open(OpenContext context) {
        return open(context, SshSettings.from(context.settings()));
    }

    /** With settings already read (tests pass a home of their own for the default keys). */
    static Environment open(OpenContext context, SshSettings s) {
        // Only on: commands share the remote host's network; off is refused before anything is created.
        NetworkMode.require(context.settings(), "ssh", Capabilities.pipe().networkModes());
        JSch jsch = new JSch();
        try {
            jsch.setKnownHosts(s.knownHosts().toString());
        } catch (JSchException e) {
            throw new ConfigurationException("cannot read " + s.knownHosts() + " (" + SshSettings.KNOWN_HOSTS + "): "
                    + ConnectFailures.oneLine(e.getMessage()));
        }
        List<HostKeys.KnownHostsFile> global = new ArrayList<>();
        for (Path file : SshSettings.globalKnownHosts(context.settings())) {
            JSch reader = new JSch();
            try {
                reader.setKnownHosts(file.toString());
            } catch (JSchException e) {
                throw new ConfigurationException("cannot read " + file + " (" + SshSettings.GLOBAL_KNOWN_HOSTS + "): "
                        + ConnectFailures.oneLine(e.getMessage()));
            }
            global.add(new HostKeys.KnownHostsFile(file, reader.getHostKeyRepository()));
        }
        HostKeys hostKeys = new HostKeys(jsch.getHostKeyRepository(), s.knownHosts(), global, s.acceptNew());
        jsch.setHostKeyRepository(hostKeys);
        Identities.install(jsch, s);
        byte[] n = new byte[12];
        new SecureRandom().nextBytes(n);
        return context.open(new SshBackend(s, new Connections(s, jsch, hostKeys), HexFormat.of().formatHex(n)));
    }

    /** The backend of {@code env}, an ssh environment. */
    static SshBackend of(Environment env) {
        return OpenContext.backendOf(env, SshBackend.class)
                .orElseThrow(() -> new IllegalStateException("the ssh provider opened " + env.getClass().getName()));
    }

    @Override
    public String name() {
        return "ssh";
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public void bind(CoreAccess core) {
        this.core = core;
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    @Override
    public RemoteProcess launch(Launch launch, Deadline deadline) throws IOException {
        if (launch.script().indexOf('\0') >= 0) {
            throw new IOException("the command holds a NUL byte, which no shell can take");
        }
        byte[] command = commandText(launch.shell(), launch.script()).getBytes(StandardCharsets.UTF_8);
        if (command.length > MAX_COMMAND_BYTES) {
            throw new IOException("the command text is " + command.length + " bytes, more than one SSH exec can carry ("
                    + MAX_COMMAND_BYTES + ")");
        }
        rethrowFirstFailure();
        WarmChannel warm = takeWarm();
        if (warm != null) {
            SshProcess p = warm.start(launch.shell(), launch.script());
            if (p != null) {
                return p;
            }
        }
        return connections.exec(command);
    }

    private void rethrowFirstFailure() throws IOException {
        Exception f;
        synchronized (startLock) {
            f = firstFailure;
            firstFailure = null;
        }
        if (f instanceof IOException io) {
            throw io;
        }
        if (f != null) {
            throw (RuntimeException) f;
        }
    }

    private WarmChannel takeWarm() {
        synchronized (startLock) {
            WarmChannel w = warm;
            warm = null;
            return w;
        }
    }

    /**
     * The text the login shell runs: {@code exec sh -c 'WRAPPER' sh SHELL 'SCRIPT'}, which every
     * login shell (sh, bash, zsh, fish, tcsh, csh) parses the same way, because the two quoted
     * words hold no character any of them treats specially inside single quotes ({@code '},
     * {@code \}, {@code !}, newline). The script travels as {@code \0ooo} octal escapes for those
     * and every byte outside printable ASCII, decoded by {@code printf %b} in {@code sh}.
     *
     * <p>Every step execs, so the command's shell keeps the pid sshd started and no wrapper of the
     * user's stays its parent (one could be killed, stopped or rewritten to report another status):
     * sshd's own exit-status is the command's. sshd makes that process a session leader, so its pid
     * is its group, which the core's launcher record (the script's own first output) reports; a
     * server that does not gets {@code exec setsid}, which does not fork for a non-leader.
     *
     * <p>{@code SHLVL} is made at least 1 first. bash sources {@code ~/.bashrc} when it thinks sshd
     * started it ({@code SSH_CLIENT} set and a shell level below 2), and a login bash's
     * {@code exec} lowers {@code SHLVL} to 0 for what it execs, so a bash command shell read the
     * user's startup files a second time: side effects and output of the user's own, and a whole
     * second login's time per exec (0.5 s with a {@code pyenv init} there).
     */
    static String commandText(String shell, String script) {
        return "exec sh -c '" + wrapper() + "' sh " + Shell.quote(shell) + " '" + octalEscaped(script) + "'";
    }

    /** The {@code sh -c} text of {@link #commandText}: {@code $1} the shell, {@code $2} the script as octal escapes. */
    static String wrapper() {
        return "[ \"${SHLVL:-0}\" -gt 0 ] 2>/dev/null || { SHLVL=1; export SHLVL; };"
                + " s=$(printf %b \"$2\"; echo x); s=${s%x};"
                + " g=; read -r _ _ _ _ g _ 2>/dev/null </proc/$$/stat;"
                + " [ \"$g\" = \"$$\" ] || { command -v setsid >/dev/null 2>&1 && exec setsid \"$1\" -c \"$s\"; };"
                + " exec \"$1\" -c \"$s\"";
    }

    /** {@code script} with {@code ' \ !}, controls and non-ASCII as {@code printf %b} escapes. */
    static String octalEscaped(String script) {
        byte[] bytes = script.getBytes(StandardCharsets.UTF_8);
        StringBuilder sb = new StringBuilder(bytes.length + bytes.length / 8);
        for (byte b : bytes) {
            int c = b & 0xff;
            if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\' || c == '!') {
                sb.append("\\0").append((char) ('0' + (c >> 6))).append((char) ('0' + ((c >> 3) & 7)))
                        .append((char) ('0' + (c & 7)));
            } else {
                sb.append((char) c);
            }
        }
        return sb.toString();
    }

    @Override
    public Optional<Killer> killer() {
        return Optional.of(this);
    }

    @Override
    public void kill(RemoteProcess process, OptionalLong group, boolean force, Deadline deadline) throws IOException {
        if (group.isPresent()) {
            core.shellKiller().kill(process, group, force, deadline); // through the control shell while it lives
        } else if (process instanceof SshProcess p) {
            // No group id (the launcher record never came): the channel's signal reaches the shell at least.
            p.signal(force ? "KILL" : "TERM");
        }
    }

    @Override
    public GroupState groupState(long pgid, Deadline deadline) throws IOException {
        return core.shellKiller().groupState(pgid, deadline);
    }

    @Override
    public Optional<ControlShell> controlShell() {
        return Optional.ofNullable(control);
    }


    /**
     * Labels the private dir and starts its heartbeat, so {@code airlock gc} can tell this
     * environment's leftovers from a live one's if this JVM dies before closing it (see {@link SshLeftovers});
     * then starts the control shell.
     */
    @Override
    public void onTargetReady(Target target, Containment containment) {
        privateDir = target.privateDir();
        String mark = SshLeftovers.markScript(privateDir, ResourceLabels.now(false), id);
        if (!said("ok", throughControl(mark + "echo ok\n", ssh.connectTimeout()))) {
            try {
                RawResult r = core.run(mark, null);
                if (r.exit() != 0) {
                    LOG.warn("could not label the private dir {} on {} for gc: {}", privateDir, ssh.display(), r.stderrLine());
                }
            } catch (IOException e) {
                LOG.warn("could not label the private dir {} on {} for gc: {}", privateDir, ssh.display(), e.getMessage());
            }
        }
        long every = SshLeftovers.HEARTBEAT.toMillis();
        heartbeat = SshLeftovers.BEATS.scheduleWithFixedDelay(this::beat, every, every, TimeUnit.MILLISECONDS);
        startControl(); // when the probe did not already
    }

    /**
     * Starts the control shell and the waiting channel, once: one sh kept running on the host for
     * open's steps (probe, profile home, labels), the kill's steps, the staged files and the
     * private dir's removal. Every new exec goes through the login shell, which reads the user's
     * startup files each time: an {@code exec true} from the CLI was six logins (probe, home,
     * labels, control shell, command, removal), so a 3 s {@code ~/.bashrc} cost 22 s. Now it is two,
     * started together: this shell and the {@link WarmChannel} the first command takes.
     */
    private ControlShell startControl() {
        synchronized (startLock) {
            if (!controlStarted) {
                controlStarted = true;
                // Opened first, so its login runs while the control shell's does (opening a channel does not wait for it).
                try {
                    warm = WarmChannel.open(connections);
                } catch (IOException | RuntimeException e) {
                    LOG.debug("no waiting channel on {}: {}", ssh.display(), e.getMessage());
                    firstFailure = e;
                    return null; // no second login for the control shell: the core's probe reports this
                }
                control = ControlShell.tryStart(loop -> connections.exec(commandText("sh", loop).getBytes(StandardCharsets.UTF_8)),
                        "ssh-" + nonce.substring(0, 8), CONTROL_ANSWER, ssh.connectTimeout()).orElse(null);
            }
            return control;
        }
    }

    /** {@code script}'s stdout through the control shell (started if need be); null when it cannot run there. */
    private String throughControl(String script) {
        return throughControl(script, CONTROL_ANSWER);
    }

    /**
     * {@code script}'s stdout through the control shell, waiting up to {@code bound} for it: the
     * open's steps (probe, home, labels) wait within the open's deadline rather than the kill
     * steps' 2 s. A step past that bound falls back to a login of its own, and a probe that had
     * already made its private dir then made a second one: the first stayed behind, unlabelled,
     * where gc never removes anything.
     */
    private String throughControl(String script, Duration bound) {
        ControlShell c = startControl();
        if (c == null || c.dead()) {
            return null;
        }
        try {
            return c.run(script, bound);
        } catch (IOException e) {
            LOG.debug("through the control shell on {} failed: {}", ssh.display(), e.getMessage());
            return null;
        }
    }

    /**
     * The probe through the control shell, so it costs no login of its own. Its records come back
     * as text: an answer holding a byte that is not UTF-8 (a value the text would change), a
     * status other than 0, or no control shell gives empty, and the core runs the script itself.
     */
    @Override
    public Optional<byte[]> probe(String privateDirBase, Set<String> unset, Deadline deadline) {
        if (!unset.isEmpty()) {
            return Optional.empty();
        }
        String script = TargetProbe.script(privateDirBase, !privateDirBase.contains("$"));
        ControlShell c = startControl();
        if (c == null || c.dead()) {
            return Optional.empty();
        }
        try {
            // A whole answer of a script that exited 0, within the open's deadline (see throughControl).
            return c.runWhole(script, deadline.remaining()).filter(a -> a.indexOf('\uFFFD') < 0)
                    .map(a -> a.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            LOG.debug("the probe through the control shell on {} failed: {}", ssh.display(), e.getMessage());
            return Optional.empty();
        }
    }

    /** Whether a control shell's answer is the one line {@code word} (its newline included, as the shell printed it). */
    private static boolean said(String word, String answer) {
        return (word + "\n").equals(answer);
    }

    /** The profile home through the control shell: no login of its own. */
    @Override
    public boolean makeHome(String home, Deadline deadline) {
        return said("ok", throughControl("umask 077\nmkdir -p -- " + Shell.quotePath(home) + " && echo ok\n", deadline.remaining()));
    }

    /** The private dir's removal at close through the control shell: no login of its own. */
    @Override
    public boolean removePrivateDir(String dir, Deadline deadline) {
        String q = Shell.quotePath(dir);
        ControlShell c = control;
        if (c == null || c.dead()) {
            return false; // never started for this: the core's rm -rf runs
        }
        return said("gone", throughControl("rm -rf -- " + q + "\n[ -e " + q + " ] || [ -L " + q + " ] || echo gone\n"));
    }

    private void beat() {
        try {
            if (said("ok", throughControl(SshLeftovers.beatScript(privateDir) + "echo ok\n"))) {
                return;
            }
            core.run(SshLeftovers.beatScript(privateDir), null);
        } catch (IOException | RuntimeException e) {
            // A missed beat is harmless: gc waits for five; a lost connection is reported by the next exec.
            LOG.debug("heartbeat of {} on {} failed: {}", privateDir, ssh.display(), e.getMessage());
        }
    }

    /** The private dir on the host (set once the target is probed). */
    String privateDir() {
        return privateDir;
    }

    /** A raw {@code sh} script on the host, for gc. */
    RawResult raw(String script) throws IOException {
        return core.run(script, null);
    }

    @Override
    public void stopSandbox(Deadline deadline) {
        ScheduledFuture<?> beat = heartbeat;
        if (beat != null) {
            beat.cancel(false);
        }
        WarmChannel unused = takeWarm();
        if (unused != null) {
            unused.discard();
        }
        // The host is not ours to stop: closing the environment logs out.
        connections.close();
    }

    /** For tests: logins currently open. */
    int openConnections() {
        return connections.openConnections();
    }

    /** Where this environment logs in: {@code user@host:port}, as messages about a lost connection name it. */
    @Override
    public String destination() {
        return ssh.display();
    }
}
