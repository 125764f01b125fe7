package dev.airlock.bench;

import dev.airlock.Environments;
import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.EmulatorCredentials;
import dev.airlock.emulator.Emulators;
import dev.airlock.settings.Settings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Where an Airlock agent turn's time goes, step by step: the measurement behind bench/analysis.md's
 * "Agent turn" (not run by bench/run). After one warm-up turn it runs one more and prints, for each
 * step, its milliseconds and what it cost: on local and ssh the programs started (execve, counted
 * with strace on this JVM, and on ssh on the bench's sshd too), on docker the daemon's events
 * (container, volume, exec), on the cloud backends the emulator's calls.
 * Usage: {@code java -cp bench/target/airlock-bench.jar dev.airlock.bench.TurnProbe local|local-none|docker|ssh|modal|daytona|vercel}
 * from the repository root (strace and, for docker, dockerd needed).
 */
final class TurnProbe {
    private TurnProbe() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        String backend = args.length == 1 ? args[0] : "";
        Path work = Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir"), "airlock-probe-" + ProcessHandle.current().pid()));
        byte[] content = new byte[Turn.FILE_BYTES];
        new java.util.Random(35).nextBytes(content);
        try {
            switch (backend) {
                case "local", "local-none", "ssh" -> hostTurn(backend, work, content);
                case "docker" -> docker(content);
                case "modal", "daytona", "vercel" -> cloud(backend, content);
                default -> {
                    System.err.println("usage: TurnProbe local|local-none|docker|ssh|modal|daytona|vercel");
                    System.exit(2);
                }
            }
        } finally {
            Services.deleteTree(work);
        }
    }

    /** One warm-up turn, then one turn whose step boundaries (wall clock) come back. */
    private static List<Instant> turn(Turn.Opener open, Turn.Paths f, byte[] content) throws Exception {
        Turn.airlock(open, f, content).turn(new Turn.Clock());
        List<Instant> marks = new ArrayList<>();
        marks.add(Instant.now());
        Turn.Clock c = new Turn.Clock() {
            @Override
            void step() {
                super.step();
                marks.add(Instant.now());
            }
        };
        Turn.airlock(open, f, content).turn(c);
        return marks;
    }

    private static Turn.Paths hostFiles(Path work, byte[] content) throws IOException {
        Path dir = Files.createDirectories(work.resolve("turn"));
        List<String> reads = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            Files.write(dir.resolve("r" + i), content);
            reads.add(dir.resolve("r" + i).toString());
        }
        return new Turn.Paths(reads, List.of(dir + "/w1", dir + "/w2"), dir.toString());
    }

    /** local and ssh: programs started per step, from strace on this JVM (and on sshd). */
    private static void hostTurn(String backend, Path work, byte[] content) throws Exception {
        Turn.Paths f = hostFiles(work, content);
        Services.Sshd sshd = backend.equals("ssh") ? Services.Sshd.start() : null;
        try {
            Settings settings = sshd != null ? Settings.of(sshd.settings())
                    : Settings.of("airlock.backend", "local", "airlock.local.workdir", f.dir(),
                    "airlock.local.isolation", backend.equals("local-none") ? "none" : "bwrap");
            Path mine = work.resolve("strace-jvm");
            Path theirs = work.resolve("strace-sshd");
            List<Process> tracers = new ArrayList<>();
            tracers.add(strace(ProcessHandle.current().pid(), mine));
            if (sshd != null) {
                tracers.add(strace(Long.parseLong(Files.readString(sshd.dir.resolve("sshd.pid")).strip()), theirs));
            }
            Thread.sleep(1500); // strace attaches to every thread before the turn starts
            List<Instant> marks = turn(() -> Environments.open(settings), f, content);
            Thread.sleep(500);
            for (Process p : tracers) {
                p.destroy();
                p.waitFor(10, TimeUnit.SECONDS);
            }
            List<List<String>> counts = new ArrayList<>();
            counts.add(execs(mine));
            if (sshd != null) {
                counts.add(execs(theirs));
            }
            print(backend, marks, t -> {
                StringBuilder b = new StringBuilder();
                for (int i = 0; i < counts.size(); i++) {
                    List<String> in = within(counts.get(i), t);
                    b.append(i == 0 ? "this JVM started " : "; sshd started ").append(in.size()).append(' ').append(summary(in));
                }
                return b.toString();
            });
        } finally {
            if (sshd != null) {
                sshd.close();
            }
        }
    }

    private static Process strace(long pid, Path out) throws IOException {
        return new ProcessBuilder("strace", "-f", "-qq", "-tt", "-e", "trace=execve", "-e", "signal=none", "-o", out.toString(),
                "-p", Long.toString(pid)).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    }

    /** "HH:MM:SS.micros program" for each successful execve in an strace log. */
    private static List<String> execs(Path log) throws IOException {
        List<String> out = new ArrayList<>();
        for (String l : Files.readAllLines(log)) {
            int e = l.indexOf("execve(\"");
            if (e < 0 || l.contains("= -1")) {
                continue;
            }
            String[] w = l.trim().split("\\s+");
            String prog = l.substring(e + 8, l.indexOf('"', e + 8));
            out.add(w[1] + " " + prog.substring(prog.lastIndexOf('/') + 1));
        }
        return out;
    }

    private static List<String> within(List<String> stamped, Instant[] window) {
        LocalTime from = LocalTime.ofInstant(window[0], ZoneId.systemDefault());
        LocalTime to = LocalTime.ofInstant(window[1], ZoneId.systemDefault());
        List<String> in = new ArrayList<>();
        for (String s : stamped) {
            LocalTime t = LocalTime.parse(s.substring(0, s.indexOf(' ')));
            if (!t.isBefore(from) && t.isBefore(to)) {
                in.add(s.substring(s.indexOf(' ') + 1));
            }
        }
        return in;
    }

    private static String summary(List<String> names) {
        Map<String, Integer> n = new TreeMap<>();
        names.forEach(x -> n.merge(x, 1, Integer::sum));
        return n.isEmpty() ? "" : n.toString();
    }

    /** docker: the daemon's events per step (container, volume, network and exec actions). */
    private static void docker(byte[] content) throws Exception {
        Services.Result img = Services.run(List.of("docker", "image", "inspect", Turns.DOCKER_IMAGE), 30);
        if (img.exit() != 0) {
            throw new IOException("make " + Turns.DOCKER_IMAGE + " first (bench/run --only turn-docker removes it at its end; "
                    + "docker commit a container of " + Services.IMAGE + " with /srv/turn/r1..r3)");
        }
        Turn.Paths f = new Turn.Paths(List.of("/srv/turn/r1", "/srv/turn/r2", "/srv/turn/r3"),
                List.of("/srv/turn/w1", "/srv/turn/w2"), "/srv/turn");
        Settings settings = Settings.of("airlock.backend", "docker", "airlock.docker.image", Turns.DOCKER_IMAGE);
        List<Instant> marks = turn(() -> Environments.open(settings), f, content);
        Services.Result ev = Services.run(List.of("docker", "events", "--since", Long.toString(marks.get(0).getEpochSecond() - 1),
                "--until", Long.toString(marks.get(marks.size() - 1).getEpochSecond() + 1),
                "--format", "{{.TimeNano}} {{.Type}}:{{.Action}}"), 60);
        List<long[]> times = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (String l : ev.out().split("\n")) {
            String[] w = l.strip().split(" ", 2);
            if (w.length == 2 && w[0].matches("\\d+")) {
                times.add(new long[] {Long.parseLong(w[0])});
                int colon = w[1].indexOf(": ");
                String rest = colon < 0 ? "" : w[1].substring(colon + 2);
                names.add(colon < 0 ? w[1] : w[1].substring(0, colon) + "(" + (rest.length() > 30 ? rest.substring(0, 30) + "..." : rest) + ")");
            }
        }
        print("docker", marks, w -> {
            long from = w[0].getEpochSecond() * 1_000_000_000L + w[0].getNano();
            long to = w[1].getEpochSecond() * 1_000_000_000L + w[1].getNano();
            List<String> in = new ArrayList<>();
            for (int i = 0; i < times.size(); i++) {
                if (times.get(i)[0] >= from && times.get(i)[0] < to) {
                    in.add(names.get(i));
                }
            }
            return "daemon events " + in.size() + " " + summary(in);
        });
    }

    /** Modal, Daytona, Vercel: the emulator's calls per step (the journal keeps each with its order, not its time). */
    private static void cloud(String backend, byte[] content) throws Exception {
        try (Emulators.Served served = Emulators.start(backend, "127.0.0.1:0", Settings.empty(), TurnProbe.class.getClassLoader())) {
            String url = served.emulator().url().toString();
            EmulatorCredentials c = served.emulator().credentials();
            Map<String, String> m = switch (backend) {
                case "modal" -> Map.of("airlock.backend", "modal", "airlock.modal.server-url", url, "airlock.modal.image", "alpine:3.21",
                        "airlock.modal.token-id", c.value("MODAL_TOKEN_ID"), "airlock.modal.token-secret", c.value("MODAL_TOKEN_SECRET"));
                case "daytona" -> Map.of("airlock.backend", "daytona", "airlock.daytona.api-url", url,
                        "airlock.daytona.api-key", c.value("DAYTONA_API_KEY"));
                default -> Map.of("airlock.backend", "vercel", "airlock.vercel.api-url", url, "airlock.vercel.token", c.value("VERCEL_TOKEN"),
                        "airlock.vercel.project-id", "prj_airlock", "airlock.vercel.team-id", c.value("VERCEL_TEAM_ID"));
            };
            Settings settings = Settings.of(m);
            List<String> reads = Cloud.hostFiles();
            Turn.Paths f = new Turn.Paths(reads, List.of("/tmp/airlock-turn-w1", "/tmp/airlock-turn-w2"), "/tmp");
            CallJournal journal = served.journal();
            Turn.airlock(() -> Environments.open(settings), f, content).turn(new Turn.Clock());
            List<Integer> at = new ArrayList<>();
            List<Instant> marks = new ArrayList<>();
            marks.add(Instant.now());
            at.add(journal.size());
            Turn.Clock clock = new Turn.Clock() {
                @Override
                void step() {
                    super.step();
                    marks.add(Instant.now());
                    at.add(journal.size());
                }
            };
            Turn.airlock(() -> Environments.open(settings), f, content).turn(clock);
            List<CallJournal.Entry> all = journal.entries();
            int[] step = {0};
            print(backend, marks, w -> {
                int i = step[0]++;
                List<String> calls = new ArrayList<>();
                for (CallJournal.Entry e : all.subList(at.get(i), at.get(i + 1))) {
                    calls.add(e.call() + (e.command().isEmpty() ? "" : "(" + firstWord(e.command()) + ")"));
                }
                return "emulator calls " + calls.size() + " " + summary(calls);
            });
        }
    }

    private static String firstWord(String command) {
        String c = command.strip();
        return c.length() > 40 ? c.substring(0, 40).replace('\n', ' ') + "..." : c.replace('\n', ' ');
    }

    private static void print(String backend, List<Instant> marks, Function<Instant[], String> what) {
        System.out.println(backend + " agent turn, one turn after a warm-up one:");
        for (int i = 0; i < Turn.STEPS.size(); i++) {
            Instant[] w = {marks.get(i), marks.get(i + 1)};
            double ms = java.time.Duration.between(w[0], w[1]).toNanos() / 1e6;
            System.out.printf(java.util.Locale.ROOT, "  %-10s %8.1f ms  %s%n", Turn.STEPS.get(i), ms, what.apply(w));
        }
    }
}
