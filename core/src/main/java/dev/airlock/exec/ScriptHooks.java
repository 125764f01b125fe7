package dev.airlock.exec;

import dev.airlock.Payload;
import dev.airlock.shell.Shell;
import dev.airlock.spi.Backend;
import dev.airlock.spi.ControlShell;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.GroupState;
import dev.airlock.spi.Killer;
import dev.airlock.spi.RawResult;
import dev.airlock.spi.RemoteProcess;
import dev.airlock.spi.Stager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The core's staging and kills as scripts: each through the backend's {@link Backend#controlShell()
 * control shell} while it lives (a line each way), else as a command of its own ({@link RawRuns}).
 * Used where the backend has no native {@link Stager} or {@link Killer}, and offered to those it
 * has through {@link dev.airlock.spi.CoreAccess}.
 */
final class ScriptHooks implements Stager, Killer {
    private static final Logger LOG = LoggerFactory.getLogger(ScriptHooks.class);

    private final Backend backend;
    private final RawRuns raw;

    ScriptHooks(Backend backend, RawRuns raw) {
        this.backend = backend;
        this.raw = raw;
    }

    @Override
    public void stage(String path, Payload data, Deadline deadline) throws IOException {
        if (backend.controlShell().isPresent()) {
            Optional<String> text = ControlShell.carriableText(data);
            if (text.isPresent() && "ok\n".equals(inControl(Shell.stageTextScript(path, text.get())))) {
                return;
            }
        }
        RawResult r = raw.run(Shell.stageScript(path), data);
        if (r.exit() != 0) {
            throw new IOException("cat exited " + r.exit() + ": " + r.stderrLine());
        }
    }

    /** Only a failure to run {@code rm} fails it; its exit status is not read. */
    @Override
    public void remove(String path, Deadline deadline) throws IOException {
        if (!"ok\n".equals(inControl(Shell.removeScript(path) + "[ ! -e " + Shell.quotePath(path) + " ] && echo ok\n"))) {
            raw.run(Shell.removeScript(path), null);
        }
    }

    @Override
    public void kill(RemoteProcess process, OptionalLong group, boolean force, Deadline deadline) throws IOException {
        long pgid = group.orElseThrow(() -> new IOException(
                "the command's process group is unknown and the backend has no native kill"));
        String script = Shell.signalGroupScript(force ? "KILL" : "TERM", pgid);
        if (inControl(script) == null) {
            raw.run(script, null);
        }
    }

    @Override
    public GroupState groupState(long pgid, Deadline deadline) throws IOException {
        String out = inControl(Shell.groupStateScript(pgid));
        if (out == null) {
            RawResult r = raw.run(Shell.groupStateScript(pgid), null);
            out = new String(r.stdout(), StandardCharsets.UTF_8);
        }
        return GroupState.parse(out);
    }

    /** {@code script}'s output from the control shell; null when there is none or it failed (then a command runs it). */
    private String inControl(String script) {
        ControlShell c = backend.controlShell().orElse(null);
        if (c == null || c.dead()) {
            return null;
        }
        try {
            return c.run(script);
        } catch (IOException e) {
            LOG.debug("the control shell of {} failed ({}); its scripts run as commands", backend.id(), e.getMessage());
            return null;
        }
    }
}
