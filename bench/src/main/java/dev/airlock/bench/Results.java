package dev.airlock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * RESULTS.md: how the run was made, the table, the growth charts (PNG next to it) and the
 * hand-written analysis kept in {@code analysis.md} in the same directory (what remains and why).
 */
final class Results {
    private Results() {
    }

    /**
     * Writes RESULTS.md. After a run of only some groups ({@code only} names them; null for a
     * full run) the rows of the other groups are kept: an existing RESULTS.md's table keeps every
     * row, each replaced by this run's row of the same scenario, and this run's new rows follow;
     * its header line, method paragraph, charts and growth points stay as they were.
     */
    static void write(Path dir, String table, Scenarios s, Plan plan, Instant start, String only) throws IOException {
        Files.createDirectories(dir);
        Path file = dir.resolve("RESULTS.md");
        if (only != null && Files.exists(file)) {
            merge(file, table, plan, start, only);
            return;
        }
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

    private static void merge(Path file, String table, Plan plan, Instant start, String only) throws IOException {
        List<String> old = Files.readAllLines(file);
        int tableStart = tableStart(old);
        int growth = old.indexOf("## How cost grows");
        if (tableStart < 0 || growth < tableStart) {
            throw new IOException(file + " has no results table and growth section to keep rows of; run bench/run in full,"
                    + " or move it away");
        }
        int tableEnd = tableStart;
        while (tableEnd < old.size() && old.get(tableEnd).startsWith("|")) {
            tableEnd++;
        }
        List<String> rows = new ArrayList<>(old.subList(tableStart, tableEnd));
        List<String> fresh = table.lines().toList();
        for (String row : fresh.subList(2, fresh.size())) {
            int at = -1;
            for (int i = 2; i < rows.size(); i++) {
                if (scenario(rows.get(i)).equals(scenario(row))) {
                    at = i;
                    break;
                }
            }
            if (at >= 0) {
                rows.set(at, row);
            } else {
                rows.add(row);
            }
        }
        // The analysis (analysis.md) is appended after the growth points; it starts at the next heading.
        int analysis = growth + 1;
        while (analysis < old.size() && !old.get(analysis).startsWith("## ")) {
            analysis++;
        }
        List<String> out = new ArrayList<>();
        for (String l : old.subList(0, tableStart)) {
            out.add(l.startsWith("Made by ") ? l + " The rows of `--only " + only + "` were remade by `bench/run"
                    + (plan.quick() ? " --quick" : "") + " --only " + only + "` on " + start
                    + String.format(Locale.ROOT, " (%.0f min); the others, the charts and the growth points are the earlier run's.",
                    Duration.between(start, Instant.now()).toSeconds() / 60.0) : l);
        }
        out.addAll(rows);
        out.addAll(old.subList(tableEnd, analysis));
        StringBuilder b = new StringBuilder(String.join("\n", out)).append('\n');
        Path analysisFile = file.resolveSibling("analysis.md");
        if (Files.exists(analysisFile)) {
            b.append(Files.readString(analysisFile)); // the kept lines end with the blank line before it
        }
        Files.writeString(file, b.toString());
        Progress.say("merged this run's rows into " + file);
    }

    private static int tableStart(List<String> lines) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("| # | scenario |")) {
                return i;
            }
        }
        return -1;
    }

    /** A table line's scenario cell: the key a remade row replaces an old one by. */
    private static String scenario(String row) {
        String[] cells = row.split(" \\| ", 3);
        return cells.length > 1 ? cells[1] : row;
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
