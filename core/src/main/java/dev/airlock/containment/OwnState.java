package dev.airlock.containment;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.AirlockHome;
import dev.airlock.settings.Settings;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
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
     * Airlock's program files: where its classes were loaded from, and when that is a checkout (a
     * directory with the {@code airlock} launcher, {@code mvnw} and {@code pom.xml}), the launcher,
     * the build files, every module's {@code pom.xml}, {@code src/main} and {@code target}.
     */
    public static List<Path> programFiles() {
        Set<Path> out = new LinkedHashSet<>();
        codeSource().ifPresent(src -> {
            out.add(src);
            checkout(src).ifPresent(root -> {
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
                    // an unreadable checkout: only the code source is known
                }
            });
        });
        List<Path> existing = new ArrayList<>();
        for (Path p : out) {
            if (Files.exists(p)) {
                existing.add(real(p));
            }
        }
        return existing;
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

    private static Optional<Path> checkout(Path src) {
        for (Path d = src.getParent(); d != null; d = d.getParent()) {
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
