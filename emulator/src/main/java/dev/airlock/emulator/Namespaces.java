package dev.airlock.emulator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One sandbox's own pid and network namespaces, shared by all of its commands: an anchor
 * ({@code bwrap --unshare-pid --unshare-net ... sleep infinity}, with bwrap as the namespace's init
 * reaping orphans) whose network namespace every command's bwrap runs in, and whose pid namespace
 * the command itself is forked into last (so bwrap stays outside it). A command
 * sees the sandbox's processes only (so it cannot signal the emulator's JVM, or any host process)
 * and a loopback of its own (so it cannot reach the emulator's port or any other host listener),
 * while a background process started by one exec is still there for the next, as in a real
 * sandbox. Ending the anchor ends the namespace, and the kernel kills everything left in it.
 *
 * <p>Only for a root emulator ({@code nsenter} into namespaces needs CAP_SYS_ADMIN, which CI has);
 * otherwise commands share the host's namespaces as before, which {@link EmulatedSandbox#toString()} says.
 */
final class Namespaces implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Namespaces.class);

    private final Process anchor;
    private final long init;

    private Namespaces(Process anchor, long init) {
        this.anchor = anchor;
        this.init = init;
    }

    /** Starts the anchor, or says why not (empty: commands then run in the host's namespaces). */
    static Optional<Namespaces> start(Path bwrap) {
        Optional<Path> nsenter = SandboxIsolation.onPath("nsenter");
        if (!"root".equals(System.getProperty("user.name")) || nsenter.isEmpty()) {
            return Optional.empty();
        }
        try {
            Process p = new ProcessBuilder(bwrap.toString(), "--dev-bind", "/", "/", "--proc", "/proc", "--unshare-pid",
                    "--unshare-net", "--", "sleep", "infinity")
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (p.isAlive() && System.nanoTime() < until) {
                // The sleep is in every namespace the anchor made (pid, net and its mount of /proc).
                Optional<ProcessHandle> sleep = p.toHandle().descendants()
                        .filter(h -> h.info().command().map(c -> c.endsWith("/sleep")).orElse(false)).findFirst();
                if (sleep.isPresent() && inOtherPidNamespace(sleep.get().pid())) {
                    return Optional.of(new Namespaces(p, sleep.get().pid()));
                }
                Thread.sleep(10);
            }
            p.destroyForcibly();
            LOG.warn("the sandbox namespaces did not come up; commands share the host's");
        } catch (IOException e) {
            LOG.warn("cannot start the sandbox namespaces ({}); commands share the host's", e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return Optional.empty();
    }

    private static boolean inOtherPidNamespace(long pid) {
        try {
            return !Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "ns", "pid"))
                    .equals(Files.readSymbolicLink(Path.of("/proc/self/ns/pid")));
        } catch (IOException e) {
            return false;
        }
    }

    /** The argv prefix that runs the rest in the sandbox's network namespace (no fork). */
    List<String> enterNet() {
        return List.of("nsenter", "--target", Long.toString(init), "--net", "--");
    }

    /**
     * The argv prefix that forks the rest into the sandbox's pid namespace (nsenter waits and passes
     * on its status), gives it a /proc of that namespace (so it sees the sandbox's processes only),
     * and drops what those two steps needed from the bounding set: the command has the four
     * capabilities bwrap gave it, nothing more.
     */
    List<String> enterPid() {
        return List.of("nsenter", "--target", Long.toString(init), "--pid", "--", "unshare", "--mount-proc", "--",
                "setpriv", "--bounding-set=-all,+chown,+dac_override,+fowner,+fsetid", "--");
    }

    /** Ends the anchor: its init dies, and with it every process of the namespace. */
    @Override
    public void close() {
        anchor.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
        anchor.destroyForcibly();
        try {
            anchor.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
