package dev.airlock.exec;

import dev.airlock.Payload;
import dev.airlock.shell.Shell;
import dev.airlock.spi.Backend;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.GroupState;
import dev.airlock.spi.Killer;
import dev.airlock.spi.Launch;
import dev.airlock.spi.RawResult;
import dev.airlock.spi.RemoteProcess;
import dev.airlock.spi.Stager;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The backend's hooks as the core calls them: each with its deadline, and the backend's native
 * stager and killer where it has them, else the core's shell implementations (scripts through
 * {@link Backend#launch}).
 */
final class Hooks {
    /** The most any single hook may take before the core gives up on it (a timeout or cancel bounds it sooner). */
    static final Duration HOOK_BOUND = Duration.ofMinutes(10);

    private final Backend backend;
    private final RawRuns raw;
    private final Optional<Stager> stager;
    private final Optional<Killer> killer;
    private final Duration killBound;

    Hooks(Backend backend, RawRuns raw, Duration killBound) {
        this.backend = backend;
        this.raw = raw;
        this.stager = backend.stager();
        this.killer = backend.killer();
        this.killBound = killBound;
    }

    RemoteProcess launch(Launch launch) throws IOException {
        return backend.launch(launch, Deadline.in(HOOK_BOUND));
    }

    void stage(String path, Payload data) throws IOException {
        if (stager.isPresent()) {
            stager.get().stage(path, data, Deadline.in(HOOK_BOUND));
            return;
        }
        RawResult r = raw.run(Shell.stageScript(path), data);
        if (r.exit() != 0) {
            throw new IOException("cat exited " + r.exit() + ": " + r.stderrLine());
        }
    }

    void remove(String path) throws IOException {
        if (stager.isPresent()) {
            stager.get().remove(path, Deadline.in(killBound));
            return;
        }
        raw.run(Shell.removeScript(path), null);
    }

    void kill(RemoteProcess p, OptionalLong group, boolean force) throws IOException {
        if (killer.isPresent()) {
            killer.get().kill(p, group, force, Deadline.in(killBound));
            return;
        }
        long pgid = group.orElseThrow(() -> new IOException(
                "the command's process group is unknown and the backend has no native kill"));
        raw.run(Shell.signalGroupScript(force ? "KILL" : "TERM", pgid), null);
    }

    GroupState groupState(long pgid) throws IOException {
        if (killer.isPresent()) {
            return killer.get().groupState(pgid, Deadline.in(killBound));
        }
        RawResult r = raw.run(Shell.groupStateScript(pgid), null);
        return GroupState.parse(new String(r.stdout(), StandardCharsets.UTF_8));
    }
}
