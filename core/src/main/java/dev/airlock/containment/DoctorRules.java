package dev.airlock.containment;

import dev.airlock.Target;
import dev.airlock.containment.DoctorReport.Row;
import dev.airlock.containment.DoctorReport.Verdict;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The doctor's rules: what each fact the probe reports means for one exit (HOME, crontab, the user
 * bus, TMPDIR, argv, sockets, capabilities, mounts...). Pure functions of the facts, so every rule
 * is tested without a target ({@code DoctorJudgeTest}); {@link Doctor} runs the probe.
 */
final class DoctorRules {
    private DoctorRules() {
    }

    /** Turns the probe's facts into the report; pure, so every rule is testable without a target. */
    static DoctorReport judge(String backend, Target target, Optional<Containment> plan, String commandGuard,
                              String isolation, Map<String, String> f) {
        List<Row> rows = new ArrayList<>();
        rows.add(home(target, plan, f));
        rows.add(crontab(f));
        rows.add(bus(f));
        rows.add(tmpdir(target, plan, f));
        rows.add(argv(f));
        rows.add(sockets(backend, f));
        rows.add(network(f));
        rows.add(capabilities(f));
        rows.add(mounts(f));
        rows.add(processes(f));
        rows.add(jvmEnvironment(f));
        rows.add(otherStdin(f));
        rows.add(passwdHome(f));
        rows.add(sessions(f));
        rows.add(ownState(f));
        rows.add(gitMetadata(f));
        rows.add(processRoots(f));
        return new DoctorReport(backend, target.user() + "@" + target.hostname(), target.uid(), target.container(),
                target.containerSignal(), plan.map(p -> p.homeMode().name().toLowerCase(java.util.Locale.ROOT)).orElse("unknown"),
                plan.map(p -> p.profile().label()).orElse("unknown"), plan.flatMap(Containment::runDir), commandGuard,
                isolation, rows);
    }

    private static Row home(Target target, Optional<Containment> plan, Map<String, String> f) {
        String home = strip(f.getOrDefault("home", ""));
        String real = strip(f.getOrDefault("real_home", ""));
        if (real.isEmpty()) {
            real = strip(target.processHome().isEmpty() ? target.passwdHome() : target.processHome());
        }
        // Under a sandbox a real home below its own tmpfs (a fresh /tmp, say) is not the real one either.
        boolean realReadOnly = "1".equals(f.get("real_home_ro")) || (sandboxed(f) && "tmpfs".equals(f.get("real_home_fs")));
        String why = plan.map(Containment::homeReason)
                .orElse("container: " + (target.container() ? "yes" : "no") + ", " + target.containerSignal());
        if (home.isEmpty()) {
            return new Row("HOME", Verdict.LEAKS, "HOME is unset, so programs fall back to the real home " + real);
        }
        if (home.equals(real)) {
            return realReadOnly
                    ? new Row("HOME", Verdict.CONTAINED_ENFORCED, "HOME is the real home " + real + ", read-only here (" + why + ")")
                    : new Row("HOME", Verdict.LEAKS, "HOME is the real home " + real + " (" + why + ")");
        }
        return realReadOnly
                ? new Row("HOME", Verdict.CONTAINED_ENFORCED, "HOME=" + home + " (" + why + "); the real home " + real
                        + " is read-only or hidden here")
                : new Row("HOME", Verdict.CONTAINED_BY_ENVIRONMENT, "HOME=" + home + " (" + why + "); the real home " + real
                        + " stays writable by absolute path");
    }

