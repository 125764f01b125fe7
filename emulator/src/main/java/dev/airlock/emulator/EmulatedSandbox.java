package dev.airlock.emulator;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
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
import java.nio.file.StandardOpenOption;
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
 * <p>The root directory is every command's {@code /} (writable, so {@code /tmp}, {@code /work}
 * or {@code /anything} written by a command lands inside it, where the file API finds it), with
 * the host's system dirs bound read-only for programs and its own {@code /dev} and {@code /proc},
 * in pid, network, IPC and UTS namespaces of the sandbox's own that all its commands share
 * ({@link Namespaces}): background processes outlive the exec that started them, as in a real
 * sandbox, until {@link #stop()}. Commands hold no capability and cannot gain one; under
 * bubblewrap a seccomp filter ({@link SeccompFilter}) refuses what could reach past the sandbox.
 * Under gVisor ({@link Gvisor}) the same root, mounts and namespaces are a runsc container's, and
 * its commands run on gVisor's kernel instead of the host's.
 * {@link SandboxIsolation} says which mechanism, or why there is none (then every exec is refused).
 * How a command ended, a code or the signal that killed it, comes from an {@link ExitWaiter} in its
 * chain ({@link SandboxProcess#exit()}), since every other link folds signal N into 128+N.
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

    /**
     * A command as a client sent it: recorded in the journal before it runs. {@code asRoot}: as
     * root instead of the sandbox's user (Vercel's {@code sudo}).
     */
    public record Command(String call, List<String> argv, String cwd, Map<String, String> env, String dispatchKey,
                          long requestBytes, Optional<Fault> fault, boolean asRoot) {
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

        /** A command as the sandbox's user. */
        public Command(String call, List<String> argv, String cwd, Map<String, String> env, String dispatchKey,
                       long requestBytes, Optional<Fault> fault) {
            this(call, argv, cwd, env, dispatchKey, requestBytes, fault, false);
        }

        /** {@code sh -c script} in {@code cwd}. */
        public static Command shell(String call, String script, String cwd, Map<String, String> env, String dispatchKey) {
            return new Command(call, List.of("sh", "-c", script), cwd, env, dispatchKey, script.length(), Optional.empty());
        }
    }

    /**
     * The user a sandbox's commands run as, with {@code home} as their {@code HOME}, named in the
     * sandbox's {@code /etc/passwd} and {@code /etc/group} (the host's, with this user in place of
     * any entry of the same name or id), owner of its home and of what the file API writes. Root
     * is the host's root entry.
     */
    public record User(String name, int uid, String home) {
        public User {
            Objects.requireNonNull(name, "name");
            if (!home.startsWith("/")) {
                throw new IllegalArgumentException("home must be absolute: " + home);
            }
        }

        /** Root, with {@code home} as {@code HOME}. */
        public static User root(String home) {
            return new User("root", 0, home);
        }

        public boolean root() {
            return uid == 0;
        }
    }

    private final String id;
    private final String image;
    private final Path root;
    /** Who commands run as: the sandbox's user where this JVM is root, else the user namespace's root (see {@link #user()}). */
    private final User user;
    private final SandboxIsolation isolation;
    private final CallJournal journal;
    private final String marker = UUID.randomUUID().toString();
    private final Set<SandboxProcess> processes = ConcurrentHashMap.newKeySet();
    /** The edges ({@link PortEdge}) reaching this sandbox's ports, closed when it stops. */
    private final Set<PortEdge> edges = ConcurrentHashMap.newKeySet();
    private final Object lifecycle = new Object();
    private boolean stopped;
    /** The sandbox's own root and namespaces (see {@link Namespaces}); null until the first exec sets them up, empty under gVisor. */
    private Optional<Namespaces> namespaces;
    /** The sandbox's gVisor container, in that mode, from the first exec on. */
    private volatile Optional<Gvisor> gvisor = Optional.empty();
    /** The seccomp program's file, beside the root (with bubblewrap). */
    private Optional<Path> seccomp = Optional.empty();

    private EmulatedSandbox(String id, String image, Path root, User user, SandboxIsolation isolation, CallJournal journal) {
        this.id = id;
        this.image = image;
        this.root = root;
        this.user = user;
        this.isolation = isolation;
        this.journal = journal;
    }

    /**
     * Creates a sandbox whose commands run as root, with {@code home} as their {@code HOME}
     * ({@link #create(String, String, Path, User, SandboxIsolation, CallJournal)}).
     */
    public static EmulatedSandbox create(String id, String image, Path root, String home, SandboxIsolation isolation,
                                         CallJournal journal) {
        return create(id, image, root, User.root(home), isolation, journal);
    }

    /**
     * Creates the sandbox's root at {@code root} (which must not exist yet) with the usual top
     * level ({@code /tmp} 1777, the user's home owned by the user, the system links), recording
     * {@code image} by name only: nothing is pulled. Commands run as {@code user} where this JVM
     * is root (a user that is not root needs a uid of the host's to switch to); elsewhere as the
     * root of a user namespace of this JVM's user, as before.
     */
    public static EmulatedSandbox create(String id, String image, Path root, User user, SandboxIsolation isolation,
                                         CallJournal journal) {
        User effective = SandboxIsolation.privileged() && isolation.kind() != SandboxIsolation.Kind.GVISOR ? user
                : User.root(user.home());
        try {
            Files.createDirectories(root.getParent());
            Files.createDirectory(root);
            Files.setPosixFilePermissions(root, DIR_0755);
            Path tmp = Files.createDirectories(root.resolve("tmp"));
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxrwxrwx"));
            // Sticky bit: NIO cannot set it, chmod can.
            new ProcessBuilder("chmod", "1777", tmp.toString()).start().waitFor(10, TimeUnit.SECONDS);
            chown(Files.createDirectories(root.resolve(effective.home().substring(1))), effective);
            Files.createDirectories(root.resolve("var/tmp"));
            for (String d : SYSTEM) {
                Path host = Path.of("/", d);
                if (Files.isSymbolicLink(host)) {
                    Files.createSymbolicLink(root.resolve(d), Files.readSymbolicLink(host)); // usr merge: bin -> usr/bin
                }
            }
            if (!effective.root()) {
                writeAccounts(root, effective);
            }
            Files.deleteIfExists(maskFile(root));
            Files.createFile(maskFile(root), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("r--r--r--")));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the sandbox root " + root, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating " + root, e);
        }
        return new EmulatedSandbox(id, image, root, effective, isolation, journal);
    }

    /**
     * The sandbox's {@code /etc/passwd} and {@code /etc/group}, beside its root: the host's,
     * with {@code user} (and a group of its name and id) instead of any entry of that name or id.
     */
    private static void writeAccounts(Path root, User user) throws IOException {
        String passwd = user.name() + ":x:" + user.uid() + ":" + user.uid() + "::" + user.home() + ":/bin/bash";
        String group = user.name() + ":x:" + user.uid() + ":";
        for (Map.Entry<String, String> e : Map.of("passwd", passwd, "group", group).entrySet()) {
            List<String> lines = new ArrayList<>();
            for (String line : Files.readAllLines(Path.of("/etc", e.getKey()))) {
                String[] f = line.split(":", -1);
                if (f.length < 3 || !(f[0].equals(user.name()) || f[2].equals(Integer.toString(user.uid())))) {
                    lines.add(line);
                }
            }
            lines.add(e.getValue());
            Path file = accountsFile(root, e.getKey());
            Files.write(file, lines);
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        }
    }

    /** A file that stands for the sandbox's {@code /etc/NAME}, beside its root. */
    private static Path accountsFile(Path root, String name) {
        return root.resolveSibling(root.getFileName() + "." + name);
    }

    /**
     * Files the sandbox sees at {@code /etc/...} instead of the host's: sandbox path to host file.
     * The host's secrets under {@code /etc} (password hashes, SSH host keys) are each shown as an
     * empty file, to commands (root in a Modal sandbox) and to the file API alike, as the local
     * backend's bubblewrap hides them.
     */
    private Map<String, Path> overlays() {
        Map<String, Path> m = new LinkedHashMap<>();
        if (!user.root()) {
            for (String name : List.of("passwd", "group")) {
                m.put("/etc/" + name, accountsFile(root, name));
            }
        }
        for (String secret : HOST_SECRETS) {
            m.put(secret, maskFile(root));
        }
        return m;
    }

    /** The host's secret files under {@code /etc} that exist here, read once: masked in every sandbox. */
    private static final List<String> HOST_SECRETS = hostSecrets();

    private static List<String> hostSecrets() {
        List<String> found = new ArrayList<>();
        for (String f : List.of("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")) {
            if (Files.isRegularFile(Path.of(f), LinkOption.NOFOLLOW_LINKS)) {
                found.add(f);
            }
        }
        try (var keys = Files.newDirectoryStream(Path.of("/etc/ssh"), "ssh_host_*_key")) {
            for (Path k : keys) {
                if (Files.isRegularFile(k, LinkOption.NOFOLLOW_LINKS)) {
                    found.add(k.toString());
                }
            }
        } catch (IOException e) {
            // no /etc/ssh here: no host keys to hide
        }
        return List.copyOf(found);
    }

    /** The empty file shown over each host secret, beside the root. */
    private static Path maskFile(Path root) {
        return root.resolveSibling(root.getFileName() + ".masked");
    }

    /** Makes {@code p} the user's (a no-op for root, whose files the emulator's own are). */
    private static void chown(Path p, User user) throws IOException {
        if (!user.root()) {
            Files.setAttribute(p, "unix:uid", user.uid(), LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(p, "unix:gid", user.uid(), LinkOption.NOFOLLOW_LINKS);
        }
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
        return user.home();
    }

    /** Who the sandbox's commands run as (root where this JVM cannot switch to the sandbox's user). */
    public User user() {
        return user;
    }

    public boolean isolated() {
        return isolation.runsCommands();
    }

    public boolean stopped() {
        synchronized (lifecycle) {
            return stopped;
        }
    }

    /** Records the command in the journal, then starts it. A stopped sandbox refuses, and so does one without isolation. */
    public SandboxProcess exec(Command c) throws IOException {
        journal.dispatch(c.call(), id, c.argv().size() == 3 && c.argv().get(1).equals("-c") ? c.argv().get(2) : String.join(" ", c.argv()),
                c.argv(), new ArrayList<>(c.env().keySet()), c.requestBytes(), c.dispatchKey(), c.fault());
        synchronized (lifecycle) {
            if (stopped) {
                throw new IllegalStateException("sandbox " + id + " is stopped");
            }
            if (!isolation.runsCommands()) {
                throw new IOException("this emulator cannot run commands in a sandbox: " + isolation.reason());
            }
            if (namespaces == null) { // the first exec sets the sandbox up
                if (isolation.kind() == SandboxIsolation.Kind.GVISOR) {
                    gvisor = Optional.of(Gvisor.start(isolation.runsc().orElseThrow(), root, systemDirs(), overlays()));
                    namespaces = Optional.empty();
                } else {
                    seccomp = isolation.kind() == SandboxIsolation.Kind.BWRAP ? SeccompFilter.writeTo(seccompFile()) : Optional.empty();
                    namespaces = Optional.of(Namespaces.start(isolation, root, systemDirs(), overlays()));
                }
            }
            if (gvisor.isPresent()) {
                return execInGvisor(c, gvisor.get());
            }
            Optional<Path> status = ExitWaiter.AVAILABLE ? Optional.of(statusFile()) : Optional.empty();
            ProcessBuilder pb = new ProcessBuilder(argv(c, status));
            Map<String, String> env = pb.environment();
            env.clear();
            env.put("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
            env.put("HOME", user.home());
            env.putAll(c.env());
            env.put(MARKER, marker);
            Process p = pb.start();
            SandboxProcess sp = new SandboxProcess(p, this, status);
            processes.add(sp);
            p.onExit().thenRun(() -> processes.remove(sp));
            return sp;
        }
    }

    /**
     * A command as a {@code runsc exec} client under {@code setsid}: the environment goes to the
     * container in a process file, and the client's only the marker, so the stop sweep finds it.
     */
    private SandboxProcess execInGvisor(Command c, Gvisor g) throws IOException {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        env.put("HOME", user.home());
        env.putAll(c.env());
        String execId = UUID.randomUUID().toString();
        List<String> argv = new ArrayList<>(List.of("setsid"));
        argv.addAll(g.exec(execId, c.argv(), c.cwd(), env));
        ProcessBuilder pb = new ProcessBuilder(argv);
        pb.environment().clear();
        pb.environment().put("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        pb.environment().put(MARKER, marker);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            g.forget(execId);
            throw e;
        }
        SandboxProcess sp = new SandboxProcess(p, this, signal -> {
            g.signalGroup(execId, signal, p);
            if (signal == 9) { // the group is gone; the client goes too, even if the container no longer answers
                ProcessGroups.signal(p.pid(), 9);
            }
        });
        processes.add(sp);
        p.onExit().thenRun(() -> {
            processes.remove(sp);
            g.forget(execId);
        });
        return sp;
    }

    private List<String> argv(Command c, Optional<Path> status) {
        List<String> a = new ArrayList<>();
        a.add("setsid"); // its own process group, so a kill takes the whole tree
        if (seccomp.isPresent()) {
            // bwrap reads the filter from a descriptor: opened here, inherited through nsenter.
            a.addAll(List.of("sh", "-c", "exec \"$@\" 3<\"$0\"", seccomp.get().toString()));
        }
        if (status.isPresent()) {
            // The exit waiter's descriptor, to a file outside the root: inherited down to the waiter, never by the command.
            a.addAll(List.of("sh", "-c", "exec \"$@\" " + ExitWaiter.FD + ">\"$0\"", status.get().toString()));
        }
        a.addAll(namespaces.orElseThrow().enter(c.cwd(), c.asRoot() ? 0 : user.uid(), root, isolation.bwrap(), systemDirs(),
                overlays(), seccomp.isPresent(), status.isPresent() ? ExitWaiter.argv() : List.of()));
        // A service's sandbox starts its commands with default signal dispositions, whatever this
        // JVM inherited (under nohup SIGHUP is ignored, and children would inherit that).
        a.addAll(DEFAULT_SIGNALS);
        a.addAll(c.argv());
        return a;
    }

    private Path seccompFile() {
        return root.resolveSibling(root.getFileName() + ".seccomp");
    }

    /** The directory, beside the root, of the exit waiters' status files. */
    private Path statusDir() {
        return root.resolveSibling(root.getFileName() + ".exits");
    }

    /** A new exec's status file (see {@link ExitWaiter}), outside the root: no command reaches it. */
    private Path statusFile() throws IOException {
        return Files.createDirectories(statusDir()).resolve(UUID.randomUUID() + ".status");
    }

    /** The host's system dirs a command sees read-only (real directories, not the usr-merge links). */
    private static List<String> systemDirs() {
        return SYSTEM.stream().filter(d -> Files.isDirectory(Path.of("/", d), LinkOption.NOFOLLOW_LINKS)).toList();
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

    /** Keeps {@code edge} to close when the sandbox stops; false (and nothing kept) when it has stopped already. */
    boolean addEdge(PortEdge edge) {
        synchronized (lifecycle) {
            return !stopped && edges.add(edge);
        }
    }

    void removeEdge(PortEdge edge) {
        edges.remove(edge);
    }

    /**
     * Stops the sandbox once: its port edges close, then SIGKILL to every process group it
     * started, then to every process that still carries its marker, until none is left (bounded).
     * Later calls do nothing.
     */
    public void stop() {
        synchronized (lifecycle) {
            if (stopped) {
                return;
            }
            stopped = true;
        }
        edges.forEach(PortEdge::close);
        for (SandboxProcess p : processes) {
            ProcessGroups.signal(p.pgid(), 9);
        }
        Optional<Namespaces> ns;
        synchronized (lifecycle) {
            ns = namespaces == null ? Optional.empty() : namespaces;
        }
        ns.ifPresent(Namespaces::close); // the namespace's init goes, and the kernel kills every process in it
        gvisor.ifPresent(Gvisor::close); // every process in the container, the container, its runsc processes
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            List<Long> left = livePids();
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
            deleteTree(statusDir());
            Files.deleteIfExists(seccompFile());
            for (Path overlay : overlays().values()) {
                Files.deleteIfExists(overlay);
            }
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
        if (readOnly) {
            // What the sandbox sees at that path instead of the host's (its accounts, masked secrets).
            for (Map.Entry<String, Path> o : overlays().entrySet()) {
                if (cur.equals(Path.of(o.getKey()))) {
                    return new Location(o.getValue(), true);
                }
            }
        }
        return new Location(cur, readOnly);
    }

    /**
     * Writes {@code data} to {@code path} atomically (a temp file beside it, then a rename),
     * creating parents 0755, with {@code mode}. The file and the parents it made are the
     * sandbox's user's, as a command's would be. Streamed: {@code data} is copied in chunks, never
     * held whole.
     */
    public void write(String path, InputStream data, int mode) throws IOException {
        try (Upload u = upload(path, mode)) {
            data.transferTo(u.stream());
            u.commit();
        }
    }

    /**
     * Starts a write of {@code path} whose bytes arrive over time (an exec's stdin, a request
     * body): the checks and parent dirs of {@link #write} now, the bytes into a temp file beside
     * the target as they come, and the file in place only at {@link Upload#commit()}. Closed
     * without a commit, the temp file goes and the target is as it was.
     */
    public Upload upload(String path, int mode) throws IOException {
        Location l = writable(path, false);
        Path dir = l.host().getParent();
        if (!dir.startsWith(root)) {
            throw new AccessDeniedException(path, null, "read-only file system");
        }
        createDirectories(dir);
        Path tmp = Files.createTempFile(dir, ".airlock-upload-", ".part");
        try {
            return new Upload(tmp, l.host(), mode);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
    }

    /** A write in progress ({@link #upload}): its bytes go to {@link #stream()}, {@link #commit()} puts the file in place. */
    public final class Upload implements AutoCloseable {
        private final Path tmp;
        private final Path target;
        private final int mode;
        private final OutputStream out;
        private boolean done;

        private Upload(Path tmp, Path target, int mode) throws IOException {
            this.tmp = tmp;
            this.target = target;
            this.mode = mode;
            this.out = Files.newOutputStream(tmp, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
        }

        /** Where the file's bytes go, in order; written straight to the temp file (no buffer of its own). */
        public OutputStream stream() {
            return out;
        }

        /** Owner, mode, then an atomic rename over the target. */
        public void commit() throws IOException {
            if (done) {
                throw new IllegalStateException("this upload has ended");
            }
            done = true;
            try {
                out.close();
                chown(tmp, user);
                Files.setPosixFilePermissions(tmp, permissions(mode));
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } finally {
                Files.deleteIfExists(tmp);
            }
        }

        /** Ends an upload that was not committed: its temp file goes. */
        @Override
        public void close() throws IOException {
            if (!done) {
                done = true;
                try {
                    out.close();
                } finally {
                    Files.deleteIfExists(tmp);
                }
            }
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
            createDirectories(l.host());
            Files.setPosixFilePermissions(l.host(), permissions(mode));
        }
    }

    /** {@code mkdir -p} of a host dir in the root, as the sandbox's user: what it creates is the user's. */
    private void createDirectories(Path dir) throws IOException {
        Deque<Path> missing = new ArrayDeque<>();
        for (Path d = dir; d.startsWith(root) && !Files.exists(d, LinkOption.NOFOLLOW_LINKS); d = d.getParent()) {
            missing.push(d);
        }
        Files.createDirectories(dir);
        for (Path d : missing) {
            chown(d, user);
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

    /**
     * Host processes alive right now that belong to this sandbox: by marker, and under gVisor the
     * container's runsc processes (its sentry and gofer) too.
     */
    public List<Long> livePids() {
        List<Long> pids = new ArrayList<>(ProcessGroups.withMarker(MARKER, marker));
        gvisor.ifPresent(g -> g.hostPids().stream().filter(pid -> !pids.contains(pid)).forEach(pids::add));
        return pids;
    }

    @Override
    public String toString() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("image", image);
        m.put("root", root);
        m.put("isolation", isolation.describe());
        m.put("namespaces", namespaces == null ? "not yet" : gvisor.isPresent() ? "gVisor container " + gvisor.get().id()
                : namespaces.isPresent() ? "own pid and network" : "the host's");
        return "EmulatedSandbox" + m;
    }
}
