package dev.airlock.exec;

import dev.airlock.ExecRequest;
import dev.airlock.Target;
import dev.airlock.safety.ApprovalChannel;
import dev.airlock.safety.HostPaths;
import dev.airlock.safety.Safety;
import dev.airlock.safety.TargetShell;
import dev.airlock.settings.Settings;
import dev.airlock.spi.ControlShell;
import dev.airlock.spi.RawResult;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
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

    /**
     * The rules' resolution scripts as raw runs, or answered in this JVM where the backend's
     * scripts see this host's file system ({@link dev.airlock.spi.Backend#hostView}).
     */
    private final class Resolution implements TargetShell {
        /** What the scripts inherit: this JVM's environment (fixed for its life) less the unset variables. */
        private volatile Map<String, String> inherited;

        /**
         * In the backend's control shell while it lives (a line each way, where a command of its
         * own is a docker exec or an ssh login: the shell is on the same target as the same user
         * with the same environment, so it sees the paths as a command does); as a command when
         * there is none or it gave no whole answer.
         */
        @Override
        public byte[] run(String script) throws IOException {
            ControlShell c = env.backend().controlShell().orElse(null);
            if (c != null && !c.dead()) {
                try {
                    Optional<String> out = c.runWhole(script);
                    if (out.isPresent()) {
                        return out.get().getBytes(StandardCharsets.UTF_8);
                    }
                } catch (IOException e) {
                    // the shell is gone for good: the command below answers
                }
            }
            RawResult r = env.runRaw(script, null);
            if (r.exit() != 0) {
                throw new IOException("exit " + r.exit() + ": " + r.stderrLine());
            }
            return r.stdout();
        }

        /** Made at each resolution, as the script runs at each: its {@code $PWD} is read afresh. */
        @Override
        public Optional<HostPaths> hostPaths() {
            Optional<Path> start = env.backend().hostView();
            if (start.isEmpty()) {
                return Optional.empty();
            }
            Map<String, String> vars = inherited;
            if (vars == null) {
                vars = new HashMap<>(System.getenv());
                if (env.capabilities().nativeEnv()) {
                    env.childUnset().forEach(vars::remove); // as a raw run's launch removes them
                }
                vars = Map.copyOf(vars);
                inherited = vars;
            }
            try {
                return Optional.of(new HostPaths(start.get(), vars, env.backend()::hostPlace));
            } catch (HostPaths.Unanswerable e) {
                return Optional.empty();
            }
        }
    }

    private Safety safety() {
        Safety s = safety;
        if (s != null) {
            return s;
        }
        synchronized (lock) {
            if (safety == null) {
                safety = new Safety(env.name(), env.target(), env.containment(), settings, env.capabilities(), approvals,
                        new Resolution(), env::emit, env.stateWitness(), env.credentialsReadOnly());
            }
            return safety;
        }
    }
}