    private static Row crontab(Map<String, String> f) {
        String onPath = f.getOrDefault("crontab", "");
        boolean shim = "1".equals(f.get("crontab_shim"));
        String real = f.getOrDefault("crontab_real", "");
        String spool = f.getOrDefault("spool", "");
        boolean spoolReadOnly = !spool.isEmpty() && "1".equals(f.get("spool_ro"));
        if (shim) {
            if (spoolReadOnly) {
                return new Row("crontab", Verdict.CONTAINED_ENFORCED, "crontab resolves to the shim " + onPath
                        + "; the spool " + spool + " is read-only here");
            }
            return new Row("crontab", Verdict.CONTAINED_BY_ENVIRONMENT, "crontab resolves to the shim " + onPath
                    + (real.isEmpty() ? "; no other crontab is installed"
                    : "; " + real + " still writes " + (spool.isEmpty() ? "the spool" : spool) + " when called by absolute path"));
        }
        if (!onPath.isEmpty()) {
            if (spoolReadOnly) {
                return new Row("crontab", Verdict.CONTAINED_ENFORCED, "crontab is " + onPath + ", but the spool " + spool
                        + " is read-only here");
            }
            return new Row("crontab", Verdict.LEAKS, "crontab is " + onPath + ", which installs jobs in the real table"
                    + (spool.isEmpty() ? "" : " (" + spool + ")"));
        }
        if (!real.isEmpty()) {
            return new Row("crontab", spoolReadOnly ? Verdict.CONTAINED_ENFORCED : Verdict.CONTAINED_BY_ENVIRONMENT,
                    "no crontab on PATH; " + real + " exists by absolute path" + (spoolReadOnly ? ", its spool read-only here" : ""));
        }
        return new Row("crontab", Verdict.NOT_APPLICABLE, "no crontab on the target");
    }

    private static Row bus(Map<String, String> f) {
        String address = f.getOrDefault("dbus", "");
        String runtime = f.getOrDefault("xdg_runtime", "");
        String socket = f.getOrDefault("bus_socket", "");
        String systemctl = f.getOrDefault("systemctl", "");
        String shimNote = "1".equals(f.get("systemctl_shim")) ? "; systemctl resolves to the shim " + systemctl : "";
        if (!address.isEmpty()) {
            return new Row("user bus", Verdict.LEAKS, "DBUS_SESSION_BUS_ADDRESS=" + address + " reaches the session bus" + shimNote);
        }
        if (!runtime.isEmpty() && !socket.isEmpty() && socket.startsWith(runtime)) {
            return new Row("user bus", Verdict.LEAKS, "XDG_RUNTIME_DIR=" + runtime + " leads to the bus socket " + socket + shimNote);
        }
        if (!socket.isEmpty()) {
            return "1".equals(f.get("bus_socket_w"))
                    ? new Row("user bus", Verdict.CONTAINED_BY_ENVIRONMENT, "the bus variables are removed; the socket "
                            + socket + " stays reachable by path" + shimNote)
                    : new Row("user bus", Verdict.CONTAINED_ENFORCED, "the bus socket " + socket + " is not writable here" + shimNote);
        }
        if (freshRun(f)) {
            return new Row("user bus", Verdict.CONTAINED_ENFORCED, "no bus variable and no bus socket: / is read-only"
                    + " and /run is this sandbox's own" + shimNote);
        }
        return new Row("user bus", Verdict.NOT_APPLICABLE, "no user bus here (no DBUS_SESSION_BUS_ADDRESS, no bus socket"
                + (runtime.isEmpty() ? ", no XDG_RUNTIME_DIR" : " in " + runtime) + ")" + shimNote);
    }

