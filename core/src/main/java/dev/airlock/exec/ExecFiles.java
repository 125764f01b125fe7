package dev.airlock.exec;

import dev.airlock.Payload;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The files one exec puts on its target: the payloads it stages and, with
 * {@link dev.airlock.OutputTransport#FILES}, the two files its output goes to. All are removed once,
 * at the end of the exec's flow, whatever ended it; a removal that fails (an Error or a checked
 * exception a hook did not declare included) is logged and never thrown, because the exec must
 * still end: a flow thread that dies here leaves no result and holds its slot.
 */
final class ExecFiles {
    private static final Logger LOG = LoggerFactory.getLogger(ExecFiles.class);

    private final CoreEnvironment env;
    private final long execId;
    private final List<String> staged = new ArrayList<>();
    private volatile OutputFiles output;

    ExecFiles(CoreEnvironment env, long execId) {
        this.env = env;
        this.execId = execId;
    }

    /** Stages {@code data} at {@code path}, remembered first, so a stage that fails halfway is removed too. */
    void stage(String path, Payload data) throws IOException {
        synchronized (staged) {
            staged.add(path);
        }
        env.hooks().stage(path, data);
    }

    /** The command started: its script's prefix removed the staged files before the launch record. */
    void stagedRemovedByTheCommand() {
        synchronized (staged) {
            staged.clear();
        }
    }

    /** Names the output files, in the target's staging dir, for a FILES transport. */
    OutputFiles newOutput() {
        output = OutputFiles.in(env.target().stagingDir());
        return output;
    }

    /** The output files, or null when the output streams (or the exec ended before it named them). */
    OutputFiles output() {
        return output;
    }

    /**
     * Once, at the flow's end: nothing stages or reads the list after it. The output files go only
     * once the command was dispatched (downloaded, or never to be: after a timeout or cancel too).
     */
    void removeAll(boolean dispatched) {
        List<String> paths;
        synchronized (staged) {
            paths = List.copyOf(staged);
        }
        for (String path : paths) {
            try {
                env.hooks().remove(path);
            } catch (Throwable e) {
                removalFailed("the staged file " + path, e); // and the other files are still removed
            }
        }
        OutputFiles o = output;
        if (o != null && dispatched) {
            try {
                o.remove(env.hooks());
            } catch (Throwable e) {
                removalFailed("the output files", e);
            }
        }
    }

    private void removalFailed(String what, Throwable e) {
        Thread.interrupted(); // a hook interrupted at its deadline: the next removal still runs
        if (e instanceof Error) {
            LOG.warn("could not remove {} of exec {} on {}: {}", what, execId, env.name(), e.toString());
        } else {
            LOG.debug("could not remove {} of exec {} on {}: {}", what, execId, env.name(), e.toString());
        }
    }
}
