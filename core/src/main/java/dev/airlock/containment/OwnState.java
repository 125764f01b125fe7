package dev.airlock.containment;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.AirlockHome;
import dev.airlock.settings.Settings;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.FileSystemNotFoundException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Airlock's own state and program on the JVM's host: the config file, the approvals list and the
 * code that runs (the jar or class dirs, and in a checkout the launcher and the sources it rebuilds
 * from). A command must never write any of them: a planted approval or setting takes effect at the
 * next call without a human, and planted code runs on the host. So the state is refused where
 * commands can write (the eval run dir, a writable bind), and the program is bound read-only.
 */
public final class OwnState {
    /** The approvals list's name under the operator's {@code AIRLOCK_HOME}. */
    public static final String APPROVALS_FILE = "approvals.list";

    private OwnState() {
    }

    /** The operator's {@code AIRLOCK_HOME}: {@code airlock.home} when set, else {@code $AIRLOCK_HOME}, else {@code ~/.airlock}. */
    public static Path operatorHome(Settings settings) {
        return settings.get(ContainmentSettings.HOME_KEY).filter(s -> !s.isBlank()).map(Path::of)
                .orElseGet(AirlockHome::resolve).toAbsolutePath().normalize();
    }

    /** This machine's name as {@code uname -n} gives it (the kernel's), for comparing with a probed target's. */
    public static String hostName() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
        } catch (IOException | RuntimeException e) {
            return System.getenv().getOrDefault("HOSTNAME", "");
        }
    }

    /** The files Airlock trusts as the operator's word: the approvals list and the config file read. */
    public static Map<Path, String> stateFiles(Settings settings) {
        Map<Path, String> files = new LinkedHashMap<>();
        files.put(operatorHome(settings).resolve(APPROVALS_FILE), "the approvals list");
        settings.configFile().ifPresent(f -> files.put(f.toAbsolutePath().normalize(), "the config file"));
        return files;
    }

    /**
     * Refuses to go on when Airlock's state lies inside a directory commands can write.
     *
     * @param writable each such directory and what it is ("the eval run dir /x")
     */
    public static void refuseInside(Settings settings, Map<Path, String> writable) {
        for (Map.Entry<Path, String> f : stateFiles(settings).entrySet()) {
            Path file = real(f.getKey());
            for (Map.Entry<Path, String> w : writable.entrySet()) {
                if (file.startsWith(real(w.getKey()))) {
                    String via = f.getValue().equals("the config file") ? "--config FILE" : "AIRLOCK_HOME (or airlock.home)";
                    throw new ConfigurationException("refusing " + f.getValue() + " " + f.getKey() + ": it is inside "
                            + w.getValue() + ", which commands can write; keep Airlock's state outside it (point "
                            + via + " elsewhere; the default is ~/.airlock)");
                }
            }
        }
    }

    /**
     * Airlock's program files: every place its classes load from (each class path root holding a
     * {@code dev.airlock} class, so a backend module run from a checkout counts as much as the core
     * loaded from a jar elsewhere; the application's other jars and classes are its own, and an
     * agent may rebuild them), and for each one that is inside a checkout
     * (a directory with the {@code airlock} launcher, {@code mvnw} and {@code pom.xml}) the
     * launcher, the build files, every module's {@code pom.xml}, {@code src/main} and {@code target}.
     */
    public static List<Path> programFiles() {
        Set<Path> roots = new LinkedHashSet<>();
        codeSource().ifPresent(roots::add);
        roots.addAll(airlockRoots());
        Set<Path> out = new LinkedHashSet<>(roots);
        Set<Path> checkouts = new LinkedHashSet<>();
        Set<Path> seen = new HashSet<>();
        roots.forEach(root -> checkout(root, seen).ifPresent(checkouts::add));
        for (Path root : checkouts) {
            for (String f : List.of("airlock", "mvnw", ".mvn", "pom.xml")) {
                out.add(root.resolve(f));
            }
            try (Stream<Path> modules = Files.list(root)) {
                modules.filter(m -> Files.isRegularFile(m.resolve("pom.xml"))).sorted().forEach(m -> {
                    out.add(m.resolve("pom.xml"));
                    out.add(m.resolve("src/main"));
                    out.add(m.resolve("target"));
                });
            } catch (IOException e) {
                // an unreadable checkout: only the roots are known
            }
        }
        Set<Path> existing = new LinkedHashSet<>();
        for (Path p : out) {
            if (Files.exists(p)) {
                existing.add(real(p));
            }
        }
        return List.copyOf(existing);
    }

    private static Optional<Path> codeSource() {
        CodeSource cs = OwnState.class.getProtectionDomain().getCodeSource();
        if (cs == null || cs.getLocation() == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(Path.of(cs.getLocation().toURI()));
        } catch (URISyntaxException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /**
     * The class path roots (a jar or a class dir) that hold {@code dev/airlock}, as the loaders of
     * this class, of the thread and of the application see them.
     */
    private static Set<Path> airlockRoots() {
        Set<Path> roots = new LinkedHashSet<>();
        Set<ClassLoader> loaders = new LinkedHashSet<>();
        loaders.add(OwnState.class.getClassLoader());
        loaders.add(Thread.currentThread().getContextClassLoader());
        loaders.add(ClassLoader.getSystemClassLoader());
        String pkg = "dev/airlock";
        for (ClassLoader loader : loaders) {
            if (loader == null) {
                continue;
            }
            try {
                Enumeration<URL> found = loader.getResources(pkg);
                while (found.hasMoreElements()) {
                    rootOf(found.nextElement(), pkg).ifPresent(roots::add);
                }
            } catch (IOException e) {
                // a loader that cannot list: the code source and the class path still count
            }
        }
        return roots;
    }

    /** {@code file:/x/classes/dev/airlock} is {@code /x/classes}; {@code jar:file:/x/a.jar!/dev/airlock} is {@code /x/a.jar}. */
    static Optional<Path> rootOf(URL url, String pkg) {
        try {
            if (url.getProtocol().equals("jar")) {
                String spec = url.getPath();
                int bang = spec.indexOf("!/");
                return bang < 0 ? Optional.empty() : Optional.of(Path.of(new URI(spec.substring(0, bang))));
            }
            if (url.getProtocol().equals("file")) {
                Path p = Path.of(url.toURI());
                if (!p.endsWith(pkg)) {
                    return Optional.empty();
                }
                for (int i = Path.of(pkg).getNameCount(); i > 0 && p != null; i--) {
                    p = p.getParent();
                }
                return Optional.ofNullable(p);
            }
        } catch (URISyntaxException | IllegalArgumentException | FileSystemNotFoundException e) {
            // a URL that names no local file (a jar nested in a jar, say)
        }
        return Optional.empty();
    }

    /** The nearest directory above {@code src} that is a checkout of Airlock; directories in {@code seen} were looked at already. */
    private static Optional<Path> checkout(Path src, Set<Path> seen) {
        for (Path d = src.toAbsolutePath().getParent(); d != null && seen.add(d); d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("airlock")) && Files.isRegularFile(d.resolve("mvnw"))
                    && Files.isRegularFile(d.resolve("pom.xml"))) {
                return Optional.of(d);
            }
        }
        return Optional.empty();
    }

    /** The path with symlinks resolved as far as it exists. */
    static Path real(Path p) {
        Path abs = p.toAbsolutePath().normalize();
        Path existing = abs;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return abs;
        }
        try {
            return existing.toRealPath().resolve(existing.relativize(abs));
        } catch (IOException e) {
            return abs;
        }
    }
}
