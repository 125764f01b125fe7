package dev.airlock.emulator;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * How emulated sandboxes get a root of their own. {@code airlock.emulator.isolation}:
 * <ul>
 *   <li>{@code auto} (default): {@code bwrap} where bubblewrap can create its namespaces here,
 *       else {@code unshare}, else {@code none};</li>
 *   <li>{@code bwrap}: bubblewrap (required: an error otherwise), with no capability, no new
 *       privileges and {@link SeccompFilter}; {@code airlock.emulator.bwrap} names the binary;</li>
 *   <li>{@code unshare}: util-linux's {@code unshare}, {@code nsenter} and {@code setpriv}, for a
 *       machine without bubblewrap: the same root, namespaces and dropped capabilities, but no
 *       seccomp filter (nothing here can load one), which {@link #describe()} says;</li>
 *   <li>{@code gvisor}: each sandbox a gVisor container ({@code runsc}, Debian's package, as root):
 *       its commands run on gVisor's own kernel, with no capability, no new privileges and no
 *       network, the files served from the sandbox's directory ({@link Gvisor}); never chosen by
 *       {@code auto} (a command starts slower, and the runsc Debian ships refuses some calls: see
 *       {@link #describe()}); {@code airlock.emulator.runsc} names the binary;</li>
 *   <li>{@code none}: no sandbox can run a command (each exec is refused with the reason): a
 *       command without its own root would write the host's {@code /root} while the file API read
 *       the sandbox's, which is worse than a clear refusal.</li>
 * </ul>
 * In every working mode a command and the file API see the same files at the same paths.
 */
public final class SandboxIsolation {
    public static final String KEY = "airlock.emulator.isolation";
    public static final String BWRAP_KEY = "airlock.emulator.bwrap";
    public static final String RUNSC_KEY = "airlock.emulator.runsc";

    /** The mechanism that gives a sandbox its root. */
    public enum Kind { BWRAP, UNSHARE, GVISOR, NONE }

    private final Kind kind;
    private final Optional<Path> bwrap;
    private final Optional<Path> runsc;
    private final String reason;

    private SandboxIsolation(Kind kind, Optional<Path> bwrap, String reason) {
        this(kind, bwrap, Optional.empty(), reason);
    }

    private SandboxIsolation(Kind kind, Optional<Path> bwrap, Optional<Path> runsc, String reason) {
        this.kind = kind;
        this.bwrap = bwrap;
        this.runsc = runsc;
        this.reason = reason;
    }

    /** No isolation: sandboxes refuse every command, saying {@code reason}. */
    public static SandboxIsolation none(String reason) {
        return new SandboxIsolation(Kind.NONE, Optional.empty(), reason);
    }

    /** The util-linux mode, whether or not bubblewrap is there (tests use it to cover both). */
    public static SandboxIsolation unshare() {
        Optional<String> why = unshareWorks();
        if (why.isPresent()) {
            throw new ConfigurationException(KEY + "=unshare but " + why.get() + "; install bubblewrap or set " + KEY + "=auto");
        }
        return new SandboxIsolation(Kind.UNSHARE, Optional.empty(), unshareReason("chosen"));
    }

    /**
     * The gVisor mode with {@code runsc} (on PATH when empty); refused in one line naming why when
     * runsc is missing or cannot run a sandbox here ({@link GvisorProbe}, once per JVM).
     */
    public static SandboxIsolation gvisor(Optional<Path> runsc) {
        Optional<Path> bin = runsc.or(() -> onPath("runsc"));
        GvisorProbe.Result r = bin.isEmpty() ? GvisorProbe.Result.unusable("runsc is not installed")
                : !Files.isExecutable(bin.get()) ? GvisorProbe.Result.unusable("there is no runsc at " + bin.get())
                : !privileged() ? GvisorProbe.Result.unusable("runsc needs root here (the emulator does not run it rootless)")
                : GvisorProbe.of(bin.get());
        if (r.unusable().isPresent()) {
            throw new ConfigurationException(KEY + "=gvisor but " + r.unusable().get()
                    + "; install Debian's runsc (apt-get install runsc) as root, or set " + KEY + "=auto");
        }
        String version = r.version().isEmpty() ? "" : " " + r.version();
        return new SandboxIsolation(Kind.GVISOR, Optional.empty(), bin, "gvisor (runsc " + bin.get() + version
                + ": gVisor's own kernel, no capability, no new privileges, no network"
                + r.caveat().map(c -> "; " + c).orElse("") + ")");
    }

    /** The mode {@link GvisorProbe} tries, before it knows whether it works. */
    static SandboxIsolation gvisorUnprobed(Path runsc) {
        return new SandboxIsolation(Kind.GVISOR, Optional.empty(), Optional.of(runsc), "gvisor (probing " + runsc + ")");
    }

    public static SandboxIsolation detect(Settings s) {
        String mode = s.getChoice(KEY, "auto", "auto", "bwrap", "unshare", "gvisor", "none");
        if (mode.equals("none")) {
            return none(KEY + "=none");
        }
        if (mode.equals("unshare")) {
            return unshare();
        }
        if (mode.equals("gvisor")) {
            return gvisor(s.get(RUNSC_KEY).map(String::trim).filter(v -> !v.isEmpty()).map(Path::of));
        }
        Optional<Path> bin = s.get(BWRAP_KEY).map(String::trim).filter(v -> !v.isEmpty()).map(Path::of)
                .or(() -> onPath("bwrap"));
        Optional<String> why = bin.isEmpty() ? Optional.of("bwrap is not installed (Debian package bubblewrap)")
                : bwrapWorks(bin.get());
        if (why.isEmpty()) {
            // Commands enter the sandbox's namespaces with nsenter; not as root, in an anchor unshare makes.
            why = privileged() ? missing("nsenter") : unshareWorks();
        }
        if (why.isEmpty()) {
            return new SandboxIsolation(Kind.BWRAP, bin, "bwrap " + bin.get() + ", seccomp, no capability");
        }
        if (mode.equals("bwrap")) {
            throw new ConfigurationException(KEY + "=bwrap but " + why.get() + "; install it or set " + KEY + "=auto");
        }
        Optional<String> noUnshare = unshareWorks();
        if (noUnshare.isEmpty()) {
            return new SandboxIsolation(Kind.UNSHARE, Optional.empty(), unshareReason(why.get()));
        }
        return none(why.get() + ", and " + noUnshare.get() + ": sandboxes cannot run commands here;"
                + " install bubblewrap (apt-get install bubblewrap)");
    }

    private static String unshareReason(String whyNotBwrap) {
        return "unshare (own root, pid, network, IPC and UTS namespaces, no capability; no seccomp filter: "
                + whyNotBwrap + ")";
    }

    public Kind kind() {
        return kind;
    }

    public Optional<Path> bwrap() {
        return bwrap;
    }

    /** The runsc binary, in the gVisor mode. */
    public Optional<Path> runsc() {
        return runsc;
    }

    /** Whether sandboxes can run commands at all (in a root of their own). */
    public boolean runsCommands() {
        return kind != Kind.NONE;
    }

    /** Why not, for a refused exec; empty when they can. */
    public String reason() {
        return reason;
    }

    /** One line for logs and the emulator's banner: which isolation, or why none. */
    public String describe() {
        return kind == Kind.NONE ? "none (" + reason + ")" : reason;
    }

    /** Whether this JVM runs as root: then a bwrap anchor, else an unshare one in a user namespace of this user's. */
    static boolean privileged() {
        return "root".equals(System.getProperty("user.name"));
    }

    private static Optional<String> bwrapWorks(Path bwrap) {
        return probe(List.of(bwrap.toString(), "--ro-bind", "/", "/", "--unshare-pid", "--die-with-parent", "--", "true"),
                "bwrap cannot create its namespaces here", "cannot run " + bwrap);
    }

    private static Optional<String> missing(String tool) {
        return onPath(tool).isPresent() ? Optional.empty() : Optional.of(tool + " is not installed (Debian package util-linux)");
    }

    private static Optional<String> unshareWorks() {
        for (String tool : List.of("unshare", "nsenter", "setpriv")) {
            if (missing(tool).isPresent()) {
                return missing(tool);
            }
        }
        List<String> argv = new ArrayList<>(List.of("unshare"));
        argv.addAll(unshareFlags());
        argv.addAll(List.of("--", "true"));
        return probe(argv, "unshare cannot create its namespaces here", "cannot run unshare");
    }

    /** The namespaces an unshare anchor makes; a user namespace too when this JVM is not root. */
    static List<String> unshareFlags() {
        List<String> f = new ArrayList<>();
        if (!privileged()) {
            f.addAll(List.of("--user", "--map-root-user"));
        }
        f.addAll(List.of("--mount", "--propagation", "private", "--pid", "--fork", "--kill-child", "--net", "--ipc", "--uts"));
        return f;
    }

    private static Optional<String> probe(List<String> argv, String failed, String cannotRun) {
        try {
            Process p = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            byte[] err = p.getErrorStream().readNBytes(2048);
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return Optional.of(argv.get(0) + " did not start within 30 s");
            }
            if (p.exitValue() != 0) {
                String line = new String(err, StandardCharsets.UTF_8).strip().lines().findFirst().orElse("exit " + p.exitValue());
                return Optional.of(failed + " (" + line + ")");
            }
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of(cannotRun + " (" + e.getMessage() + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted while checking " + argv.get(0));
        }
    }

    static Optional<Path> onPath(String name) {
        return dev.airlock.spi.HostPrograms.find(name);
    }
}
