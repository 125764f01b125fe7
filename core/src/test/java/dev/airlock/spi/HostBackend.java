package dev.airlock.spi;

import dev.airlock.Capabilities;
import dev.airlock.Payload;
import dev.airlock.StdinMode;
import dev.airlock.settings.Settings;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test backend that runs the real core on host processes ({@code setsid sh -c}) and can stall,
 * fail or lose any hook on request. Only the user's commands (not the core's own scripts: probe,
 * removal, kill) are affected by the launch faults, so the rest of the core keeps working.
 */
final class HostBackend extends AbstractEnvironment {

    /** What a hook does when asked. */
    enum Fault { NONE, STALL, STALL_UNINTERRUPTIBLY, FAIL, LOSE }

    volatile Fault stage = Fault.NONE;
    volatile Fault launch = Fault.NONE;
    volatile Fault stop = Fault.NONE;
    /** Printed before the record, like a remote user's ~/.bashrc that prints. */
    volatile String noise = "";
    /** Seconds the shell sleeps before the core's prefix runs, like a slow login. */
    volatile int slowStart;
    /** Report a wrong leader start time, as if the group id had been recycled by another process. */
    volatile boolean recycledIdentity;
    final CountDownLatch release = new CountDownLatch(1);
    final CountDownLatch stalled = new CountDownLatch(1);
    final AtomicInteger stops = new AtomicInteger();
    final List<String> signals = new CopyOnWriteArrayList<>();
    final List<Process> launched = new CopyOnWriteArrayList<>();
    private final Capabilities caps;

    HostBackend(Settings settings, StdinMode mode, boolean nativeEnv, List<dev.airlock.event.ExecListener> listeners) {
        super("host", "host-" + System.nanoTime(), OpenContext.builder(settings).listeners(listeners).build());
        this.caps = Capabilities.pipe().withStdinMode(mode).withNativeEnv(nativeEnv).withArgvLimit(100 * 1024);
        initialize();
    }

    @Override
    public Capabilities capabilities() {
        return caps;
    }

    private void fault(Fault f, String what) throws IOException {
        switch (f) {
            case NONE, LOSE -> {
            }
            case FAIL -> throw new IOException(what + " failed on request");
            case STALL -> {
                stalled.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException(what + " interrupted");
                }
            }
            case STALL_UNINTERRUPTIBLY -> {
                stalled.countDown();
                boolean interrupted = false;
                while (true) {
                    try {
                        release.await();
                        break;
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    @Override
    protected void stage(String path, Payload data) throws IOException {
        fault(stage, "stage");
        super.stage(path, data);
    }

    @Override
    protected void stopSandbox() {
        stops.incrementAndGet();
        try {
            fault(stop, "stop");
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage());
        }
    }

    @Override
    protected void kill(RemoteProcess process, OptionalLong group, boolean force) throws IOException {
        signals.add((force ? "KILL " : "TERM ") + group.orElse(-1));
        super.kill(process, group, force);
    }

    @Override
    protected RemoteProcess launch(Launch l) throws IOException {
        if (l.internal()) {
            return start(l, false); // the core's own scripts: probe, files, staging, kill
        }
        fault(launch, "launch");
        return start(l, launch == Fault.LOSE);
    }

    private RemoteProcess start(Launch l, boolean lose) throws IOException {
        String script = l.internal() ? l.script()
                : (slowStart > 0 ? "sleep " + slowStart + "\n" : "") + "printf %s '" + noise + "'\n" + l.script();
        ProcessBuilder pb = new ProcessBuilder("setsid", l.shell(), "-c", script);
        Map<String, String> env = pb.environment();
        l.unset().forEach(env::remove);
        env.putAll(l.env());
        if (!l.pipeStdin()) {
            pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        }
        Process p = pb.start();
        if (l.script().contains("@airlock:")) {
            launched.add(p);
        }
        OptionalLong start = startTime(p.pid());
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
                int s = p.waitFor();
                return lose ? NO_STATUS : s;
            }

            @Override
            public OptionalLong processGroup() {
                return OptionalLong.of(p.pid());
            }

            @Override
            public OptionalLong startTime() {
                return recycledIdentity && start.isPresent() ? OptionalLong.of(start.getAsLong() + 1) : start;
            }
        };
    }

    static OptionalLong startTime(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return OptionalLong.of(Long.parseLong(f[19]));
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
    }

    static boolean alive(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return !stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        } catch (IOException e) {
            return false;
        }
    }

    static void await(CountDownLatch l) throws InterruptedException {
        if (!l.await(20, TimeUnit.SECONDS)) {
            throw new AssertionError("the hook was never reached");
        }
    }
}
