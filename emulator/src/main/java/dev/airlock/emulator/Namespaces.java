package dev.airlock.emulator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One sandbox's own root and namespaces, shared by all of its commands: an anchor process whose
 * root is the sandbox's (its directory as {@code /}, the host's system dirs bound read-only, its
 * own {@code /dev} and {@code /proc}; the host's {@code /} is unmounted from its mount namespace)
 * in new pid, network, IPC and UTS namespaces. Every command enters them with {@code nsenter}
 * (root included), so a command sees the sandbox's processes only, and every one of them, pid 1
 * included, has the sandbox's root: {@code /proc/1/root} leads back into the sandbox, never to
 * the host. A background process started by one exec is still there for the next, as in a real
 * sandbox. Ending the anchor ends the namespace, and the kernel kills everything left in it.
 *
 * <p>Two anchors, one result: {@code bwrap ... sleep infinity} (bwrap's pid 1 reaps orphans), or
 * where bubblewrap is missing, {@code unshare} running a short script that binds, mounts
 * {@code /proc} and {@code /dev}, pivots into the root and stays as a reaping pid 1.
 */
final class Namespaces implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Namespaces.class);
    private static final String READY = "airlock-sandbox-ready";

    /**
     * The unshare anchor's set-up, run as the new namespaces' pid 1 with the host's root still
     * visible; {@code $1} is the sandbox root, then the system dirs to bind read-only, {@code --},
     * then pairs of a host file and the sandbox path it is bound over, read-only (the overlays).
     * Non-recursive binds: the system dirs as they are on disk, not what is mounted over them.
     */
    private static final String UNSHARE_SETUP = String.join("\n",
            "set -eu",
            "r=$1; shift",
            "mount --bind \"$r\" \"$r\"",
            "while [ \"$1\" != -- ]; do d=$1; shift; mkdir -p \"$r/$d\"; mount --bind \"/$d\" \"$r/$d\"; mount -o remount,bind,ro,nosuid \"$r/$d\"; done",
            "shift",
            "while [ $# -gt 0 ]; do mount --bind \"$1\" \"$r$2\"; mount -o remount,bind,ro,nosuid \"$r$2\"; shift 2; done",
            "mkdir -p \"$r/proc\" \"$r/dev\"",
            "mount -t proc -o nosuid,nodev,noexec proc \"$r/proc\"",
            "mount -t tmpfs -o mode=0755,nosuid,noexec airlock-dev \"$r/dev\"",
            "for n in null zero full random urandom tty; do : > \"$r/dev/$n\"; mount --bind \"/dev/$n\" \"$r/dev/$n\"; done",
            "ln -s /proc/self/fd \"$r/dev/fd\"; ln -s fd/0 \"$r/dev/stdin\"; ln -s fd/1 \"$r/dev/stdout\"; ln -s fd/2 \"$r/dev/stderr\"",
            "mkdir \"$r/dev/shm\" \"$r/dev/pts\"",
            "mount -t tmpfs -o mode=1777,nosuid,nodev airlock-shm \"$r/dev/shm\"",
            "if mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts \"$r/dev/pts\" 2>/dev/null; then ln -s pts/ptmx \"$r/dev/ptmx\"; fi",
            // The new network namespace's own loopback starts down (bwrap brings it up): up, so a
            // server in the sandbox is reachable on its 127.0.0.1; it reaches nothing outside.
            // Without iproute2 it stays down (servers in the sandbox then cannot be reached).
            "PATH=$PATH:/usr/sbin:/sbin; if command -v ip >/dev/null; then ip link set lo up; fi",
            "cd \"$r\"",
            "old=.airlock-old-root-$$",
            "mkdir \"$old\"",
            "pivot_root . \"$old\"",
            "umount -l \"/$old\"",
            "rmdir \"/$old\"",
            "cd /",
            "echo " + READY,
            // pid 1 of the namespace: waits, and so reaps every orphan reparented to it.
            "exec sh -c 'while :; do sleep 3600 & wait $!; done' </dev/null >/dev/null 2>&1");

    private final Process anchor;
    private final long target;
    private final SandboxIsolation.Kind kind;

    private Namespaces(Process anchor, long target, SandboxIsolation.Kind kind) {
        this.anchor = anchor;
        this.target = target;
        this.kind = kind;
    }

    /**
     * Starts the anchor for {@code root} with {@code systemDirs} (names under {@code /}) bound
     * read-only, and over them the {@code overlays} (a sandbox path to the host file it shows).
     *
     * @throws IOException when the namespaces do not come up (the message says why)
     */
    static Namespaces start(SandboxIsolation isolation, Path root, List<String> systemDirs, Map<String, Path> overlays)
            throws IOException {
        return switch (isolation.kind()) {
            // Not root, nsenter cannot enter a bwrap anchor's namespaces (its user namespace is not
            // ours to enter): the unshare anchor, made in a user namespace of this user's, serves both.
            case BWRAP -> SandboxIsolation.privileged() ? bwrapAnchor(isolation.bwrap().orElseThrow(), root, systemDirs, overlays)
                    : unshareAnchor(root, systemDirs, overlays, SandboxIsolation.Kind.BWRAP);
            case UNSHARE -> unshareAnchor(root, systemDirs, overlays, SandboxIsolation.Kind.UNSHARE);
            case GVISOR -> throw new IOException("a gVisor sandbox is a runsc container (Gvisor), not namespaces");
            case NONE -> throw new IOException("no isolation: " + isolation.reason());
        };
    }

    private static Namespaces bwrapAnchor(Path bwrap, Path root, List<String> systemDirs, Map<String, Path> overlays)
            throws IOException {
        List<String> argv = new ArrayList<>(List.of(bwrap.toString(), "--bind", root.toString(), "/"));
        argv.addAll(bwrapBinds(systemDirs, overlays));
        argv.addAll(List.of("--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--unshare-net", "--unshare-ipc",
                "--unshare-uts", "--cap-drop", "ALL", "--", "sleep", "infinity"));
        Process p = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (p.isAlive() && System.nanoTime() < until) {
                // The sleep runs once bwrap has pivoted into the root, in every namespace the anchor made.
                Optional<ProcessHandle> sleep = p.toHandle().descendants()
                        .filter(h -> h.info().command().map(c -> c.endsWith("/sleep")).orElse(false)).findFirst();
                if (sleep.isPresent() && inOtherPidNamespace(sleep.get().pid())) {
                    return new Namespaces(p, sleep.get().pid(), SandboxIsolation.Kind.BWRAP);
                }
                Thread.sleep(10);
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while starting the sandbox namespaces");
        }
        p.destroyForcibly();
        throw new IOException("the sandbox namespaces did not come up within 10 s (bwrap exited " + exit(p) + ")");
    }

    private static Namespaces unshareAnchor(Path root, List<String> systemDirs, Map<String, Path> overlays,
                                            SandboxIsolation.Kind kind) throws IOException {
        List<String> argv = new ArrayList<>(List.of("unshare"));
        argv.addAll(SandboxIsolation.unshareFlags());
        argv.addAll(List.of("--", "sh", "-c", UNSHARE_SETUP, "sh", root.toString()));
        argv.addAll(systemDirs);
        argv.add("--");
        overlays.forEach((at, file) -> argv.addAll(List.of(file.toString(), at)));
        Process p = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(true).start();
        // Until the ready line the set-up is still on the host's root: nothing may enter before it.
        StringBuilder said = new StringBuilder();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.equals(READY)) {
                    Optional<ProcessHandle> init = p.toHandle().children().findFirst();
                    if (init.isPresent() && inOtherPidNamespace(init.get().pid())) {
                        return new Namespaces(p, init.get().pid(), kind);
                    }
                    break;
                }
                if (said.length() < 2000) {
                    said.append(line).append(' ');
                }
            }
        }
        p.destroyForcibly();
        throw new IOException("the sandbox namespaces did not come up (unshare: " + said.toString().strip() + ")");
    }

    /** bwrap's read-only binds of the system dirs, then of the overlays over them. */
    private static List<String> bwrapBinds(List<String> systemDirs, Map<String, Path> overlays) {
        List<String> a = new ArrayList<>();
        for (String d : systemDirs) {
            a.addAll(List.of("--ro-bind", "/" + d, "/" + d));
        }
        overlays.forEach((at, file) -> a.addAll(List.of("--ro-bind", file.toString(), at)));
        return a;
    }

    private static String exit(Process p) {
        return p.isAlive() ? "not yet" : Integer.toString(p.exitValue());
    }

    private static boolean inOtherPidNamespace(long pid) {
        try {
            return !Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "ns", "pid"))
                    .equals(Files.readSymbolicLink(Path.of("/proc/self/ns/pid")));
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Drops what is left of root's powers before the command: its capability sets, for good, and
     * with a {@code uid} other than 0 root itself (that uid, its group of the same id, no other).
     */
    private static List<String> dropPrivileges(int uid) {
        List<String> a = new ArrayList<>(List.of("setpriv"));
        if (uid != 0) {
            a.addAll(List.of("--reuid=" + uid, "--regid=" + uid, "--clear-groups"));
        }
        a.addAll(List.of("--no-new-privs", "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--"));
        return a;
    }

    /**
     * The argv that runs a command in the sandbox, in directory {@code cwd} (a sandbox path),
     * before the command's own words. In every chain the command's parent is a process outside the
     * sandbox's pid namespace (it reads as pid 0, as with a service's exec), so no process whose
     * status is the exec's can be seen, signalled, stopped or written into by the command.
     * <ul>
     *   <li>bubblewrap, as root: bwrap of the sandbox's root (from the host, in the sandbox's
     *       network, IPC and UTS namespaces) with only CAP_SYS_ADMIN and CAP_SETPCAP, no new
     *       privileges and {@code seccomp} (descriptor 3, which the caller opens); inside it,
     *       (and CAP_SETUID, CAP_SETGID to become {@code uid}); inside it, {@code nsenter --pid}
     *       forks the rest into the sandbox's pid namespace, {@code unshare --mount-proc} gives it
     *       that namespace's /proc (bwrap's shows the host's), and {@code setpriv} becomes
     *       {@code uid} and empties every capability set;</li>
     *   <li>bubblewrap, not root: nsenter into every namespace of the anchor, its user namespace
     *       and root included (bwrap cannot mount a /proc of the host's pid namespace there), then
     *       bwrap with every capability dropped and seccomp, as the namespace's root whatever
     *       {@code uid} (no other uid is mapped there): here bwrap stays the command's parent
     *       inside the namespace, where a command can signal it;</li>
     *   <li>unshare: nsenter into every namespace and the root (it forks into the pid namespace and
     *       waits outside it), then {@code setpriv}.</li>
     * </ul>
     * {@code waiter} (an {@link ExitWaiter}'s argv, or empty) goes where the command's status is
     * still whole and out of the command's reach: as root with bubblewrap, inside bwrap above the
     * {@code nsenter --pid} (bwrap would turn a signal into 128+N); with unshare, on the host above
     * the nsenter. Not root with bubblewrap, bwrap itself is inside the pid namespace, so the
     * waiter is too, just under it: there a command can reach it, as it can reach bwrap.
     */
    List<String> enter(String cwd, int uid, Path root, Optional<Path> bwrap, List<String> systemDirs,
                       Map<String, Path> overlays, boolean seccomp, List<String> waiter) {
        String t = Long.toString(target);
        List<String> a = new ArrayList<>();
        if (kind == SandboxIsolation.Kind.UNSHARE) {
            a.addAll(waiter);
        }
        a.addAll(List.of("nsenter", "--target", t));
        if (kind == SandboxIsolation.Kind.BWRAP && SandboxIsolation.privileged()) {
            a.addAll(List.of("--net", "--ipc", "--uts", "--", bwrap.orElseThrow().toString(), "--bind", root.toString(), "/"));
            a.addAll(bwrapBinds(systemDirs, overlays));
            a.addAll(List.of("--dev", "/dev", "--proc", "/proc", "--cap-drop", "ALL", "--cap-add", "CAP_SYS_ADMIN",
                    "--cap-add", "CAP_SETPCAP"));
            if (uid != 0) {
                a.addAll(List.of("--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"));
            }
            if (seccomp) {
                a.addAll(List.of("--seccomp", "3"));
            }
            a.addAll(List.of("--chdir", cwd, "--"));
            a.addAll(waiter);
            a.addAll(List.of("nsenter", "--target", t, "--pid", "--", "unshare", "--mount-proc", "--"));
            a.addAll(dropPrivileges(uid));
            return a;
        }
        if (!SandboxIsolation.privileged()) { // the anchor was made by unshare, in a user namespace
            // The anchor's user namespace, where this user is root; its groups cannot be set from outside.
            a.addAll(List.of("--user", "--preserve-credentials"));
        }
        // --root and --wd without a directory: the anchor's own, opened in its mount namespace (a
        // directory opened on the host would leave the command a way out of its root through "..").
        a.addAll(List.of("--pid", "--net", "--ipc", "--uts", "--mount", "--root", "--wd", "--"));
        if (kind == SandboxIsolation.Kind.BWRAP) {
            a.addAll(List.of(bwrap.orElseThrow().toString(), "--bind", "/", "/"));
            a.addAll(bwrapBinds(systemDirs, overlays));
            a.addAll(List.of("--dev", "/dev", "--proc", "/proc", "--cap-drop", "ALL"));
            if (seccomp) {
                a.addAll(List.of("--seccomp", "3"));
            }
            a.addAll(List.of("--chdir", cwd, "--"));
            a.addAll(waiter);
        } else {
            a.addAll(dropPrivileges(uid));
            a.addAll(List.of("env", "-C", cwd));
        }
        return a;
    }

    /** The pid (as the host sees it) of a process in the sandbox's namespaces. */
    long target() {
        return target;
    }

    /** Ends the anchor: its init dies, and with it every process of the namespace. */
    @Override
    public void close() {
        anchor.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
        anchor.destroyForcibly();
        try {
            if (!anchor.waitFor(5, TimeUnit.SECONDS)) {
                LOG.warn("the sandbox anchor {} did not end within 5 s", anchor.pid());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
