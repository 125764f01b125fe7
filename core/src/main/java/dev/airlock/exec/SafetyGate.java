package dev.airlock.exec;

import dev.airlock.ExecRequest;
import dev.airlock.Target;
import dev.airlock.safety.ApprovalChannel;
import dev.airlock.safety.Safety;
import dev.airlock.settings.Settings;
import dev.airlock.spi.RawResult;

import java.io.IOException;
import java.util.Optional;

/**
 * The guard's two entries into the exec core: every user command (never Airlock's own scripts)
 * before anything is staged, and the file operations that change a path before they run. The
 * rules are loaded through the backend on first use, once.
 */
final class SafetyGate {
    private final CoreEnvironment env;
    private final Settings settings;
    private final Optional<ApprovalChannel> approvals;
    private final Object lock = new Object();
    private volatile Safety safety;

    SafetyGate(CoreEnvironment env, Settings settings, Optional<ApprovalChannel> approvals) {
        this.env = env;
        this.settings = settings;
        this.approvals = approvals;
    }

    void checkCommand(ExecRequest request) {
        Target t = env.target();
        safety().checkCommand(request.command(), request.cwd().map(t::expand), request.env());
    }

    void checkWrite(String path, String operation) {
        env.ensureOpen(); // before the rules load through the backend: a closed one may have no client left
        safety().checkWrite(path, operation);
    }

    private Safety safety() {
        Safety s = safety;
        if (s != null) {
            return s;
        }
        synchronized (lock) {
            if (safety == null) {
                safety = new Safety(env.name(), env.target(), env.containment(), settings, env.capabilities(), approvals,
                        script -> {
                            RawResult r = env.runRaw(script, null);
                            if (r.exit() != 0) {
                                throw new IOException("exit " + r.exit() + ": " + r.stderrLine());
                            }
                            return r.stdout();
                        }, env::emit, env.stateWitness(), env.credentialsReadOnly());
            }
            return safety;
        }
    }
}