    private static Row tmpdir(Target target, Optional<Containment> plan, Map<String, String> f) {
        String tmp = strip(f.getOrDefault("tmpdir", ""));
        Set<String> shared = new HashSet<>(List.of("/tmp", "/var/tmp", "/dev/shm", strip(target.tempDir())));
        if (tmp.isEmpty()) {
            return new Row("TMPDIR", Verdict.LEAKS, "TMPDIR is unset, so programs use the shared /tmp");
        }
        if (shared.contains(tmp)) {
            return new Row("TMPDIR", Verdict.LEAKS, "TMPDIR=" + tmp + " is the shared temp dir");
        }
        String mode = f.getOrDefault("tmpdir_mode", "");
        String where = plan.flatMap(Containment::runDir).filter(d -> tmp.startsWith(d + "/")).isPresent()
                ? "in the run dir" : tmp.startsWith(strip(target.privateDir()) + "/") ? "removed on close" : "set by the caller";
        String what = "TMPDIR=" + tmp + " (" + (mode.isEmpty() ? "" : "mode " + mode + ", ") + where + ")";
        if ("1".equals(f.get("tmp_ro"))) {
            return new Row("TMPDIR", Verdict.CONTAINED_ENFORCED, what + "; the shared /tmp is read-only here");
        }
        boolean sharedFresh = strip(target.tempDir()).equals("/tmp") || "1".equals(f.get("shared_tmp_ro"))
                || (sandboxed(f) && ("tmpfs".equals(f.get("shared_tmp_fs"))
                        || ownTempDir(target, f.getOrDefault("shared_tmp_root", ""))));
        if (sandboxed(f) && "tmpfs".equals(f.get("tmp_fs")) && sharedFresh) {
            return new Row("TMPDIR", Verdict.CONTAINED_ENFORCED, what + "; / is read-only and the shared temp dir is this"
                    + " sandbox's own tmpfs");
        }
        if (sandboxed(f) && ownTempDir(target, f.getOrDefault("tmp_root", "")) && sharedFresh) {
            return new Row("TMPDIR", Verdict.CONTAINED_ENFORCED, what + "; / is read-only and /tmp is a dir of this"
                    + " environment's private dir, removed on close");
        }
        return new Row("TMPDIR", Verdict.CONTAINED_BY_ENVIRONMENT, what + "; the shared /tmp stays writable by absolute path");
    }

    private static Row argv(Map<String, String> f) {
        String procs = f.getOrDefault("procs", "");
        if (procs.isEmpty()) {
            return new Row("argv secrecy", Verdict.NOT_APPLICABLE, "no /proc on the target to look at other processes' argv");
        }
        String hits = f.getOrDefault("argv_hits", "0").trim();
        if (!hits.equals("0")) {
            return new Row("argv secrecy", Verdict.LEAKS, "a marker sent as stdin or as an env value showed up in the argv of "
                    + hits + " process(es)");
        }
        return new Row("argv secrecy", Verdict.CONTAINED_BY_ENVIRONMENT, "markers sent as stdin and as an env value were in"
                + " none of " + procs + " processes' argv; the command's own arguments stay visible to every local user");
    }

    private static Row sockets(String backend, Map<String, String> f) {
        String reachable = f.getOrDefault("sockets", "").trim();
        if (!reachable.isEmpty()) {
            return new Row("sockets", Verdict.LEAKS, "reachable host sockets: " + String.join(", ", reachable.split(" ")));
        }
        if (freshRun(f)) {
            int listeners = count(f, "abstract_listeners") + count(f, "tcp_listeners");
            if (listeners > 0) {
                // A read-only / and a private /run hide sockets with a path; abstract sockets and TCP
                // ports of a shared network namespace stay reachable whatever the mounts say.
                return new Row("sockets", Verdict.LEAKS, "the host's network is shared: " + count(f, "abstract_listeners")
                        + " listening abstract UNIX sockets and " + count(f, "tcp_listeners") + " listening TCP ports are"
                        + " reachable (" + ownNetworkHint(backend) + ")");
            }
            return new Row("sockets", Verdict.CONTAINED_ENFORCED, "no host socket is reachable: / is read-only, /run is"
                    + " this sandbox's own and no listener is in its network");
        }
        return new Row("sockets", Verdict.NOT_APPLICABLE, "none of the usual host sockets (Docker, containerd, podman,"
                + " the buses, an SSH agent) is here");
    }

    /** The fact naming what {@link dev.airlock.spi.Backend#allowlistCheck} found; set by the doctor, never by the probe. */
    static final String ALLOWLIST_CHECKED = "allowlist_checked";

