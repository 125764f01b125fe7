package dev.airlock.bench;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Runs every scenario, Airlock and its reference alternately, and prints the Markdown table;
 * with {@code --results DIR} also writes DIR/RESULTS.md and the growth charts next to it.
 * Usage: {@code bench/run [--quick] [--only jmh,local,docker,docker-files,ssh,modal,daytona,vercel,cli,turn-local,...] [--results bench]}.
 * The {@code turn-*} groups are the agent turn of each backend ({@link Turn}). With {@code --only},
 * RESULTS.md keeps the rows of the groups not run (see {@link Results}).
 */
public final class Bench {
    private static final List<String> GROUPS = List.of("jmh", "local", "docker", "docker-files", "ssh", "modal", "daytona", "vercel", "cli",
            "turn-local", "turn-docker", "turn-ssh", "turn-modal", "turn-daytona", "turn-vercel");

    private Bench() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("java.awt.headless", "true");
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        boolean quick = false;
        Set<String> only = new LinkedHashSet<>(GROUPS);
        Path results = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> quick = true;
                case "--only" -> {
                    only = new LinkedHashSet<>(List.of(args[++i].split(",")));
                    if (!GROUPS.containsAll(only)) {
                        usage("--only takes a comma-separated list of " + GROUPS);
                    }
                }
                case "--results" -> results = Path.of(args[++i]);
                default -> usage("unknown argument " + args[i]);
            }
        }
        Plan plan = Plan.of(quick);
        Path work = Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir"), "airlock-bench-" + ProcessHandle.current().pid()));
        Scenarios s = new Scenarios(plan, work);
        Instant start = Instant.now();
        try {
            if (only.contains("jmh")) {
                jmh(s, plan);
            }
            if (only.contains("local")) {
                s.local();
            }
            if (only.contains("docker")) {
                s.docker();
            }
            if (only.contains("docker-files")) {
                s.dockerFiles();
            }
            if (only.contains("ssh")) {
                s.ssh();
            }
            if (only.contains("cli")) {
                cli(s, plan);
            }
            Turns turns = new Turns(s);
            if (only.contains("turn-local")) {
                turns.local();
            }
            if (only.contains("turn-docker")) {
                turns.docker();
            }
            if (only.contains("turn-ssh")) {
                turns.ssh();
            }
            Cloud cloud = null;
            if (only.contains("turn-modal") || only.contains("turn-daytona") || only.contains("turn-vercel")) {
                cloud = new Cloud(s);
                if (only.contains("turn-modal")) {
                    cloud.modalTurn();
                }
                if (only.contains("turn-daytona")) {
                    cloud.daytonaTurn();
                }
                if (only.contains("turn-vercel")) {
                    cloud.vercelTurn();
                }
            }
            if (only.contains("modal") || only.contains("daytona") || only.contains("vercel")) {
                cloud = cloud == null ? new Cloud(s) : cloud;
                if (only.contains("modal")) {
                    cloud.modal();
                }
                if (only.contains("daytona")) {
                    cloud.daytona();
                }
                if (only.contains("vercel")) {
                    cloud.vercel();
                }
            }
        } finally {
            Services.deleteTree(work);
        }
        List<Row> rows = new ArrayList<>();
        for (Row r : s.rows) {
            rows.add(Verdicts.judge(r));
        }
        String table = Report.table(rows);
        System.out.println(table);
        if (results != null) {
            Results.write(results, table, s, plan, start, only.containsAll(GROUPS) ? null : String.join(",", only));
        }
    }

    private static void usage(String why) {
        System.err.println("bench: " + why + "; usage: bench/run [--quick] [--only " + String.join(",", GROUPS) + "] [--results DIR]");
        System.exit(2);
    }

    /** The small in-process scenarios under JMH: sample time in one fork each, medians in ms. */
    private static void jmh(Scenarios s, Plan plan) throws Exception {
        Progress.say("JMH: exec true and 4 KiB writes (" + plan.jmhIterations() + " iterations of 1 s per benchmark)");
        Options o = new OptionsBuilder().include(ExecBenchmark.class.getName()).forks(1)
                .warmupIterations(plan.quick() ? 1 : 3).warmupTime(TimeValue.seconds(1))
                .measurementIterations(plan.jmhIterations()).measurementTime(TimeValue.seconds(1))
                .jvmArgs("-Xmx256m", "-Djava.awt.headless=true").verbosity(VerboseMode.SILENT).build();
        Collection<RunResult> results = new Runner(o).run();
        Map<String, Sample> by = new java.util.HashMap<>();
        for (RunResult r : results) {
            String name = r.getParams().getBenchmark();
            var stats = r.getPrimaryResult().getStatistics();
            Sample x = new Sample();
            long n = stats.getN();
            for (long i = 0; i < Math.min(n, 1000); i++) {
                x.add(stats.getPercentile(50) / 1000.0); // ms to s: the median stands for the distribution
            }
            by.put(name.substring(name.lastIndexOf('.') + 1), x);
        }
        String how = "JMH sample time, one fork, %d x 1 s after warm-up";
        String h = String.format(how, plan.jmhIterations());
        s.rows.add(new Row("1", "local `exec true` (in-process)", "`env.exec(\"true\")`, " + h,
                "`ProcessBuilder` `bash -c true`, outputs read to EOF, waitFor; " + h,
                by.getOrDefault("airlockExecTrue", new Sample()), by.getOrDefault("processBuilderExecTrue", new Sample()),
                "<= 1.3", 1.3, ""));
        s.rows.add(new Row("1", "local `exec true`, reference also in a new session (`setsid`)", "`env.exec(\"true\")`, " + h,
                "`ProcessBuilder` `setsid bash -c true`, outputs read to EOF, waitFor; " + h,
                by.getOrDefault("airlockExecTrue", new Sample()), by.getOrDefault("processBuilderSetsidExecTrue", new Sample()),
                "(diagnostic)", Double.NaN, ""));
        s.rows.add(new Row("2", "local `files().write` 4 KiB (in-process)", "`files().write(path, bytes)`, " + h,
                "`Files.write(path, bytes)`, " + h, by.getOrDefault("airlockWrite4k", new Sample()),
                by.getOrDefault("filesWrite4k", new Sample()), "(no target; latency)", Double.NaN, ""));
    }

    /** {@code ./airlock exec true} against a bare {@code java -version}: whole processes, alternately. */
    private static void cli(Scenarios s, Plan plan) throws Exception {
        Path airlock = Path.of("airlock").toAbsolutePath();
        if (!Files.isExecutable(airlock)) {
            s.rows.add(Row.notMeasured("9", "CLI start", "<= java -version + 0.20 s", "run the bench from the repository root"));
            return;
        }
        Progress.say("CLI start: ./airlock exec true vs java -version");
        Sample a = new Sample();
        Sample r = new Sample();
        // The first run builds the jar if stale and makes the class-data archive: not timed.
        Meter.once(() -> Meter.program(List.of(airlock.toString(), "exec", "true"), null, true), null);
        String java = Scenarios.javaBin();
        int reps = plan.quick() ? 5 : 15;
        Meter.alternate(() -> Meter.program(List.of(airlock.toString(), "exec", "true"), null, true), a,
                () -> Meter.program(List.of(java, "-version"), null, true), r, plan.warmup() + 1, reps);
        double over = a.median() - r.median();
        String verdict = a.failures() > 0 ? "" : over <= 0.20 ? "met (+" + Report.seconds(over) + ")"
                : "miss: +" + Report.seconds(over) + " over java -version; see What remains";
        s.rows.add(new Row("9", "CLI start: `./airlock exec true` (local backend)", "the whole command, wall time",
                "`java -version`, wall time", a, r, "<= java -version + 0.20 s", Double.NaN, verdict));
    }
}
