package dev.airlock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;

/**
 * RESULTS.md: how the run was made, the table, the growth charts (PNG next to it) and the
 * hand-written analysis kept in {@code analysis.md} in the same directory (what remains and why).
 */
final class Results {
    private Results() {
    }

    static void write(Path dir, String table, Scenarios s, Plan plan, Instant start) throws IOException {
        Files.createDirectories(dir);
        StringBuilder b = new StringBuilder();
        b.append("# Benchmark results\n\n");
        b.append("Made by `bench/run").append(plan.quick() ? " --quick" : "").append("` on ").append(start)
                .append(String.format(Locale.ROOT, " (%.0f min). ", Duration.between(start, Instant.now()).toSeconds() / 60.0))
                .append(machine()).append("\n\n");
        b.append("Ratio = Airlock median / reference median; lower is better. Both sides run alternately in one JVM "
                + "(A B, B A, ...) after ").append(plan.warmup()).append(" warm-up round(s); ").append(plan.reps())
                .append(" repetitions per side (2 at 1 GiB). Setup (environment open, container, connection) is outside "
                + "the timing on both sides. Peak heap is this JVM's heap pools' peak over one repetition; peak RSS is "
                + "this JVM's VmHWM (reset per repetition through /proc/self/clear_refs) or, for a reference that is "
                + "another program (Docker CLI, OpenSSH, java -version), that program's maximum RSS from /usr/bin/time.\n\n");
        b.append(table).append('\n');
        b.append("## How cost grows\n\n");
        chart(b, dir, "growth-stdin.png", "stdin: median seconds by size (MiB)", "MiB", "stdin", s);
        chart(b, dir, "growth-stdout.png", "stdout: median seconds by size (MiB)", "MiB", "stdout", s);
        chart(b, dir, "growth-exec.png", "exec true: median latency by concurrent commands", "concurrent commands", "exec", s);
        b.append(points(s));
        Path analysis = dir.resolve("analysis.md");
        if (Files.exists(analysis)) {
            b.append('\n').append(Files.readString(analysis));
        }
        Files.writeString(dir.resolve("RESULTS.md"), b.toString());
        Progress.say("wrote " + dir.resolve("RESULTS.md"));
    }

    private static void chart(StringBuilder b, Path dir, String file, String title, String x, String suffix, Scenarios s)
            throws IOException {
        String y = suffix.equals("exec") ? "seconds per command (median)" : "seconds (median)";
        Path f = dir.resolve(file);
        Files.deleteIfExists(f); // a chart of an earlier run must not stand for this one
        if (Charts.draw(f, title, x, y, s.growth, suffix, s.references)) {
            b.append("![").append(title).append("](").append(file).append(")\n\n");
        }
    }

    /** The growth points as a table too, so the numbers behind each chart are in the text. */
    private static String points(Scenarios s) {
        StringBuilder b = new StringBuilder("| series | x | Airlock median | reference median | ratio |\n|---|---|---|---|---|\n");
        s.growth.forEach((label, pts) -> pts.forEach((x, v) -> b.append("| ").append(label).append(" vs ")
                .append(s.references.getOrDefault(label.split(" ")[0], "reference")).append(" | ").append(x)
                .append(label.endsWith("exec") ? " at once" : " MiB").append(" | ").append(Report.seconds(v[0]))
                .append(" | ").append(Report.seconds(v[1])).append(" | ")
                .append(String.format(Locale.ROOT, "%.2f", v[0] / v[1])).append(" |\n")));
        return b.toString();
    }

    private static String machine() {
        String cpu = "";
        try {
            cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                    .map(l -> l.substring(l.indexOf(':') + 1).strip()).findFirst().orElse("");
        } catch (IOException ignored) {
            // not Linux: the core count is still known
        }
        return Runtime.getRuntime().availableProcessors() + " cores (" + cpu + "), Java " + System.getProperty("java.version")
                + ", " + System.getProperty("os.name") + " " + System.getProperty("os.version") + ".";
    }
}
