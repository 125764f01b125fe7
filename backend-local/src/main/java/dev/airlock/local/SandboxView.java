package dev.airlock.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The sandbox's file tree as bubblewrap lays it out, read back from the very mount options it is
 * given: for a path a command names, the place on this host that holds it (the same path under a
 * bind of a directory to itself, another one under {@code /tmp}'s bind of the environment's own
 * temp dir) and whether a command may write there. Nothing is guessed: a path under anything but
 * a bind of a real host directory ({@code --tmpfs}, {@code --dev}, {@code --proc}), under
 * {@code /proc}, {@code /dev} or {@code /sys} (whose contents depend on who looks), or a plan with an
 * option this class does not know, has no place here, and its caller asks a command in the
 * sandbox instead.
 *
 * <p>Options are applied in order, as bubblewrap applies them: a path lies in the last mount whose
 * destination is the path or one of its parents (a later mount hides what an earlier one put
 * below it), and {@code --remount-ro} makes the mount holding its path read-only (bubblewrap's
 * remount is not recursive: deeper mounts keep their own flags).
 */
final class SandboxView {
    /** Options taking arguments that are not mounts, with how many. */
    private static final Map<String, Integer> OTHER = Map.of("--chdir", 1, "--cap-add", 1, "--cap-drop", 1);
    private static final List<String> FLAGS = List.of("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net",
            "--unshare-user-try", "--die-with-parent");
    /** Never answered from this host: their contents differ with the process looking (pid, network namespace). */
    private static final List<Path> VOLATILE = List.of(Path.of("/proc"), Path.of("/dev"), Path.of("/sys"));

    /**
     * One mount: where commands see it, and the host directory it shows (empty for a file system
     * of the sandbox's own, a file bound over a file, or a source that is not its real path).
     */
    private record Mount(Path destination, Optional<Path> source, boolean writable, boolean tmpfs) {
        Mount readOnly() {
            return new Mount(destination, source, false, tmpfs);
        }
    }

    /** A path's place on this host: the host path, the root of the mount holding it, and whether commands can write it. */
    record Place(Path host, Path mountRoot, boolean writable) {
    }

    private final List<Mount> mounts;
    private final Path start;

    private SandboxView(List<Mount> mounts, Path start) {
        this.mounts = List.copyOf(mounts);
        this.start = start;
    }

    /**
     * The view of bubblewrap's options (those before its {@code --}), or empty when one of them is
     * not understood here or no start directory is given.
     */
    static Optional<SandboxView> of(List<String> options) {
        List<Mount> mounts = new ArrayList<>();
        Path start = null;
        for (int i = 0; i < options.size(); i++) {
            String o = options.get(i);
            int left = options.size() - i - 1;
            switch (o) {
                case "--bind", "--ro-bind" -> {
                    if (left < 2) {
                        return Optional.empty();
                    }
                    Path source = Path.of(options.get(++i));
                    Path destination = Path.of(options.get(++i));
                    mounts.add(new Mount(destination, realDirectory(source), o.equals("--bind"), false));
                }
                case "--tmpfs", "--dev", "--proc" -> {
                    if (left < 1) {
                        return Optional.empty();
                    }
                    mounts.add(new Mount(Path.of(options.get(++i)), Optional.empty(), o.equals("--tmpfs"), o.equals("--tmpfs")));
                }
                case "--remount-ro" -> {
                    if (left < 1) {
                        return Optional.empty();
                    }
                    Path p = Path.of(options.get(++i));
                    int holder = holder(mounts, p);
                    if (holder >= 0) {
                        mounts.set(holder, mounts.get(holder).readOnly());
                    }
                }
                default -> {
                    Integer arity = OTHER.get(o);
                    if (arity != null) {
                        if (left < arity) {
                            return Optional.empty();
                        }
                        if (o.equals("--chdir")) {
                            start = Path.of(options.get(i + 1));
                        }
                        i += arity;
                    } else if (!FLAGS.contains(o)) {
                        return Optional.empty();
                    }
                }
            }
        }
        return start == null || !start.isAbsolute() ? Optional.empty() : Optional.of(new SandboxView(mounts, start));
    }

    /** Where commands start: relative paths are from here. */
    Path start() {
        return start;
    }

