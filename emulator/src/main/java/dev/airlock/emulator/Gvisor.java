package dev.airlock.emulator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One sandbox as a gVisor container ({@code runsc}, Debian's package): its commands run on
 * gVisor's own kernel (the sentry), which alone talks to the host's, through a narrow seccomp
 * profile of its own, with host files served by a separate gofer process. The container's root is
 * the sandbox's directory, served with {@code --file-access=shared} so a file the file API writes
 * on the host is what a command reads, and the other way round; the host's system dirs are bound
 * read-only; the network is none (only the sentry's own loopback, no host socket of any kind).
 *
 * <p>Its state lives in a directory of its own beside the sandbox root ({@code --root}, the
 * bundle, one {@code process.json} per running command, mode 0700: a command's environment is
 * never on a host command line), and its container id is unique on the host, since runsc names
 * its control socket after it in the host-wide abstract namespace. Each command is a {@code runsc
 * exec}, whose process is the leader of a new session inside the container (pid 0 is its parent,
 * as with a service's exec); {@link #signalGroup} signals that group from inside, since a signal
 * to the exec client on the host does not reach it. {@link #close} kills every process, deletes
 * the container and its state, and kills whatever runsc process of it is still on the host.
 */
final class Gvisor implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Gvisor.class);

    private final Path runsc;
    private final Path dir;
    private final String id;

    private Gvisor(Path runsc, Path dir, String id) {
        this.runsc = runsc;
        this.dir = dir;
        this.id = id;
    }

    /**
     * Starts the container for {@code root} with {@code systemDirs} (names under {@code /}) bound
     * read-only; its state goes to {@code root}'s sibling {@code NAME.gvisor}.
     *
     * @throws IOException when runsc does not start it (the message says why, in one line)
     */
    static Gvisor start(Path runsc, Path root, List<String> systemDirs, java.util.Map<String, Path> overlays) throws IOException {
        Path dir = root.resolveSibling(root.getFileName() + ".gvisor");
        Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Gvisor g = new Gvisor(runsc, dir, "airlock-" + UUID.randomUUID());
        try {
            Files.createDirectories(g.bundle());
            Files.createDirectories(g.state());
            Files.createDirectories(g.execs());
            Files.writeString(g.bundle().resolve("config.json"), OciSpec.config(root.toString(), systemDirs, overlays));
            Optional<String> failed = g.runsc(30, "run", "--detach", "--bundle", g.bundle().toString(), g.id);
            if (failed.isPresent()) {
                throw new IOException("the gVisor sandbox did not start (" + failed.get() + ")");
            }
            return g;
        } catch (IOException | RuntimeException e) {
            g.close();
            throw e;
        }
    }

    /** The container's id (runsc's name for it; unique on the host). */
    String id() {
        return id;
    }

    /**
     * The host argv that runs {@code argv} in the container in {@code cwd} with exactly {@code env}:
     * a {@code runsc exec} client, which passes its stdin, stdout and stderr through and exits with
     * the command's status. {@code execId} names the command for {@link #signalGroup} and
     * {@link #forget}.
     */
    List<String> exec(String execId, List<String> argv, String cwd, Map<String, String> env) throws IOException {
        Path spec = execs().resolve(execId + ".json");
        Files.writeString(spec, OciSpec.process(argv, cwd, env), StandardCharsets.UTF_8);
        List<String> a = base();
        a.addAll(List.of("exec", "--internal-pid-file", pidFile(execId).toString(), "--process", spec.toString(), id));
        return a;
    }

    /**
     * Sends {@code signal} to the command's process group inside the container (the group a
     * command's background jobs share; one that called {@code setsid} is left to {@link #close},
     * as under bubblewrap). Waits briefly for the command to have started; does nothing once
     * {@code client} has exited.
     */
    void signalGroup(String execId, int signal, Process client) {
        Optional<Long> pgid = Optional.empty();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (pgid.isEmpty() && client.isAlive() && System.nanoTime() < until && !Thread.currentThread().isInterrupted()) {
            pgid = readPid(pidFile(execId));
            if (pgid.isEmpty()) {
                sleep(10);
            }
        }
        if (pgid.isPresent() && client.isAlive()) {
            // The shell's kill inside: an exec carries no capability, but is the same uid as the command.
            String group = "-" + pgid.get();
            runsc(10, "exec", id, "sh", "-c", "kill -" + signal + " " + group).ifPresent(
                    why -> LOG.warn("signal {} to group {} in {}: {}", signal, group, id, why));
        }
    }

    /** Drops a finished command's files (its process.json holds its environment). */
    void forget(String execId) {
        try {
            Files.deleteIfExists(execs().resolve(execId + ".json"));
            Files.deleteIfExists(pidFile(execId));
        } catch (IOException e) {
            LOG.debug("cannot remove {}'s files: {}", execId, e.getMessage());
        }
    }

    /** Host pids of this container's runsc processes: the sentry, the gofer, any client. */
    List<Long> hostPids() {
        String flag = "--root=" + state();
        List<Long> out = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : (Iterable<Path>) procs::iterator) {
                String n = p.getFileName().toString();
                if (n.chars().allMatch(Character::isDigit)) {
                    try {
                        String cmd = new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8);
                        if (List.of(cmd.split("\0")).contains(flag)) {
                            out.add(Long.parseLong(n));
                        }
                    } catch (IOException gone) {
                        // exited meanwhile
                    }
                }
            }
        } catch (IOException e) {
            // no /proc: runsc delete is all there is
        }
        return out;
    }

    /** Kills every process in the container, deletes it, kills any runsc process of it left, removes its state. */
    @Override
    public void close() {
        runsc(10, "kill", "--all", id, "9");
        runsc(30, "delete", "--force", id).ifPresent(why -> LOG.debug("runsc delete {}: {}", id, why));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (List<Long> left = hostPids(); !left.isEmpty() && System.nanoTime() < until; left = hostPids()) {
            left.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
            sleep(20);
        }
        try {
            EmulatedSandbox.deleteTree(dir);
        } catch (IOException e) {
            LOG.warn("cannot remove the gVisor state {}: {}", dir, e.getMessage());
        }
    }

    private Path bundle() {
        return dir.resolve("bundle");
    }

    private Path state() {
        return dir.resolve("state");
    }

    private Path execs() {
        return dir.resolve("exec");
    }

    private Path pidFile(String execId) {
        return execs().resolve(execId + ".pid");
    }

    private List<String> base() {
        return new ArrayList<>(List.of(runsc.toString(), "--root=" + state(), "--network=none", "--file-access=shared"));
    }

    /**
     * Runs one runsc subcommand to its end; empty when it succeeded, else the last line it said.
     * Its stderr goes to a file, not a pipe: a detached container keeps the pipe open for good.
     */
    private Optional<String> runsc(int seconds, String... args) {
        List<String> argv = base();
        argv.addAll(List.of(args));
        Path err = null;
        try {
            err = Files.createTempFile(dir, "runsc-", ".err");
            Process p = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(err.toFile()).start();
            if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return Optional.of("runsc " + args[0] + " did not finish within " + seconds + " s");
            }
            if (p.exitValue() == 0) {
                return Optional.empty();
            }
            String said = Files.readString(err, StandardCharsets.UTF_8).strip();
            return Optional.of("runsc " + args[0] + ": "
                    + (said.isEmpty() ? "exit " + p.exitValue() : said.lines().reduce((x, y) -> y).orElseThrow()));
        } catch (IOException e) {
            return Optional.of("cannot run " + runsc + " (" + e.getMessage() + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted while running runsc " + args[0]);
        } finally {
            if (err != null) {
                try {
                    Files.deleteIfExists(err);
                } catch (IOException ignored) {
                    // removed with the state dir
                }
            }
        }
    }

    private static Optional<Long> readPid(Path file) {
        try {
            String s = Files.readString(file).strip();
            return s.isEmpty() ? Optional.empty() : Optional.of(Long.parseLong(s));
        } catch (IOException | NumberFormatException e) {
            return Optional.empty();
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