    /**
     * What the probe found of the network (routes past the sandbox's loopback), not what was asked:
     * a route out under {@code airlock.network=off} is a leak.
     */
    private static Row network(Map<String, String> f) {
        if (!f.containsKey("routes")) {
            return new Row("network", Verdict.NOT_APPLICABLE, "no /proc/net/route on the target to read the routes from");
        }
        int routes = count(f, "routes");
        if (routes == 0) {
            return new Row("network", Verdict.CONTAINED_ENFORCED, "the probe found no route past the sandbox's own"
                    + " loopback: commands reach no network");
        }
        if ("off".equals(f.get("network_asked"))) {
            return new Row("network", Verdict.LEAKS, "airlock.network=off was asked, but the probe found " + routes
                    + " route(s) out of the sandbox");
        }
        if ("allowlist".equals(f.get("network_asked"))) {
            return allowlist(f, routes);
        }
        return new Row("network", Verdict.NOT_APPLICABLE, "the probe found " + routes + " route(s) out of the sandbox:"
                + " commands reach a network (airlock.network=off cuts it where the backend can)");
    }

    /**
     * Under {@code airlock.network=allowlist}: a server the list does not name (this JVM's, on its
     * loopback) answering the probe is a leak, whoever filters. Enforced only when the backend
     * checked its filter from outside the commands' reach ({@link #ALLOWLIST_CHECKED}): the probe's
     * own word that nothing answered is a command's output, which could be forged, so alone it is
     * no verdict of enforcement.
     */
    private static Row allowlist(Map<String, String> f, int routes) {
        String port = f.getOrDefault("unlisted_port", "?");
        if (!f.getOrDefault("unlisted_reached", "").isEmpty()) {
            return new Row("network", Verdict.LEAKS, "airlock.network=allowlist was asked, but a server it does not name"
                    + " (this machine's loopback) answered the probe at " + f.get("unlisted_reached") + " port " + port);
        }
        String checked = f.get(ALLOWLIST_CHECKED);
        if (checked != null) {
            return new Row("network", Verdict.CONTAINED_ENFORCED, "airlock.network=allowlist is a packet filter no"
                    + " command can change, checked from outside: " + checked);
        }
        if (f.containsKey("unlisted_tried")) {
            return new Row("network", Verdict.NOT_APPLICABLE, "the probe found " + routes + " route(s) out of the sandbox;"
                    + " a server airlock.network=allowlist does not name (this machine's loopback) did not answer it at "
                    + f.get("unlisted_tried") + " port " + port + "; what the list lets through was not probed");
        }
        return new Row("network", Verdict.NOT_APPLICABLE, "the probe found " + routes + " route(s) out of the sandbox;"
                + " airlock.network=allowlist is a filter outside it, which no probe inside can read and this"
                + " backend did not check");
    }

    /** How this backend gives commands a network of their own, for the sockets row's advice. */
    private static String ownNetworkHint(String backend) {
        return switch (backend) {
            case "local" -> "airlock.network=off gives the sandbox a network of its own";
            case "docker" -> "airlock.network=off, or a container network other than the host's (airlock.docker.network), gives it a network of its own";
            default -> "give the " + backend + " sandbox a network namespace of its own";
        };
    }

    /** Capabilities that let a command undo a sandbox or reach past it (sys_admin, ptrace, module, rawio, dac_read_search, net_admin, bpf). */
    private static final long ESCAPE_CAPS = (1L << 21) | (1L << 19) | (1L << 16) | (1L << 17) | (1L << 2) | (1L << 12) | (1L << 39);

    private static Row capabilities(Map<String, String> f) {
        String hex = f.getOrDefault("cap_eff", "").trim();
        if (hex.isEmpty()) {
            return new Row("capabilities", Verdict.NOT_APPLICABLE, "no /proc/self/status to read the capabilities from");
        }
        long caps;
        try {
            caps = Long.parseUnsignedLong(hex, 16);
        } catch (NumberFormatException e) {
            return new Row("capabilities", Verdict.NOT_APPLICABLE, "unreadable CapEff " + hex);
        }
        if ((caps & ESCAPE_CAPS) != 0) {
            return new Row("capabilities", Verdict.LEAKS, "a command holds capabilities (CapEff " + hex + ", among them"
                    + " sys_admin, ptrace or dac_read_search) that undo a sandbox or reach past it");
        }
        if (caps != 0) {
            return new Row("capabilities", Verdict.CONTAINED_BY_ENVIRONMENT, "a command holds CapEff " + hex
                    + ", none of which undoes a sandbox");
        }
        return new Row("capabilities", Verdict.CONTAINED_ENFORCED, "a command holds no capability (CapEff 0)");
    }

