package dev.airlock.modal;

import dev.airlock.Capabilities;
import dev.airlock.Environment;
import dev.airlock.PayloadStrategy;
import dev.airlock.PortSupport;
import dev.airlock.StdinMode;
import dev.airlock.shell.StdinScripts;
import dev.airlock.spi.Backend;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.Launch;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.PortForwarder;
import dev.airlock.spi.RemoteProcess;
import dev.airlock.spi.SnapshotLedger;
import dev.airlock.spi.StdinWriter;

import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The glue to the core's exec flow, kept thin: each command is a {@code TaskExecStart} of a small
 * wrapper ({@code sh -c WRAPPER airlock WRAPPER SHELL SCRIPT UNSET}) that makes the shell lead its
 * own process group and then execs the core's script, whose launcher record (the one protocol,
 * parsed by the core) names that group; the environment travels in the request's env map (never
 * argv). Stdin is PAYLOAD with {@link PayloadStrategy#STREAMED}: the core hands it to
 * {@link #stdinWriter()} in 1 MiB chunks by offset, sent as {@code TaskExecStdinWrite} (a chunk
 * resent at the acknowledged offset on retry), then an explicit EOF; never staged, no size cap.
 * Modal has no per-exec kill, so the core's process-group kill applies; {@code airlock.cancel=sandbox}
 * terminates the sandbox through {@link #stopSandbox}.
 */
public final class ModalBackend implements Backend {
    /**
     * Re-runs itself under setsid when not a group leader (an exec may start inside someone
     * else's group, as the emulator's do under its isolation; setsid does not fork then, so the pid
     * and the exit status stay the command's), unsets what the core asks, then execs the shell,
     * which keeps the pid: the launcher record's {@code $$} is the group the core's kill signals.
     */
    static final String WRAPPER = String.join("\n",
            "g=; read -r _ _ _ _ g _ < /proc/$$/stat 2>/dev/null",
            "if [ \"$g\" != \"$$\" ] && command -v setsid >/dev/null 2>&1; then exec setsid sh -c \"$1\" \"$0\" \"$@\"; fi",
            "for v in $4; do unset \"$v\"; done",
            "exec \"$2\" -c \"$3\"",
            "");

    private final String id = "modal-" + StdinScripts.randomToken().substring(0, 12);
    private final ModalClient client;
    private final ModalSandbox sandbox;
    /** Where each snapshot taken is recorded, for gc (Modal's images carry no tag to find them by). */
    private final SnapshotLedger ledger;
    private final Capabilities capabilities;
    /** Reads through the image's file tool, once the core is bound ({@link #bind}). */
    private volatile ModalFiles files;

    private ModalBackend(ModalClient client, ModalSandbox sandbox, SnapshotLedger ledger) {
        this.client = client;
        this.sandbox = sandbox;
        this.ledger = ledger;
        this.capabilities = Capabilities.builder().stdinMode(StdinMode.PAYLOAD).payloadStrategy(PayloadStrategy.STREAMED).build()
                .withNativeEnv(true).withNetworkModes(ModalSettings.NETWORK_MODES).withAttachable(true).withDisposable(!sandbox.attached())
                .withArgvLimit(60 * 1024)
                // Tunnels are declared in the sandbox definition at create (airlock.ports), read back from SandboxGetTunnels.
                .withPorts(PortSupport.DECLARED)
                .withSnapshots(true);
    }

    static Environment open(OpenContext context, ModalClient client, SnapshotLedger ledger) {
        ModalSandbox sb;
        try {
            sb = client.settings.sandboxId().isPresent() ? ModalSandbox.attach(client, client.settings.sandboxId().get())
                    : ModalSandbox.create(client, false);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
        ModalBackend backend;
        try {
            if (client.settings.snapshot().isPresent()) {
                sb.run(ModalSnapshots.sweepScript(context.settings().get("airlock.private-dir.base").orElse("${TMPDIR:-/tmp}")),
                        "remove the private dirs the snapshot holds");
            }
            backend = new ModalBackend(client, sb, ledger);
        } catch (RuntimeException e) {
            sb.close();
            client.close();
            throw e;
        }
        return context.open(backend);
    }

    /** The backend of {@code env}, a modal environment (for tests). */
    static ModalBackend of(Environment env) {
        return OpenContext.backendOf(env, ModalBackend.class)
                .orElseThrow(() -> new IllegalArgumentException(env.name() + " is not a modal environment"));
    }

    @Override
    public String name() {
        return "modal";
    }

    @Override
    public String id() {
        return id;
    }

    /** The Modal sandbox id commands run in. */
    public String sandboxId() {
        return sandbox.id();
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    @Override
    public RemoteProcess launch(Launch launch, Deadline deadline) throws IOException {
        List<String> argv = List.of("sh", "-c", WRAPPER, "airlock", WRAPPER, launch.shell(), launch.script(),
                String.join(" ", launch.unset()));
        return sandbox.exec(argv, launch.env());
    }

    /** Sends each chunk the core hands over as a {@code TaskExecStdinWrite} at its offset, and the end as an empty {@code eof} one. */
    @Override
    public Optional<StdinWriter> stdinWriter() {
        return Optional.of(STDIN);
    }

    private static final StdinWriter STDIN = new StdinWriter() {
        @Override
        public void write(RemoteProcess process, long offset, byte[] data, int length, Deadline deadline) throws IOException {
            ((ModalProcess) process).writeStdin(offset, data, length, false, deadline);
        }

        @Override
        public void end(RemoteProcess process, long length, Deadline deadline) throws IOException {
            ((ModalProcess) process).writeStdin(length, new byte[0], 0, true, deadline);
        }
    };

    /**
     * A filesystem snapshot ({@code TaskSnapshotFilesystem}), whose image id opens with
     * {@code airlock.modal.snapshot=ID}. Modal saves the whole filesystem, {@code privateDir} with
     * it: a sandbox made from the snapshot removes it before its own environment starts. Recorded
     * in the ledger with this sandbox as its source, so {@code gc} can delete it once unused.
     */
    @Override
    public String snapshot(String privateDir, Deadline deadline) throws IOException {
        String id = ModalSnapshots.take(client, sandbox.id(), deadline);
        ModalSnapshotGc.record(ledger, client.settings, id, sandbox.id());
        return id;
    }

    /**
     * A port's tunnel, declared when the sandbox was created (by this environment's
     * {@code airlock.ports}, or by {@code airlock up --port}); any other port is one line saying so.
     */
    @Override
    public Optional<PortForwarder> portForwarder() {
        return Optional.of((port, deadline) -> ModalTunnels.open(client, sandbox.id(), sandbox.v2(), port, deadline));
    }

    @Override
    public void bind(dev.airlock.spi.CoreAccess core) {
        this.files = new ModalFiles(sandbox, core);
    }

    /** Reads as the SDKs' {@code filesystem.readBytes} does, the rest through the core's scripts ({@link ModalFiles}). */
    @Override
    public Optional<dev.airlock.RemoteFiles> files() {
        return Optional.ofNullable(files);
    }

    /**
     * A sandbox of this environment's own is terminated here, which removes the private dir with
     * everything else in it: the {@code rm -rf} exec the core would run first is a round trip for
     * a directory about to go. True only once the terminate was answered. An attached sandbox,
     * which outlives this environment, keeps the core's {@code rm -rf}; so does a terminate that
     * failed (sent once, as before: {@link #stopSandbox} does not send it again, and the exec is
     * then refused at once, as the sandbox may be gone).
     */
    @Override
    public boolean removePrivateDir(String dir, Deadline deadline) {
        if (sandbox.attached()) {
            return false;
        }
        sandbox.close();
        return true;
    }

    /** The sandbox never sees the JVM's environment, so there is nothing of it to strip. */
    @Override
    public Set<String> childUnset(Set<String> proposed) {
        return Set.of();
    }

    /** One second a kill step: a group read or a signal here is a container exec over gRPC, across the internet. */
    @Override
    public java.time.Duration killStepCost() {
        return java.time.Duration.ofSeconds(1);
    }

    /** Runs once (the core's stop-once latch): terminates the sandbox unless attached, then closes the channels. */
    @Override
    public void stopSandbox(Deadline deadline) {
        try {
            sandbox.close();
        } finally {
            client.close();
        }
    }
}
