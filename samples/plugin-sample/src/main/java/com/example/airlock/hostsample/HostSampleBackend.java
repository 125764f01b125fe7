package com.example.airlock.hostsample;

import dev.airlock.Capabilities;
import dev.airlock.spi.Backend;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.Launch;
import dev.airlock.spi.RemoteProcess;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;

/**
 * A backend in one class: each command is a host process started under {@code setsid}, so it leads
 * a process group of its own and the core can kill its whole tree. Stdin streams through the
 * process's pipe (PIPE) and variables travel in the process environment (native env). Everything
 * else (the target probe, containment, staging, timeouts, cancel, kills, output capture, files) is
 * the core's: this class has no optional part.
 */
final class HostSampleBackend implements Backend {
    private final String id = "host-sample-" + UUID.randomUUID().toString().substring(0, 8);
    private final String setsid = onPath("setsid").orElseThrow().toString();

    @Override
    public String name() {
        return "host-sample";
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public Capabilities capabilities() {
        return Capabilities.builder().nativeEnv(true).argvLimit(96 * 1024).build();
    }

    /**
     * Starting a local process does not block, so the deadline needs no handling here; a remote
     * backend passes {@code deadline.remaining()} to its client's call and gives up once it passed.
     */
    @Override
    public RemoteProcess launch(Launch launch, Deadline deadline) throws IOException {
        List<String> argv = new ArrayList<>();
        argv.add(setsid); // its own process group: the core's kill reaches the whole tree
        // A JVM started under nohup (or by a CI runner that ignores signals) hands ignored signals on
        // to its children; a command must start with the default ones (the kit checks SIGHUP ends it).
        argv.addAll(List.of("env", "--default-signal=HUP,INT,QUIT,PIPE,TERM"));
        argv.addAll(launch.argv());
        ProcessBuilder pb = new ProcessBuilder(argv);
        Map<String, String> env = pb.environment();
        launch.unset().forEach(env::remove); // the JVM's secrets never reach a child
        env.putAll(launch.env());
        if (!launch.pipeStdin()) {
            pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))); // no stdin: end-of-input at once
        }
        return new HostProcess(pb.start());
    }

    static Optional<Path> onPath(String name) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, name);
            if (Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /** A host process; started by setsid, its pid is its process group id. */
    private static final class HostProcess implements RemoteProcess {
        private final Process process;
        private final OptionalLong startTime;

        HostProcess(Process process) {
            this.process = process;
            this.startTime = startTimeOf(process.pid());
        }

        @Override
        public OutputStream stdin() {
            return process.getOutputStream();
        }

        @Override
        public InputStream stdout() {
            return process.getInputStream();
        }

        @Override
        public InputStream stderr() {
            return process.getErrorStream();
        }

        /** The exit status; the JVM reports a signal N as 128+N, as a shell would. */
        @Override
        public int waitFor() throws InterruptedException {
            return process.waitFor();
        }

        @Override
        public OptionalLong processGroup() {
            return OptionalLong.of(process.pid());
        }

        /** Checked by the core before every signal, so a recycled process group is never hit. */
        @Override
        public OptionalLong startTime() {
            return startTime;
        }

        /**
         * Whether the command's group still has a live process once its output ended. The output
         * alone cannot tell here: when the shell exits, the JDK drains what its pipes hold and
         * closes them, so a background job still holding the output can look like an ended stream.
         */
        @Override
        public boolean hasSurvivors(OptionalLong group) {
            if (group.isEmpty()) {
                return false;
            }
            String want = Long.toString(group.getAsLong());
            try (var procs = Files.list(Path.of("/proc"))) {
                return procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).anyMatch(p -> {
                    try {
                        String stat = Files.readString(p.resolve("stat"));
                        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        return f[2].equals(want) && !f[0].equals("Z") && !f[0].equals("X");
                    } catch (IOException | RuntimeException e) {
                        return false; // gone meanwhile
                    }
                });
            } catch (IOException e) {
                return true; // cannot tell: the core's kill finds out
            }
        }

        private static OptionalLong startTimeOf(long pid) {
            try {
                String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                return OptionalLong.of(Long.parseLong(f[19]));
            } catch (IOException | RuntimeException e) {
                return OptionalLong.empty(); // the core takes it from the launcher record then
            }
        }
    }
}
