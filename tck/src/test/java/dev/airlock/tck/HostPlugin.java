package dev.airlock.tck;

import dev.airlock.Capabilities;
import dev.airlock.spi.Backend;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.Launch;
import dev.airlock.spi.RemoteProcess;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.Stream;

/**
 * A plugin as a third party would write it from docs/plugins.md: commands as host processes, built on
 * the SPI's hooks only. With {@code setsid} it keeps every promise; without it (the mistake the kit
 * must catch) each command shares the JVM's process group, so the core's group kill finds no group
 * and a timeout or cancel leaves the command's tree running. Every process it starts carries
 * {@link #RUN_VARIABLE}, so the test can find and kill what the broken plugin leaks.
 */
final class HostPlugin implements Backend {
    static final String RUN_VARIABLE = "AIRLOCK_KIT_PLUGIN_RUN";

    private final String id = "plugin-" + Long.toHexString(System.nanoTime());
    private final boolean setsid;
    private final String run;

    HostPlugin(boolean setsid, String run) {
        this.setsid = setsid;
        this.run = run;
    }

    @Override
    public String name() {
        return setsid ? "host" : "host-without-setsid";
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public Capabilities capabilities() {
        return Capabilities.pipe().withArgvLimit(100 * 1024);
    }

    @Override
    public RemoteProcess launch(Launch launch, Deadline deadline) throws IOException {
        List<String> argv = new ArrayList<>();
        if (setsid) {
            argv.add("setsid");
        }
        // Default signal dispositions whatever this JVM inherited (nohup): the plugin's only mistake is setsid.
        argv.addAll(List.of("env", "--default-signal=HUP,INT,QUIT,PIPE,TERM", launch.shell(), "-c", launch.script()));
        ProcessBuilder pb = new ProcessBuilder(argv);
        Map<String, String> env = pb.environment();
        launch.unset().forEach(env::remove);
        env.putAll(launch.env());
        env.put(RUN_VARIABLE, run);
        if (!launch.pipeStdin()) {
            pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        }
        Process p = pb.start();
        return new RemoteProcess() {
            @Override
            public OutputStream stdin() {
                return p.getOutputStream();
            }

            @Override
            public InputStream stdout() {
                return p.getInputStream();
            }

            @Override
            public InputStream stderr() {
                return p.getErrorStream();
            }

            @Override
            public int waitFor() throws InterruptedException {
                return p.waitFor();
            }

            /** The author believes the shell leads its group: true only under setsid. */
            @Override
            public OptionalLong processGroup() {
                return OptionalLong.of(p.pid());
            }

            /**
             * The JDK drains and closes a child's pipes when the child exits, so a background job
             * still holding the output can look like an ended stream: /proc says whether the group lives.
             */
            @Override
            public boolean hasSurvivors(OptionalLong group) {
                return group.isPresent() && HostProcesses.groupRuns(group.getAsLong());
            }
        };
    }

    /** Kills every process of this machine that a plugin of run {@code run} started (by its marker variable). */
    static int killRun(String run) {
        int killed = 0;
        for (long pid : ofRun(run)) {
            killed += ProcessHandle.of(pid).map(ProcessHandle::destroyForcibly).orElse(false) ? 1 : 0;
        }
        return killed;
    }

    /** The pids of the processes whose environment carries {@code run}'s marker. */
    static java.util.List<Long> ofRun(String run) {
        byte[] marker = (RUN_VARIABLE + "=" + run + "\0").getBytes(StandardCharsets.UTF_8);
        java.util.List<Long> pids = new java.util.ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path proc : (Iterable<Path>) procs::iterator) {
                String name = proc.getFileName().toString();
                if (name.chars().allMatch(Character::isDigit) && holds(proc.resolve("environ"), marker)) {
                    pids.add(Long.parseLong(name));
                }
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return pids;
    }

    private static boolean holds(Path environ, byte[] marker) {
        byte[] b;
        try {
            b = Files.readAllBytes(environ);
        } catch (IOException | RuntimeException e) {
            return false; // gone, or not ours
        }
        outer:
        for (int i = 0; i <= b.length - marker.length; i++) {
            if (i > 0 && b[i - 1] != 0) {
                continue;
            }
            for (int j = 0; j < marker.length; j++) {
                if (b[i + j] != marker[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
