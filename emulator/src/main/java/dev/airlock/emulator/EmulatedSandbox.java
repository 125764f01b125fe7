package dev.airlock.emulator;

import dev.airlock.NoSuchPathException;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One emulated cloud sandbox: its own root directory, its commands in their own process groups,
 * and files with real modes and owners.
 *
 * <p>Under bubblewrap the root directory is the sandbox's {@code /} (writable, so {@code /tmp},
 * {@code /work} or {@code /anything} written by a command lands inside it), with the host's
 * {@code /usr} and {@code /etc} bound read-only for programs, its own {@code /dev}, new IPC and
 * UTS namespaces, and capabilities dropped except the four file ones a container keeps (chown,
 * dac_override, fowner, fsetid). It shares the host's PID namespace on purpose: background
 * processes outlive the exec that started them, as in a real sandbox, until {@link #stop()}. Without bwrap commands run as
 * plain processes with their working directory, HOME and TMPDIR inside the root; absolute writes
 * then reach the host, which {@link SandboxIsolation#describe()} says.
 *
 * <p>{@link #stop()} kills every process group the sandbox started, then every process that
 * still carries its marker variable, and waits for them to go. The file methods resolve paths as
 * a chroot would (a symlink to {@code /etc} means the sandbox's /etc), so no path or link can
 * reach the host outside the root except the read-only system dirs.
 */
public final class EmulatedSandbox implements AutoCloseable {
    /** The variable every process of a sandbox inherits; the stop sweep looks for it. */
    public static final String MARKER = "AIRLOCK_EMULATOR_SANDBOX";
    /** System dirs seen through from the host, read-only. */
    private static final List<String> SYSTEM = List.of("usr", "etc", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "opt");
    private static final Set<PosixFilePermission> DIR_0755 = PosixFilePermissions.fromString("rwxr-xr-x");

    /** A command as a client sent it: recorded in the journal before it runs. */
    public record Command(String call, List<String> argv, String cwd, Map<String, String> env, String dispatchKey,
                          long requestBytes, Optional<Fault> fault) {
        public Command {
            Objects.requireNonNull(call, "call");
            argv = List.copyOf(argv);
            if (argv.isEmpty()) {
                throw new IllegalArgumentException("argv is empty");
            }
            Objects.requireNonNull(cwd, "cwd");
            env = Map.copyOf(env);
            Objects.requireNonNull(dispatchKey, "dispatchKey");
            Objects.requireNonNull(fault, "fault");
        }

        /** {@code sh -c script} in {@code cwd}. */
        public static Command shell(String call, String script, String cwd, Map<String, String> env, String dispatchKey) {
            return new Command(call, List.of("sh", "-c", script), cwd, env, dispatchKey, script.length(), Optional.empty());
        }
    }

    private final String id;
    private final String image;
    private final Path root;
    private final String home;
    private final SandboxIsolation isolation;
    private final CallJournal journal;
    private final String marker = UUID.randomUUID().toString();
    private final Set<SandboxProcess> processes = ConcurrentHashMap.newKeySet();
    private final Object lifecycle = new Object();
    private boolean stopped;
    /** The sandbox's own pid and network namespaces (see {@link Namespaces}); empty without them. */
    private Optional<Namespaces> namespaces;

    private EmulatedSandbox(String id, String image, Path root, String home, SandboxIsolation isolation, CallJournal journal) {
        this.id = id;
        this.image = image;
        this.root = root;
        this.home = home;
        this.isolation = isolation;
        this.journal = journal;
    }

    /**
     * Creates the sandbox's root at {@code root} (which must not exist yet) with the usual top
     * level ({@code /tmp} 1777, {@code home}, the system links), recording {@code image} by
     * name only: nothing is pulled.
     */
    public static EmulatedSandbox create(String id, String image, Path root, String home, SandboxIsolation isolation,
                                         CallJournal journal) {
        if (!home.startsWith("/")) {
            throw new IllegalArgumentException("home must be absolute: " + home);
        }
        try {
            Files.createDirectories(root.getParent());
            Files.createDirectory(root);
            Files.setPosixFilePermissions(root, DIR_0755);
            Path tmp = Files.createDirectories(root.resolve("tmp"));
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxrwxrwx"));
            // Sticky bit: NIO cannot set it, chmod can.
            new ProcessBuilder("chmod", "1777", tmp.toString()).start().waitFor(10, TimeUnit.SECONDS);
            Files.createDirectories(root.resolve(home.substring(1)));
            Files.createDirectories(root.resolve("var/tmp"));
            for (String d : SYSTEM) {
                Path host = Path.of("/", d);
                if (Files.isSymbolicLink(host)) {
                    Files.createSymbolicLink(root.resolve(d), Files.readSymbolicLink(host)); // usr merge: bin -> usr/bin
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the sandbox root " + root, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating " + root, e);
        }
        return new EmulatedSandbox(id, image, root, home, isolation, journal);
    }

    public String id() {
        return id;
    }

    /** The image name the client asked for; recorded, never pulled. */
    public String image() {
        return image;
    }

    public Path root() {
        return root;
    }

    public String home() {
        return home;
    }

    public boolean isolated() {
        return isolation.bwrap().isPresent();
    }

    public boolean stopped() {
        synchronized (lifecycle) {
            return stopped;
        }
    }

    /** Records the command in the journal, then starts it. A stopped sandbox refuses. */
    public SandboxProcess exec(Command c) throws IOException {
        journal.dispatch(c.call(), id, c.argv().size() == 3 && c.argv().get(1).equals("-c") ? c.argv().get(2) : String.join(" ", c.argv()),
                c.argv(), new ArrayList<>(c.env().keySet()), c.requestBytes(), c.dispatchKey(), c.fault());
        synchronized (lifecycle) {
            if (stopped) {
                throw new IllegalStateException("sandbox " + id + " is stopped");
            }
            if (namespaces == null) {
                namespaces = isolated() ? Namespaces.start(isolation.bwrap().get()) : Optional.empty();
            }
            ProcessBuilder pb = new ProcessBuilder(argv(c));
            Map<String, String> env = pb.environment();
            env.clear();
            env.put("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
            env.put("HOME", isolated() ? home : root.resolve(home.substring(1)).toString());
            if (!isolated()) {
                env.put("TMPDIR", root.resolve("tmp").toString());
            }
            env.putAll(c.env());
            env.put(MARKER, marker);
            if (!isolated()) {
                pb.directory(hostDir(c.cwd()).toFile());
            }
            Process p = pb.start();
            SandboxProcess sp = new SandboxProcess(p, this);
            processes.add(sp);
            p.onExit().thenRun(() -> processes.remove(sp));
            return sp;
        }
    }

    private List<String> argv(Command c) {
        List<String> a = new ArrayList<>();
        a.add("setsid"); // its own process group, so a kill takes the whole tree
        if (isolated()) {
            namespaces.ifPresent(n -> a.addAll(n.enterNet()));
            a.add(isolation.bwrap().get().toString());
            a.addAll(List.of("--bind", root.toString(), "/"));
            for (String d : SYSTEM) {
                Path host = Path.of("/", d);
                if (Files.isDirectory(host, LinkOption.NOFOLLOW_LINKS)) {
                    a.addAll(List.of("--ro-bind", host.toString(), host.toString()));
                }
            }
            // No --unshare-pid per exec: a pid namespace dies with its exec, and a real sandbox keeps a
            // background process (a server started by one exec, used by the next) until it stops. The
            // sandbox-wide namespaces entered above give that, and hide the host's processes and loopback.
            // With the sandbox's namespaces, bwrap runs outside its pid namespace and the command enters it
            // last (nsenter forks it in, and it mounts the sandbox's /proc): bwrap, whose status is the
            // exec's, is then no process the command can see, signal or write into, as with a service's exec.
            a.addAll(List.of("--dev", "/dev", "--proc", "/proc", "--unshare-ipc", "--unshare-uts"));
            if ("root".equals(System.getProperty("user.name"))) {
                // Only a privileged bwrap takes --cap-*; an unprivileged one has no capabilities to drop.
                a.addAll(List.of("--cap-drop", "ALL", "--cap-add", "CAP_CHOWN", "--cap-add", "CAP_DAC_OVERRIDE",
                        "--cap-add", "CAP_FOWNER", "--cap-add", "CAP_FSETID"));
                if (namespaces.isPresent()) {
                    // For nsenter (the anchor keeps more capabilities than this) and the /proc mount, then
                    // dropped from the bounding set before the command (root's exec gets that set).
                    a.addAll(List.of("--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SYS_PTRACE", "--cap-add", "CAP_SETPCAP"));
                }
            }
            a.addAll(List.of("--chdir", c.cwd(), "--"));
            namespaces.ifPresent(n -> a.addAll(n.enterPid()));
        }
        // A service's sandbox starts its commands with default signal dispositions, whatever this
        // JVM inherited (under nohup SIGHUP is ignored, and children would inherit that).
        a.addAll(DEFAULT_SIGNALS);
        a.addAll(c.argv());
        return a;
    }

    /** {@code env --default-signal=...} where this host's env has the option, else nothing. */
    private static final List<String> DEFAULT_SIGNALS = defaultSignals();

    private static List<String> defaultSignals() {
        List<String> prefix = List.of("env", "--default-signal=HUP,INT,QUIT,PIPE,TERM");
        try {
            List<String> probe = new ArrayList<>(prefix);
            probe.add("true");
            Process p = new ProcessBuilder(probe).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0 ? prefix : List.of();
        } catch (IOException e) {
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }

    private Path hostDir(String cwd) {
        Path d = resolve(cwd).host();
        if (!Files.isDirectory(d)) {
            throw new NoSuchPathException(cwd);
        }
        return d;
    }

    /**
     * Stops the sandbox once: SIGKILL to every process group it started, then to every process
     * that still carries its marker, until none is left (bounded). Later calls do nothing.
     */
    public void stop() {
        synchronized (lifecycle) {
            if (stopped) {
                return;
            }
            stopped = true;
        }
        for (SandboxProcess p : processes) {
            ProcessGroups.signal(p.pgid(), 9);
        }
        Optional<Namespaces> ns;
        synchronized (lifecycle) {
            ns = namespaces == null ? Optional.empty() : namespaces;
        }
        ns.ifPresent(Namespaces::close); // the namespace's init goes, and the kernel kills every process in it
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            List<Long> left = ProcessGroups.withMarker(MARKER, marker);
            if (left.isEmpty()) {
                break;
            }
            for (long pid : left) {
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        for (SandboxProcess p : processes) {
            try {
                p.process().waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
    }

    /** Stops the sandbox and removes its root. */
    @Override
    public void close() {
        stop();
        try {
            deleteTree(root);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove the sandbox root " + root, e);
        }
    }

    // ---- files, as the service's file API sees them -------------------------------------------

    /** Where a sandbox path lives on the host, and whether the sandbox may change it. */
    public record Location(Path host, boolean readOnly) {
    }

    /**
     * Resolves an absolute sandbox path as a chroot would: {@code ..} stops at the root, symlinks
     * are followed inside the sandbox (an absolute target starts again at the sandbox's root), the
     * last component is followed too. System dirs resolve to the host's, read-only.
     */
    public Location resolve(String sandboxPath) {
        return resolve(sandboxPath, true);
    }

    private Location resolve(String sandboxPath, boolean followLast) {
        if (!sandboxPath.startsWith("/")) {
            throw new IllegalArgumentException("not an absolute path: " + sandboxPath);
        }
        Deque<String> todo = new ArrayDeque<>(List.of(sandboxPath.split("/")));
        Path base = root;
        Path cur = root;
        boolean readOnly = false;
        int links = 0;
        while (!todo.isEmpty()) {
            String c = todo.pollFirst();
            if (c.isEmpty() || c.equals(".")) {
                continue;
            }
            if (c.equals("..")) {
                if (!cur.equals(base)) {
                    cur = cur.getParent();
                } else if (readOnly) { // from /usr back up to the sandbox's /
                    cur = root;
                    base = root;
                    readOnly = false;
                }
                continue;
            }
            if (cur.equals(root) && SYSTEM.contains(c) && Files.isDirectory(Path.of("/", c), LinkOption.NOFOLLOW_LINKS)) {
                base = Path.of("/", c);
                cur = base;
                readOnly = true;
                continue;
            }
            Path next = cur.resolve(c);
            if (Files.isSymbolicLink(next) && (followLast || !todo.isEmpty())) {
                if (++links > 40) {
                    throw new IllegalArgumentException("too many levels of symbolic links: " + sandboxPath);
                }
                try {
                    String target = Files.readSymbolicLink(next).toString();
                    List<String> parts = new ArrayList<>(List.of(target.split("/")));
                    for (int i = parts.size() - 1; i >= 0; i--) {
                        todo.addFirst(parts.get(i));
                    }
                    if (target.startsWith("/")) {
                        cur = root;
                        base = root;
                        readOnly = false;
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                continue;
            }
            cur = next;
        }
        return new Location(cur, readOnly);
    }

    /**
     * Writes {@code data} to {@code path} atomically (a temp file beside it, then a rename),
     * creating parents 0755, with {@code mode}. The writer is the emulator's user, as a command's
     * would be.
     */
    public void write(String path, InputStream data, int mode) throws IOException {
        Location l = writable(path, false);
        Path dir = l.host().getParent();
        if (!dir.startsWith(root)) {
            throw new AccessDeniedException(path, null, "read-only file system");
        }
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, ".airlock-upload-", ".part");
        try {
            Files.copy(data, tmp, StandardCopyOption.REPLACE_EXISTING);
            Files.setPosixFilePermissions(tmp, permissions(mode));
            Files.move(tmp, l.host(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    public InputStream read(String path) throws IOException {
        Location l = resolve(path);
        if (!Files.isRegularFile(l.host())) {
            throw new NoSuchFileException(path);
        }
        return Files.newInputStream(l.host());
    }

    public Optional<PosixFileAttributes> stat(String path) {
        try {
            return Optional.of(Files.readAttributes(resolve(path, false).host(), PosixFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    public void mkdirs(String path, int mode) throws IOException {
        Location l = writable(path, true);
        if (!Files.isDirectory(l.host())) {
            Files.createDirectories(l.host());
            Files.setPosixFilePermissions(l.host(), permissions(mode));
        }
    }

    public void chmod(String path, int mode) throws IOException {
        Location l = writable(path, true);
        Files.setPosixFilePermissions(l.host(), permissions(mode));
    }

    /** Deletes a file, a link or (with {@code recursive}) a directory tree; false when missing. */
    public boolean delete(String path, boolean recursive) throws IOException {
        Location l = writable(path, false);
        if (!Files.exists(l.host(), LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        if (Files.isDirectory(l.host(), LinkOption.NOFOLLOW_LINKS) && recursive) {
            deleteTree(l.host());
            return true;
        }
        try {
            Files.delete(l.host());
        } catch (DirectoryNotEmptyException e) {
            throw new DirectoryNotEmptyException(path);
        }
        return true;
    }

    private Location writable(String path, boolean followLast) throws IOException {
        Location l = resolve(path, followLast);
        if (l.readOnly() || !l.host().startsWith(root) || l.host().equals(root)) {
            throw new AccessDeniedException(path, null, "read-only file system");
        }
        return l;
    }

    static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> s = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] bits = {
                PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
                PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
                PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ};
        for (int i = 0; i < bits.length; i++) {
            if ((mode & (1 << i)) != 0) {
                s.add(bits[i]);
            }
        }
        return s;
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
                // A command may have left a directory without write or search permission.
                d.toFile().setWritable(true, true);
                d.toFile().setExecutable(true, true);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                Files.delete(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /** Processes alive right now that belong to this sandbox (by marker). */
    public List<Long> livePids() {
        return ProcessGroups.withMarker(MARKER, marker);
    }

    @Override
    public String toString() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("image", image);
        m.put("root", root);
        m.put("isolation", isolation.describe());
        m.put("namespaces", namespaces == null ? "not yet" : namespaces.isPresent() ? "own pid and network" : "the host's");
        return "EmulatedSandbox" + m;
    }
}