    /**
     * The host place of {@code path} as commands see it: an absolute, normal path (no {@code .},
     * {@code ..} or empty name); empty where this host's view is not the sandbox's (see the class
     * doc). Links are not followed: the caller walks from {@link Place#mountRoot} without following one.
     */
    Optional<Place> locate(Path path) {
        if (!path.isAbsolute() || !path.equals(path.normalize())) {
            return Optional.empty();
        }
        for (Path v : VOLATILE) {
            if (path.startsWith(v)) {
                return Optional.empty();
            }
        }
        int holder = holder(mounts, path);
        if (holder < 0) {
            return Optional.empty();
        }
        Mount m = mounts.get(holder);
        return m.source().map(root -> new Place(root.resolve(m.destination().relativize(path).toString()), root, m.writable()));
    }

    /**
     * {@link #locate}'s host path, or a {@link #skeleton} directory's, where a command could reach
     * it as this JVM does: run as root, a command is root without a capability ({@link #rootMay}),
     * so a directory it may not search is left to a script in the sandbox (which meets the refusal
     * the command would).
     */
    Optional<Path> hostPlace(Path path) {
        if (skeleton(path)) {
            return Optional.of(path);
        }
        Optional<Path> h = locate(path).map(Place::host);
        if (h.isPresent() && ROOT && Files.isDirectory(h.get(), LinkOption.NOFOLLOW_LINKS) && !rootMay(h.get(), 01)) {
            return Optional.empty();
        }
        return h;
    }

    /**
     * Whether {@code path} is a directory bubblewrap made in a read-only tmpfs on the way to a
     * deeper mount (the real home's tmpfs, on the way to a working directory inside it), or that
     * tmpfs's own root: a directory, and never a link, in the sandbox (nothing can change a
     * read-only tmpfs), which its host path is too. What else a tmpfs holds is not on this host.
     */
    private boolean skeleton(Path path) {
        if (!path.isAbsolute() || !path.equals(path.normalize()) || VOLATILE.stream().anyMatch(path::startsWith)) {
            return false;
        }
        int holder = holder(mounts, path);
        if (holder < 0 || !mounts.get(holder).tmpfs() || mounts.get(holder).writable()) {
            return false;
        }
        boolean onTheWay = mounts.get(holder).destination().equals(path);
        for (int j = holder + 1; j < mounts.size() && !onTheWay; j++) {
            Path d = mounts.get(j).destination();
            onTheWay = d.startsWith(path) && !d.equals(path);
        }
        return onTheWay && Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS);
    }

    /** Whether this JVM runs as root, so its commands as root in a namespace of their own. */
    static final boolean ROOT = Bubblewrap.runsAsRoot();

    /**
     * Whether a command run as root may do with {@code host} what {@code bits} asks (4 read, 2
     * write, 1 search): it is uid and gid 0 with no capability (its bounding set is emptied), so the
     * mode's owner bits count where root owns it, the group's where group 0 does, else everyone's;
     * false where they cannot be read.
     */
    static boolean rootMay(Path host, int bits) {
        return attributes(host).map(a -> {
            int mode = (Integer) a.get("mode");
            int shift = (Integer) a.get("uid") == 0 ? 6 : (Integer) a.get("gid") == 0 ? 3 : 0;
            return ((mode >> shift) & bits) == bits;
        }).orElse(false);
    }

    /** The owner and mode of {@code host}, not following a link; empty where they cannot be read. */
    private static Optional<Map<String, Object>> attributes(Path host) {
        try {
            return Optional.of(Files.readAttributes(host, "unix:uid,gid,mode", LinkOption.NOFOLLOW_LINKS));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The index of the mount holding {@code p}: the last one whose destination is {@code p} or a parent of it; -1 for none. */
    private static int holder(List<Mount> mounts, Path p) {
        for (int i = mounts.size() - 1; i >= 0; i--) {
            if (p.startsWith(mounts.get(i).destination())) {
                return i;
            }
        }
        return -1;
    }

    /** {@code source} when it is a directory named by its real path; else empty (a file, a device, a link on the way). */
    private static Optional<Path> realDirectory(Path source) {
        try {
            Path real = source.toRealPath();
            return real.equals(source) && Files.isDirectory(real) ? Optional.of(real) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
