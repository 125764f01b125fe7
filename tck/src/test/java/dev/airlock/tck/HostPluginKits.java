package dev.airlock.tck;

import dev.airlock.Environment;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The kit over {@link HostPlugin}, written right and without {@code setsid}, for the tests that
 * judge the kit on a real plugin. A test class calls {@link #start} before it launches either kit
 * and {@link #finish} after (surefire runs test classes one at a time, so one run is current).
 */
final class HostPluginKits {
    private static volatile Path base;
    private static volatile String run;

    private HostPluginKits() {
    }

    /** A fresh private-dir base and run name for the kits launched next. */
    static void start(String prefix) throws IOException {
        base = Files.createTempDirectory(prefix);
        run = "kit-" + Long.toHexString(System.nanoTime());
    }

    /** The processes of the current run still running {@code argv} (NUL-separated words, as in /proc/PID/cmdline), with their parents. */
    static java.util.List<String> running(String argv) {
        return HostPlugin.ofRun(run).stream().filter(pid -> {
            try {
                return new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")),
                        java.nio.charset.StandardCharsets.UTF_8).equals(argv) && HostProcesses.runs(pid);
            } catch (IOException e) {
                return false; // gone meanwhile
            }
        }).map(pid -> pid + " (parent " + ProcessHandle.of(pid).flatMap(ProcessHandle::parent).map(ProcessHandle::pid).orElse(-1L)
                + ")").toList();
    }

    /** Kills what the broken plugin's cases left running and removes the base. */
    static void finish() throws IOException {
        HostPlugin.killRun(run);
        try (Stream<Path> s = Files.walk(base)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private static Settings settings() {
        return Settings.of("airlock.container", "no", "airlock.private-dir.base", base.toString());
    }

    /** The plugin written right: its commands lead their own session. Run by a launcher only (surefire skips nested classes). */
    static class WithSetsid extends EnvironmentCompatibilityKit {
        @Override
        protected Settings settings() {
            return HostPluginKits.settings();
        }

        @Override
        protected Environment openEnvironment(OpenContext context) {
            return context.open(new HostPlugin(true, run));
        }
    }

    /** The same plugin without setsid: its kill cannot reach the command's tree. */
    static class WithoutSetsid extends EnvironmentCompatibilityKit {
        @Override
        protected Settings settings() {
            return HostPluginKits.settings();
        }

        @Override
        protected Environment openEnvironment(OpenContext context) {
            return context.open(new HostPlugin(false, run));
        }
    }
}
