package dev.airlock.bench;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The small in-process scenarios under JMH (sample time, one fork): {@code exec true} on the local
 * backend against {@code ProcessBuilder} running {@code bash -c true} (both read stdout and stderr
 * to their end and wait for the exit), the same reference under {@code setsid} (a diagnostic: what
 * a session of its own costs), and a 4 KiB {@code files().write} against {@code Files.write}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class ExecBenchmark {
    private Environment env;
    private Path dir;
    private final byte[] small = new byte[4096];

    @Setup(Level.Trial)
    public void open() throws IOException {
        env = Environments.open(Settings.of("airlock.backend", "local"));
        dir = Files.createTempDirectory("airlock-bench-jmh");
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        env.close();
        Services.deleteTree(dir);
    }

    @Benchmark
    public int airlockExecTrue() {
        try (ExecResult r = env.exec(ExecRequest.of("true"))) {
            return r.exitCode();
        }
    }

    @Benchmark
    public int processBuilderExecTrue() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("bash", "-c", "true").start();
        p.getOutputStream().close();
        p.getInputStream().readAllBytes();
        p.getErrorStream().readAllBytes();
        return p.waitFor();
    }

    /** The same, in a session of its own as Airlock's commands are: what the {@code setsid} exec costs. */
    @Benchmark
    public int processBuilderSetsidExecTrue() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("setsid", "bash", "-c", "true").start();
        p.getOutputStream().close();
        p.getInputStream().readAllBytes();
        p.getErrorStream().readAllBytes();
        return p.waitFor();
    }

    @Benchmark
    public void airlockWrite4k() {
        env.files().write(dir.resolve("airlock").toString(), small);
    }

    @Benchmark
    public void filesWrite4k() throws IOException {
        Files.write(dir.resolve("plain"), small);
    }
}
