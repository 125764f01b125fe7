package dev.airlock.local;

import dev.airlock.Capabilities;
import dev.airlock.spi.AbstractEnvironment;
import dev.airlock.spi.Launch;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.RemoteProcess;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Commands as processes on this host. Each runs as {@code setsid SHELL -c SCRIPT}: its own session
 * and process group, so a timeout or cancel signals the whole tree. Stdin, stdout and stderr are
 * the process's pipes (PIPE mode); the environment is passed natively with secrets removed.
 */
public final class LocalEnvironment extends AbstractEnvironment {
    private final LocalSettings local;
    private final Capabilities capabilities;
    private final String setsid;

    private LocalEnvironment(OpenContext context) {
        super("local", "local-" + ProcessHandle.current().pid() + "-" + Long.toHexString(System.nanoTime()), context);
        this.local = LocalSettings.from(context.settings());
        this.setsid = findOnPath("setsid").map(Path::toString).orElse("setsid");
        this.capabilities = Capabilities.pipe()
                .withStdinMode(local.stdinMode())
                .withNativeEnv(true)
                .withArgvLimit(100 * 1024);
    }

    static LocalEnvironment open(OpenContext context) {
        LocalEnvironment env = new LocalEnvironment(context);
        try {
            env.initialize();
        } catch (RuntimeException e) {
            env.close();
            throw e;
        }
        return env;
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    @Override
    protected RemoteProcess launch(Launch launch) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(List.of(setsid, launch.shell(), "-c", launch.script()));
        Map<String, String> env = pb.environment();
        launch.unset().forEach(env::remove);
        env.putAll(launch.env());
        if (!launch.pipeStdin()) {
            pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        }
        Process p = pb.start();
        return new LocalProcess(p);
    }

    static Optional<Path> findOnPath(String name) {
        String path = System.getenv().getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin");
        for (String dir : path.split(":")) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir, name);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** A host process; being started by setsid, its pid is its process group id. */
    private static final class LocalProcess implements RemoteProcess {
        private final Process process;

        LocalProcess(Process process) {
            this.process = process;
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

        @Override
        public int waitFor() throws InterruptedException {
            return process.waitFor();
        }

        @Override
        public OptionalLong processGroup() {
            return OptionalLong.of(process.pid());
        }

        /** Any process left in the command's session (setsid made its id the pid). */
        @Override
        public boolean hasSurvivors() {
            String session = Long.toString(process.pid());
            try (java.util.stream.Stream<Path> procs = Files.list(Path.of("/proc"))) {
                return procs.anyMatch(p -> inSession(p, session));
            } catch (IOException e) {
                return false;
            }
        }

        private static boolean inSession(Path proc, String session) {
            String name = proc.getFileName().toString();
            if (name.isEmpty() || !Character.isDigit(name.charAt(0))) {
                return false;
            }
            try {
                String stat = Files.readString(proc.resolve("stat"));
                // Fields after "(comm)": state ppid pgrp session ...
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                return f.length > 3 && f[3].equals(session) && !f[0].equals("Z");
            } catch (IOException | RuntimeException e) {
                return false;
            }
        }

        @Override
        public void release() {
            try {
                process.getInputStream().close();
                process.getErrorStream().close();
            } catch (IOException ignored) {
                // already closed by the drains
            }
        }
    }
}
