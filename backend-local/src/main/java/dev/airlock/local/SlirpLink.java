package dev.airlock.local;

import dev.airlock.BackendUnavailableException;
import dev.airlock.NetworkMode;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The way out of an allowlisted environment's network namespace: slirp4netns attached to the
 * {@link NetworkAnchor}'s namespace, giving it one interface ({@code tap0}, {@code 10.0.2.100/24},
 * default route via {@code 10.0.2.2}) whose packets slirp4netns, a process on the host's network,
 * turns into ordinary sockets of this user. What may leave is decided inside the namespace by the
 * anchor's {@link AllowlistFilter}, loaded before this link exists.
 *
 * <p>Why slirp4netns and not pasta (both are installed where rootless containers run): slirp4netns
 * gives a fixed address plan whatever the host's interfaces are (so the filter's rules and the host
 * loopback's name, {@code 10.0.2.2}, never depend on the machine), switches that relay off
 * ({@code --disable-host-loopback}) and its DNS off ({@code --disable-dns}), confines itself
 * ({@code --enable-sandbox}: its own mount namespace, no capabilities; and, where it was built with
 * libseccomp, {@code --enable-seccomp}, see {@link #seccomp}), says when the interface is up ({@code --ready-fd}) and ends when a
 * descriptor closes ({@code --exit-fd}). Pasta copies the host's addresses and routes into the
 * namespace, which makes what a rule names depend on the machine it runs on.
 *
 * <p>It is started by this JVM after the anchor's ready line, attached through this JVM's descriptors
 * on the namespaces (not the anchor's pid, see {@link NetworkAnchor}), in a session of its own. Its
 * stdin is a pipe from this JVM and its {@code --exit-fd}: if this JVM dies without closing, the pipe
 * ends and so does slirp4netns. {@link #close} ends it by its pid.
 */
final class SlirpLink implements AutoCloseable {
    /** How long slirp4netns may take to configure its interface before open gives up on it. */
    private static final java.time.Duration READY_BOUND = java.time.Duration.ofSeconds(30);

    private final Process slirp;

    private SlirpLink(Process slirp) {
        this.slirp = slirp;
    }

    /** Whether slirp4netns is on PATH. */
    static boolean available() {
        return dev.airlock.spi.HostPrograms.find("slirp4netns").isPresent();
    }

    /**
     * Attaches slirp4netns to the namespace at {@code netns} and waits for its interface to be up.
     *
     * @param userns the user namespace owning it, when not the host's
     * @param hostLoopback whether {@code 10.0.2.2} relays to the host's loopback (only when the list names a port there)
     */
    static SlirpLink start(String netns, java.util.Optional<String> userns, boolean hostLoopback) {
        String binary = dev.airlock.spi.HostPrograms.find("slirp4netns").map(Path::toString).orElseThrow(() -> missing());
        List<String> argv = new ArrayList<>();
        dev.airlock.spi.HostPrograms.onPath("setsid").ifPresent(s -> argv.add(s.toString()));
        argv.addAll(List.of(binary, "--configure", "--mtu=65520", "--ready-fd=1", "--exit-fd=0", "--disable-dns",
                "--enable-sandbox", "--netns-type=path"));
        if (seccomp(binary)) {
            argv.add("--enable-seccomp");
        }
        userns.ifPresent(u -> argv.add("--userns-path=" + u));
        if (!hostLoopback) {
            argv.add("--disable-host-loopback");
        }
        argv.addAll(List.of(netns, "tap0"));
        Path log;
        Process p;
        try {
            log = Files.createTempFile("airlock-slirp4netns-", ".log");
            p = new ProcessBuilder(argv).redirectError(log.toFile()).start();
        } catch (IOException e) {
            throw unavailable(e.getMessage());
        }
        // Bounded: slirp4netns that neither says it is ready nor exits is ended, which ends its stdout too.
        java.util.concurrent.atomic.AtomicBoolean late = new java.util.concurrent.atomic.AtomicBoolean();
        Thread watchdog = new Thread(() -> {
            try {
                if (!p.waitFor(READY_BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                    late.set(true);
                    p.destroyForcibly();
                }
            } catch (InterruptedException ready) {
                // ready in time
            }
        }, "airlock-slirp4netns-ready");
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            InputStream out = p.getInputStream();
            int b;
            while ((b = out.read()) != -1 && b != '1') {
                // --ready-fd writes "1" once tap0 is configured; nothing else goes to stdout
            }
            watchdog.interrupt();
            if (b == '1' && !late.get()) {
                return new SlirpLink(p);
            }
            end(p);
            if (late.get()) {
                throw unavailable("it did not say it was ready within " + READY_BOUND.toSeconds() + " s");
            }
            String said = Files.readString(log, StandardCharsets.UTF_8).strip().replace('\n', ' ');
            throw unavailable(said.isEmpty() ? "it exited " + p.exitValue() : said.substring(0, Math.min(300, said.length())));
        } catch (IOException e) {
            end(p);
            throw unavailable(e.getMessage());
        } finally {
            try {
                Files.deleteIfExists(log);
            } catch (IOException e) {
                // a temp file of a few lines; the OS's temp cleaning takes it
            }
        }
    }

    /** What {@link #seccomp} found, per binary: the answer does not change while this JVM runs. */
    private static final java.util.Map<String, Boolean> SECCOMP = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Whether {@code binary} can filter its own system calls ({@code --enable-seccomp}): built with
     * libseccomp, which its {@code --version} names ({@code libseccomp: 2.5.4}). slirp4netns parses
     * every packet a command sends out; the filter denies a flaw in that parser (libslirp has had
     * several) the calls that would take it further (execve, ptrace, mount, setns, unshare and
     * their kin), on top of {@code --enable-sandbox}. Its help calls the option experimental; a
     * binary built without libseccomp refuses it, so it is asked for only where the library is there.
     */
    static boolean seccomp(String binary) {
        return SECCOMP.computeIfAbsent(binary, b -> {
            try {
                Process p = new ProcessBuilder(b, "--version").redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                        .redirectErrorStream(true).start();
                // Its version is a few lines, well within a pipe's buffer: waited for first, so the bound holds.
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    return false;
                }
                byte[] out = p.getInputStream().readNBytes(4096);
                return p.exitValue() == 0 && java.util.regex.Pattern.compile("(?m)^libseccomp: [0-9]")
                        .matcher(new String(out, StandardCharsets.UTF_8)).find();
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        });
    }

    /** Slirp4netns's pid, as this host sees it. */
    long pid() {
        return slirp.pid();
    }

    /** Ends slirp4netns by its pid (its interface goes with it); idempotent. */
    @Override
    public void close() {
        end(slirp);
    }

    private static void end(Process p) {
        p.destroy();
        try {
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static BackendUnavailableException missing() {
        return new BackendUnavailableException(NetworkMode.KEY + "=allowlist on the local backend needs slirp4netns on"
                + " PATH for the environment's way out; install slirp4netns, or open with " + NetworkMode.KEY + "=off");
    }

    private static BackendUnavailableException unavailable(String why) {
        return new BackendUnavailableException(NetworkMode.KEY + "=allowlist cannot attach slirp4netns to the environment's"
                + " own network here (" + why.strip().replace('\n', ' ') + "); open with " + NetworkMode.KEY + "=off, or use"
                + " the docker backend");
    }
}
