package dev.airlock.exec;

import dev.airlock.spi.BulkInputStream;
import dev.airlock.spi.Launch;
import dev.airlock.Capabilities;
import dev.airlock.ConfigurationException;
import dev.airlock.ExecRequest;
import dev.airlock.Payload;
import dev.airlock.PayloadStrategy;
import dev.airlock.StdinMode;
import dev.airlock.Target;
import dev.airlock.shell.Launcher;
import dev.airlock.shell.Shell;
import dev.airlock.shell.StdinScripts;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Turns a request into what the backend launches: stages what must be staged (the env script, a
 * PAYLOAD stdin, a script too long for argv) through {@code stager}, and writes the prefix in its
 * one order: open and remove every staged file (with the inherited PATH), source the env, enter
 * the cwd, print the launcher record, run the command.
 */
final class ExecScript {

    /** Puts bytes at a 0600 path, remembering the path so it is removed if the command never runs. */
    interface Stager {
        void stage(String path, Payload data) throws IOException;
    }

    private ExecScript() {
    }

    /**
     * {@code shell}: the target's shell by absolute path (see {@link Bootstrap.Probed#shell}); the
     * user's command runs in it, and a staged script is run by it, so a request's own {@code PATH}
     * cannot keep either from starting. Airlock's own scripts run under {@code sh} with the
     * target's PATH.
     */
    static Launch build(ExecRequest request, String command, boolean internal, boolean holdTransport, Capabilities caps,
                        Target t, String shell,
                        Map<String, String> set,
                        Set<String> unset, long maxStaged, String nonce, OutputFiles files, Stager stager)
            throws IOException {
        StringBuilder opens = new StringBuilder();
        boolean env = false;
        if (!caps.nativeEnv()) {
            String envPath = StdinScripts.stagedScriptPath(t.stagingDir());
            stager.stage(envPath, Payload.of(envScript(unset, set)));
            opens.append(StdinScripts.openStagedEnv(envPath));
            env = true;
        }
        boolean pipe = false;
        Optional<Payload> stdin = request.stdin();
        if (stdin.isEmpty()) {
            opens.append(StdinScripts.noStdinPrefix());
        } else if (caps.stdinMode() == StdinMode.PIPE) {
            pipe = true;
        } else if (caps.stdinMode() == StdinMode.PAYLOAD && caps.payloadStrategy() == PayloadStrategy.STREAMED) {
            pipe = true; // the backend's writer streams it by offset while the command runs: no staging, no cap
        } else if (caps.stdinMode() == StdinMode.PAYLOAD) {
            String path = StdinScripts.stagedStdinPath(t.stagingDir());
            stager.stage(path, internal ? stdin.get() : capped(stdin.get(), maxStaged));
            opens.append(StdinScripts.redirectPrefix(path));
        } else {
            command = StdinScripts.heredoc(readCapped(stdin.get(), StdinScripts.HEREDOC_MAX_BYTES), command);
        }
        shell = internal ? "sh" : shell;
        String cd = request.cwd().map(cwd -> "cd -- " + Shell.quotePath(t.expand(cwd)) + " || exit 126\n").orElse("");
        // The estimate: the staging lines, 512 bytes for the fixed lines after them, and three
        // bytes per character of what the caller chose (the cwd and the command) for quoting.
        boolean stagedScript = opens.length() + 512 + (cd.length() + command.length()) * 3L > caps.argvLimit();
        if (stagedScript) {
            String scriptPath = StdinScripts.stagedScriptPath(t.stagingDir());
            stager.stage(scriptPath, Payload.of(StdinScripts.stagedScript(command).getBytes(StandardCharsets.UTF_8)));
            opens.append(StdinScripts.openStagedScript(scriptPath));
        }
        StringBuilder script = new StringBuilder(opens);
        if (env) {
            script.append(StdinScripts.sourceOpenedEnv());
        }
        if (files != null) {
            script.append(files.redirect()); // after the staging lines: their errors stay on the transport
        }
        script.append(cd); // after the staging lines, so a bad cwd cannot leave a staged file behind
        script.append(files != null ? OutputFiles.recordOnTransport(Launcher.recordLine(nonce)) : Launcher.recordLines(nonce));
        if (holdTransport && files == null && !internal) {
            script.append(Launcher.HOLD_TRANSPORT);
        }
        script.append(stagedScript ? StdinScripts.execStagedScript(shell) : command);
        return new Launch(shell, script.toString(), caps.nativeEnv() ? set : Map.of(), caps.nativeEnv() ? unset : Set.of(),
                pipe, internal);
    }

    /**
     * {@code unset K} then {@code export K='v'} lines: env values travel in a staged 0600 file, never
     * in the command text. Names that cannot be shell variables cannot be inherited as such either.
     */
    static byte[] envScript(Set<String> unset, Map<String, String> set) {
        StringBuilder sb = new StringBuilder();
        for (String name : unset) {
            if (name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                sb.append("unset ").append(name).append('\n');
            }
        }
        for (Map.Entry<String, String> e : set.entrySet()) {
            sb.append("export ").append(e.getKey()).append('=').append(Shell.quote(e.getValue())).append('\n');
        }
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The user's stdin on a PAYLOAD backend: staging needs the whole input, so it is bounded by
     * {@code airlock.stdin.max-staged-bytes}. File writes are not stdin and are never capped by it.
     */
    private static Payload capped(Payload p, long maxStaged) {
        String key = CoreSettings.MAX_STAGED_KEY;
        if (p.length().isPresent()) {
            if (p.length().getAsLong() > maxStaged) {
                throw new ConfigurationException("stdin of " + p.length().getAsLong() + " bytes exceeds " + key
                        + " (" + maxStaged + "); raise it or send less");
            }
            return p;
        }
        return Payload.ofStream(new BulkInputStream() {
            private InputStream in;
            private long seen;

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (in == null) {
                    in = p.open();
                }
                int n = in.read(b, off, len);
                if (n != -1 && (seen += n) > maxStaged) {
                    throw new IOException("stdin exceeds " + key + " (" + maxStaged + " bytes); raise it or send less");
                }
                return n;
            }

            @Override
            public void close() throws IOException {
                if (in != null) {
                    in.close();
                }
            }
        });
    }

    private static byte[] readCapped(Payload p, int max) throws IOException {
        try (InputStream in = p.open()) {
            byte[] b = in.readNBytes(max + 1);
            if (b.length > max) {
                throw new ConfigurationException("stdin exceeds " + max + " bytes, the most a heredoc backend can embed");
            }
            return b;
        }
    }
}