    private static Row mounts(Map<String, String> f) {
        String ok = f.getOrDefault("mount_ok", "");
        if (ok.isEmpty()) {
            return new Row("mounts", Verdict.NOT_APPLICABLE, "no mount program or no scratch dir to try it in");
        }
        return "1".equals(ok)
                ? new Row("mounts", Verdict.LEAKS, "a command mounted a tmpfs (and took it off): it can change mounts,"
                        + " so it can unmount what hides or protects host paths")
                : new Row("mounts", Verdict.CONTAINED_ENFORCED, "the kernel refused a command's mount");
    }

    private static Row processes(Map<String, String> f) {
        boolean jvm = "1".equals(f.get("jvm_visible"));
        boolean sibling = "1".equals(f.get("sibling_visible"));
        if (!f.containsKey("sibling_visible") && !f.containsKey("jvm_visible")) {
            return new Row("processes", Verdict.NOT_APPLICABLE, "no /proc on the target");
        }
        if (jvm || sibling) {
            return new Row("processes", Verdict.LEAKS, "a command sees " + (jvm ? "the host's processes (Airlock's JVM among"
                    + " them)" : "") + (jvm && sibling ? " and " : "") + (sibling ? "another exec's processes" : "")
                    + " in /proc, their argv, and can signal those of its user");
        }
        return new Row("processes", Verdict.CONTAINED_ENFORCED, "neither the JVM nor another exec's processes are visible"
                + " (a PID namespace of its own)");
    }

    /** The working directory's git config and hooks: code the operator's own git runs on the host. */
    private static Row gitMetadata(Map<String, String> f) {
        String dir = f.getOrDefault("git_dir", "");
        if (dir.isEmpty()) {
            return new Row("git metadata", Verdict.NOT_APPLICABLE, "the working directory is not a git checkout");
        }
        if ("1".equals(f.get("git_config_ro")) && "1".equals(f.get("git_hooks_ro"))) {
            return new Row("git metadata", Verdict.CONTAINED_ENFORCED, dir + "/config and hooks are read-only here");
        }
        return new Row("git metadata", Verdict.LEAKS, "a command can change " + dir + "/config or its hooks, which the"
                + " host's git runs (core.fsmonitor, a pre-commit hook) the next time the operator uses it");
    }

    /** Another process's root that a command can open through /proc: a path out of a sandbox's root. */
    private static Row processRoots(Map<String, String> f) {
        if (!f.containsKey("foreign_roots")) {
            return new Row("process roots", Verdict.NOT_APPLICABLE, "no /proc on the target");
        }
        String pids = f.get("foreign_roots").trim();
        if (pids.isEmpty()) {
            return new Row("process roots", Verdict.CONTAINED_ENFORCED, "every process whose root a command can open"
                    + " has the command's own root");
        }
        String[] list = pids.split(" ");
        return new Row("process roots", Verdict.LEAKS, "a command can open the root of " + list.length + " process(es)"
                + " with another root (/proc/PID/root, PID " + String.join(", ", java.util.Arrays.asList(list).subList(0,
                Math.min(5, list.length))) + (list.length > 5 ? ", ..." : "") + "): a path around its own");
    }

    private static Row jvmEnvironment(Map<String, String> f) {
        if (!"1".equals(f.get("jvm_visible"))) {
            return new Row("JVM environment", f.containsKey("jvm_visible") ? Verdict.CONTAINED_ENFORCED : Verdict.NOT_APPLICABLE,
                    f.containsKey("jvm_visible") ? "Airlock's JVM is not visible here" : "the JVM is not on the target");
        }
        return "1".equals(f.get("jvm_environ"))
                ? new Row("JVM environment", Verdict.LEAKS, "a command reads /proc/PID/environ of Airlock's JVM: the"
                        + " secrets stripped from children are there")
                : new Row("JVM environment", Verdict.CONTAINED_ENFORCED, "the JVM is visible, but its environment is not readable");
    }

