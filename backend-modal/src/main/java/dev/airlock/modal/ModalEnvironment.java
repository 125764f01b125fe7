package dev.airlock.modal;

import dev.airlock.Capabilities;
import dev.airlock.shell.StdinScripts;
import dev.airlock.spi.AbstractEnvironment;
import dev.airlock.spi.Launch;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.RemoteProcess;

import java.io.IOException;
import java.util.List;
import java.util.Set;

/**
 * The glue to the core's exec flow, kept thin: each command is a {@code TaskExecStart} of a small
 * wrapper ({@code sh -c WRAPPER airlock WRAPPER SHELL SCRIPT UNSET}) that reports its process group and
 * then execs the core's script; the environment travels in the request's env map (never argv);
 * stdin is the core's pipe, which {@link ModalProcess} streams in 1 MiB chunks by offset with an
 * explicit EOF (so PAYLOAD stdin is streamed, never staged, with no size cap). Modal has no
 * per-exec kill, so the core's process-group kill applies; {@code airlock.cancel=sandbox}
 * terminates the sandbox through {@link #stopSandbox}.
 */
public final class ModalEnvironment extends AbstractEnvironment {
    /**
     * Re-runs itself under setsid when not a group leader, unsets what the core asks, prints
     * {@code \001airlock-exec PID PGID} on stdout (stripped by the reader), then execs the command.
     */
    static final String WRAPPER = String.join("\n",
            "g=; read -r _ _ _ _ g _ < /proc/$$/stat 2>/dev/null",
            "if [ \"$g\" != \"$$\" ] && command -v setsid >/dev/null 2>&1; then exec setsid sh -c \"$1\" \"$0\" \"$@\"; fi",
            "for v in $4; do unset \"$v\"; done",
            "printf '\\001airlock-exec %s %s\\n' \"$$\" \"$g\"",
            "exec \"$2\" -c \"$3\"",
            "");

    private final ModalClient client;
    private final ModalSandbox sandbox;
    private final Capabilities capabilities;

    private ModalEnvironment(OpenContext context, ModalClient client, ModalSandbox sandbox) {
        super("modal", "modal-" + StdinScripts.randomToken().substring(0, 12), context);
        this.client = client;
        this.sandbox = sandbox;
        this.capabilities = Capabilities.pipe().withNativeEnv(true).withAttachable(true).withDisposable(!sandbox.attached())
                .withArgvLimit(60 * 1024);
    }

    static ModalEnvironment open(OpenContext context, ModalClient client) {
        ModalSandbox sb;
        try {
            sb = client.settings.sandboxId().isPresent() ? ModalSandbox.attach(client, client.settings.sandboxId().get())
                    : ModalSandbox.create(client, false);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
        ModalEnvironment env;
        try {
            env = new ModalEnvironment(context, client, sb);
        } catch (RuntimeException e) {
            sb.close();
            client.close();
            throw e;
        }
        try {
            env.initialize();
        } catch (RuntimeException e) {
            env.close();
            throw e;
        }
        return env;
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
    protected RemoteProcess launch(Launch launch) throws IOException {
        List<String> argv = List.of("sh", "-c", WRAPPER, "airlock", WRAPPER, launch.shell(), launch.script(),
                String.join(" ", launch.unset()));
        return sandbox.exec(argv, launch.env());
    }

    /** The sandbox never sees the JVM's environment, so there is nothing of it to strip. */
    @Override
    protected Set<String> childUnset() {
        return Set.of();
    }

    /** Runs once (the core's stop-once latch): terminates the sandbox unless attached, then closes the channels. */
    @Override
    protected void stopSandbox() {
        try {
            sandbox.close();
        } finally {
            client.close();
        }
    }
}
