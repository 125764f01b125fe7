package dev.airlock.spi;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Programs of this machine that a backend runs itself (bubblewrap, nsenter, nft, slirp4netns,
 * bash): found by name, as a file this JVM may execute, never a directory of that name and never
 * in the working directory (an empty {@code PATH} entry is skipped, not taken for {@code .}).
 */
public final class HostPrograms {
    /** Where Debian puts administration tools (nft, iptables), which a user's {@code PATH} may not reach. */
    private static final List<String> SYSTEM_DIRS = List.of("/usr/sbin", "/usr/local/sbin", "/sbin", "/usr/bin", "/bin");

    private HostPrograms() {
    }

    /** {@code name} in this JVM's {@code PATH} ({@code /usr/local/bin:/usr/bin:/bin} when unset). */
    public static Optional<Path> onPath(String name) {
        return first(name, pathDirs());
    }

    /** {@code name} in this JVM's {@code PATH}, else in the system directories (sbin included). */
    public static Optional<Path> find(String name) {
        List<String> dirs = new ArrayList<>(pathDirs());
        dirs.addAll(SYSTEM_DIRS);
        return first(name, dirs);
    }

    private static List<String> pathDirs() {
        return List.of(System.getenv().getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin").split(File.pathSeparator));
    }

    static Optional<Path> first(String name, List<String> dirs) {
        for (String dir : dirs) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate.toAbsolutePath());
            }
        }
        return Optional.empty();
    }
}