    private static Row otherStdin(Map<String, String> f) {
        if (!f.containsKey("sibling_stdin")) {
            return new Row("other stdin", Verdict.NOT_APPLICABLE, "no /proc on the target");
        }
        return "1".equals(f.get("sibling_stdin"))
                ? new Row("other stdin", Verdict.LEAKS, "a command read another exec's stdin through /proc/PID/fd/0")
                : new Row("other stdin", Verdict.CONTAINED_ENFORCED, "another exec's stdin was out of reach");
    }

    private static Row passwdHome(Map<String, String> f) {
        String pw = f.getOrDefault("passwd_home", "");
        if (pw.isEmpty()) {
            return new Row("passwd home", Verdict.NOT_APPLICABLE, "the user has no entry in the user database");
        }
        return "1".equals(f.get("passwd_home_w"))
                ? new Row("passwd home", Verdict.LEAKS, "the user database's home " + pw + " is writable: programs that"
                        + " ignore HOME (ssh-keygen, say) write there")
                : new Row("passwd home", Verdict.CONTAINED_ENFORCED, "the user database's home " + pw + " is read-only here");
    }

    private static Row sessions(Map<String, String> f) {
        if (!f.containsKey("survivors")) {
            return new Row("setsid job", Verdict.NOT_APPLICABLE, "no setsid on the target to try");
        }
        int n = Integer.parseInt(f.get("survivors"));
        return n > 0
                ? new Row("setsid job", Verdict.LEAKS, "a job started with setsid outlived its exec (doctor killed it)")
                : new Row("setsid job", Verdict.CONTAINED_ENFORCED, "a job started with setsid ended with its exec");
    }

    private static Row ownState(Map<String, String> f) {
        if (!f.containsKey("state_w")) {
            return new Row("Airlock's state", Verdict.NOT_APPLICABLE, "Airlock's files are not on the target");
        }
        String w = f.get("state_w").trim();
        return w.isEmpty()
                ? new Row("Airlock's state", Verdict.CONTAINED_ENFORCED, "a command can write none of Airlock's config,"
                        + " approvals or program files")
                : new Row("Airlock's state", Verdict.LEAKS, "a command can write Airlock's own files (the command guard"
                        + " denies it, a program need not ask): " + String.join(", ", w.split(" ")) + "; a change to the"
                        + " config or approvals made while commands run is ignored and put back at close, but a process"
                        + " that outlives the environment, or a change to the program files, is not undone");
    }

    /** A read-only root: the sign of a sandbox that made its own /tmp and /run. */
    /**
     * Whether a mount shows a temp dir of the environment's own: its root (the dir of its
     * filesystem it shows) is {@code sandbox-tmp} or {@code sandbox-tmp-N} right inside the private dir. The root is
     * relative to that filesystem, so only the private dir's own name is compared.
     */
    private static boolean ownTempDir(Target target, String mountRoot) {
        String privateName = java.nio.file.Path.of(strip(target.privateDir())).getFileName() == null ? ""
                : java.nio.file.Path.of(strip(target.privateDir())).getFileName().toString();
        return !privateName.isEmpty() && mountRoot.matches(".*/" + java.util.regex.Pattern.quote(privateName) + "/sandbox-tmp(-[0-9]+)?");
    }

    private static boolean sandboxed(Map<String, String> f) {
        return "1".equals(f.get("root_ro"));
    }

    private static int count(Map<String, String> f, String key) {
        try {
            return Integer.parseInt(f.getOrDefault(key, "0").trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static boolean freshRun(Map<String, String> f) {
        return sandboxed(f) && "tmpfs".equals(f.get("run_fs"));
    }

    private static String strip(String path) {
        String p = path;
        while (p.length() > 1 && p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        return p;
    }
}
