package dev.airlock.exec;

import dev.airlock.spi.RawResult;
import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.Capabilities;
import dev.airlock.OutputTransport;
import dev.airlock.PayloadStrategy;
import dev.airlock.StdinMode;
import dev.airlock.Payload;
import dev.airlock.Target;
import dev.airlock.WriteOptions;
import dev.airlock.containment.ContainerDetection;
import dev.airlock.containment.Containment;
import dev.airlock.containment.OwnState;
import dev.airlock.containment.ContainmentSettings;
import dev.airlock.containment.Shims;
import dev.airlock.containment.TargetProbe;
import dev.airlock.shell.Shell;
import dev.airlock.spi.Backend;

import java.io.IOException;
import java.util.Map;
import java.util.Set;

/**
 * Opening an environment: one probe script tells who and where the target is, containment decides
 * the children's home and temp dir, and those are made before the first command runs.
 */
final class Bootstrap {

    /**
     * What the probe found and what containment made of it.
     *
     * @param shell the shell user commands run in, by absolute path: {@code bash} where the probe
     *              found it (by an absolute path), else {@code /bin/sh}; never looked up along a
     *              PATH the request may have replaced
     */
    record Probed(Target target, Containment plan, String shell) {
    }

    private Bootstrap() {
    }

    /**
     * Whether the environment's commands run unsandboxed on the JVM's own host as its user (or as
     * root), so that they can write Airlock's config and approvals: the backend declares no
     * isolation and the probed target is this machine.
     */
    static boolean commandsCanWriteOwnState(Backend backend, Target target) {
        if (!backend.isolation().startsWith("none") || target.container()) {
            return false;
        }
        String jvmUser = System.getProperty("user.name", "");
        boolean sameUser = target.user().equals(jvmUser) || "root".equals(target.user());
        return sameUser && target.hostname().equals(OwnState.hostName());
    }

    /** A backend's declared transports and ports need their hooks: one clear line for the plugin's author otherwise. */
    static void checkHooks(Backend b) {
        Capabilities c = b.capabilities();
        if (c.stdinMode() == StdinMode.PAYLOAD && c.payloadStrategy() == PayloadStrategy.STREAMED && b.stdinWriter().isEmpty()) {
            throw new IllegalStateException("the " + b.name() + " backend declares streamed PAYLOAD stdin but gives no"
                    + " stdinWriter(); return one, or declare PayloadStrategy.STAGED");
        }
        if (c.outputTransport() == OutputTransport.FILES && b.files().isEmpty()) {
            throw new IllegalStateException("the " + b.name() + " backend declares FILES output but gives no native"
                    + " files() to download them with; return one, or declare OutputTransport.STREAM");
        }
        if (c.ports() != dev.airlock.PortSupport.NONE && b.portForwarder().isEmpty()) {
            throw new IllegalStateException("the " + b.name() + " backend declares ports " + c.ports() + " but gives no"
                    + " portForwarder(); return one, or declare PortSupport.NONE");
        }
    }

    static Probed probe(CoreEnvironment env, ContainmentSettings containmentSettings, String base) {
        Set<String> unset = env.capabilities().nativeEnv() ? env.childUnset() : Set.of(); // as raw runs launch
        Map<String, String> facts = TargetProbe.parse(env.hooks().probe(base, unset).orElseGet(() -> runProbe(env, base)));
        ContainerDetection.Verdict verdict = ContainerDetection.decide(containmentSettings.container(), facts);
        String processHome = facts.getOrDefault("home", "");
        String passwdHome = facts.getOrDefault("passwd_home", "");
        String realHome = !processHome.isEmpty() ? processHome : !passwdHome.isEmpty() ? passwdHome : "/";
        Containment plan = Containment.plan(containmentSettings, realHome, facts, verdict.container(), verdict.signal());
        String home = plan.home();
        String bash = facts.getOrDefault("bash", "");
        Target target = new Target(facts.getOrDefault("os", ""), facts.getOrDefault("hostname", ""),
                Integer.parseInt(facts.get("uid").trim()), facts.getOrDefault("user", ""),
                passwdHome, processHome, home,
                facts.getOrDefault("tmpdir", "").isEmpty() ? "/tmp" : facts.get("tmpdir"),
                facts.get("private"), bash.isEmpty() ? "sh" : "bash", verdict.container(), verdict.signal());
        return new Probed(target, plan, shellPath(bash));
    }

    /** {@code command -v bash} as the probe printed it: used when absolute, else the target's {@code /bin/sh}. */
    static String shellPath(String bash) {
        if (bash.startsWith("/")) {
            return bash;
        }
        return bash.isEmpty() ? "/bin/sh" : "bash"; // a relative PATH entry: as before, looked up
    }

    private static byte[] runProbe(CoreEnvironment env, String base) {
        RawResult r;
        try {
            r = env.runRaw(TargetProbe.script(base, !base.contains("$")), null);
        } catch (IOException e) {
            throw new BackendException("cannot run the target probe on " + env.name() + ": " + e.getMessage(), e);
        }
        if (r.exit() != 0) {
            throw new BackendException("the target probe on " + env.name() + " failed (exit " + r.exit() + "): " + r.stderrLine());
        }
        return r.stdout();
    }

    /** Makes the children's home, and in the eval profile the run dir's layout and the shims. */
    static void prepare(CoreEnvironment env, Containment plan) {
        if (plan.runDir().isPresent()) {
            String dir = plan.runDir().get();
            runPrepare(env, "the eval run dir " + dir, Shims.prepareScript(dir));
            String bin = plan.shimDir().orElseThrow();
            for (String name : Shims.SCRIPTS) {
                try {
                    env.files().write(bin + "/" + name, Payload.of(Shims.script(name, dir)), WriteOptions.mode(0755));
                } catch (AirlockException e) {
                    throw new BackendException("cannot install the " + name + " shim in " + bin + ": " + e.getMessage(), e);
                }
            }
        } else if (plan.profileHome() && !env.hooks().makeHome(plan.home())) {
            runPrepare(env, "the profile home " + plan.home(), "umask 077\nmkdir -p -- " + Shell.quotePath(plan.home()) + "\n");
        }
    }

    private static void runPrepare(CoreEnvironment env, String what, String script) {
        RawResult mk;
        try {
            mk = env.runRaw(script, null);
        } catch (IOException e) {
            throw new BackendException("cannot create " + what + ": " + e.getMessage(), e);
        }
        if (mk.exit() != 0) {
            throw new BackendException("cannot create " + what + ": " + mk.stderrLine());
        }
    }
}
