package dev.airlock.bench;

import dev.airlock.Environments;
import dev.airlock.settings.Settings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The agent turn ({@link Turn}) on the local, docker and ssh backends, each against what a user
 * would run instead: {@code java.nio.file} and {@code ProcessBuilder}; the Docker CLI on a
 * container of its own ({@code docker run -d}, {@code docker exec}, {@code docker cp},
 * {@code docker rm -f}); OpenSSH over a {@code ControlMaster} connection it opens and closes.
 * Every turn, on both sides, opens its own environment (container, connection) and closes it.
 */
final class Turns {
    /** The docker image of the turn: the test image with the three files to read baked in. */
    static final String DOCKER_IMAGE = "airlock-bench/turn:1";
    private static final String DOCKER_DIR = "/srv/turn";

    private final Scenarios s;
    private final byte[] content = new byte[Turn.FILE_BYTES];

    Turns(Scenarios s) {
        this.s = s;
        new java.util.Random(35).nextBytes(content);
    }

    /** Three 4 KiB files to read and a directory to write in, on this host (local and ssh). */
    private Turn.Paths hostFiles(String name) throws IOException {
        Path dir = Files.createDirectories(s.work.resolve("turn-" + name));
        List<String> reads = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            Path f = dir.resolve("r" + i);
            Files.write(f, content);
            reads.add(f.toString());
        }
        return new Turn.Paths(reads, List.of(dir.resolve("w1").toString(), dir.resolve("w2").toString()), dir.toString());
    }

    void local() throws Exception {
        Turn.Paths a = hostFiles("local-airlock");
        Turn.Paths r = hostFiles("local-reference");
        Turn.Work reference = clock -> {
            clock.step(); // nothing to open: the files and programs are there
            for (String p : r.reads()) {
                Streams.expect(Turn.FILE_BYTES, Files.readAllBytes(Path.of(p)).length, "read " + p);
                clock.step();
            }
            for (String p : r.writes()) {
                Files.write(Path.of(p), content);
                clock.step();
            }
            for (Turn.Command c : r.commands()) {
                Turn.Ran ran = Turn.program(List.of("bash", "-c", c.line()), null, false, false);
                Turn.check(c, ran.exit(), ran.out().length);
                clock.step();
            }
            clock.step(); // nothing to close
        };
        Turn.Result[] res = Turn.alternate("local agent turn",
                Turn.airlock(() -> Environments.open(Settings.of("airlock.backend", "local", "airlock.local.workdir", a.dir())), a, content), reference,
                s.plan.warmup() + 1, s.plan.turnPairs("local"));
        s.rows.addAll(Turn.rows("local", res, "the defaults (bubblewrap isolation) with the turn's directory as `airlock.local.workdir`, in this JVM, wall time of the whole turn",
                "`java.nio.file` (`Files.readAllBytes`, `Files.write`) and `ProcessBuilder` `bash -c` (stdout read whole, "
                        + "waitFor) in this JVM, wall time; open and close have nothing to do",
                1.5, null, "- (absolute target)", "<= 20 ms", 0.020, "-"));
        // The same turn without bubblewrap: what the sandbox costs apart from the rest of Airlock.
        Turn.Paths n = hostFiles("local-none");
        Turn.Result[] none = Turn.alternate("local agent turn, isolation none",
                Turn.airlock(() -> Environments.open(Settings.of("airlock.backend", "local", "airlock.local.workdir", n.dir(),
                        "airlock.local.isolation", "none")), n, content), reference, s.plan.warmup() + 1, s.plan.turnPairs("local"));
        s.rows.add(new Row("35", "local agent turn, `airlock.local.isolation=none`",
                "as above without bubblewrap (`airlock.local.isolation=none`); " + Turn.steps(none[0]),
                "as above; " + Turn.steps(none[1]), none[0].total, none[1].total, "(diagnostic)", Double.NaN, ""));
    }

    void docker() throws Exception {
        String why = Services.whyNoDocker();
        if (why != null) {
            s.rows.add(Row.notMeasured("35", "docker agent turn", "<= 1.0", why));
            return;
        }
        Path local = s.work.resolve("turn-docker-w");
        Files.write(local, content);
        bakeImage();
        try {
            Turn.Paths f = new Turn.Paths(List.of(DOCKER_DIR + "/r1", DOCKER_DIR + "/r2", DOCKER_DIR + "/r3"),
                    List.of(DOCKER_DIR + "/w1", DOCKER_DIR + "/w2"), DOCKER_DIR);
            Turn.Work reference = clock -> {
                String cid = new String(Turn.ok(List.of("docker", "run", "-d", "--network", "none", "--label", "airlock.bench=true",
                        DOCKER_IMAGE, "sleep", "inf"), null, true, false)).strip();
                try {
                    clock.step();
                    for (String p : f.reads()) {
                        Streams.expect(Turn.FILE_BYTES, Turn.ok(List.of("docker", "exec", cid, "cat", p), null, true, false).length, "read " + p);
                        clock.step();
                    }
                    for (String p : f.writes()) {
                        Turn.ok(List.of("docker", "cp", local.toString(), cid + ":" + p), null, true, false);
                        clock.step();
                    }
                    for (Turn.Command c : f.commands()) {
                        Turn.Ran ran = Turn.program(List.of("docker", "exec", cid, "sh", "-c", c.line()), null, true, false);
                        Turn.check(c, ran.exit(), ran.out().length);
                        clock.step();
                    }
                } finally {
                    Turn.ok(List.of("docker", "rm", "-f", cid), null, true, false);
                }
                clock.step();
            };
            Turn.Result[] res = Turn.alternate("docker agent turn",
                    Turn.airlock(() -> Environments.open(Settings.of("airlock.backend", "docker", "airlock.docker.image", DOCKER_IMAGE)),
                            f, content), reference, s.plan.warmup(), s.plan.turnPairs("docker"));
            s.rows.addAll(Turn.rows("docker", res, "`airlock.docker.image` (a new container each turn), wall time of the whole turn",
                    "Docker CLI: `docker run -d --network none IMAGE sleep inf`, reads `docker exec ID cat`, writes `docker cp`,"
                            + " execs `docker exec ID sh -c`, `docker rm -f`; wall time",
                    1.0, t -> t[Turn.OPEN] + t[Turn.EXEC_TRUE],
                    "`docker run -d --network none IMAGE sleep inf` plus one `docker exec ID sh -c true` (the reference turn's first exec)",
                    "<= 1.1", 1.1, "`docker rm -f ID`"));
        } finally {
            Services.run(List.of("docker", "image", "rm", "-f", DOCKER_IMAGE), 60);
        }
    }

    /** The test image with {@code /srv/turn/r1..r3} (4 KiB each), committed once, outside any timing. */
    private void bakeImage() throws IOException {
        String cid = Services.startContainer();
        try {
            Services.Result r = Services.run(List.of("docker", "exec", cid, "sh", "-c", "mkdir -p " + DOCKER_DIR
                    + " && for i in 1 2 3; do head -c " + Turn.FILE_BYTES + " /dev/urandom > " + DOCKER_DIR + "/r$i; done"), 60);
            if (r.exit() != 0) {
                throw new IOException("could not write the turn's files: " + r.out().strip());
            }
            r = Services.run(List.of("docker", "commit", cid, DOCKER_IMAGE), 120);
            if (r.exit() != 0) {
                throw new IOException("docker commit failed: " + r.out().strip());
            }
        } finally {
            Services.stopContainer(cid);
        }
    }

    void ssh() throws Exception {
        String why = Services.Sshd.whyNot();
        if (why != null) {
            s.rows.add(Row.notMeasured("35", "ssh agent turn", "<= 1.0", why));
            return;
        }
        try (Services.Sshd sshd = Services.Sshd.start()) {
            Turn.Paths a = hostFiles("ssh-airlock");
            Turn.Paths r = hostFiles("ssh-reference");
            AtomicInteger n = new AtomicInteger();
            Turn.Work reference = clock -> {
                // A socket of its own per turn: nothing of an earlier turn's connection is reused.
                String path = sshd.dir.resolve("t" + n.incrementAndGet()).toString();
                Turn.ok(ssh(sshd, path, "auto", "true"), null, true, true); // connects; the connection stays as the master
                try {
                    clock.step();
                    for (String p : r.reads()) {
                        Streams.expect(Turn.FILE_BYTES, Turn.ok(ssh(sshd, path, "no", "cat " + p), null, true, false).length, "read " + p);
                        clock.step();
                    }
                    for (String p : r.writes()) {
                        Turn.ok(ssh(sshd, path, "no", "cat > " + p), content, true, false);
                        clock.step();
                    }
                    for (Turn.Command c : r.commands()) {
                        Turn.Ran ran = Turn.program(ssh(sshd, path, "no", c.line()), null, true, false);
                        Turn.check(c, ran.exit(), ran.out().length);
                        clock.step();
                    }
                } finally {
                    List<String> exit = ssh(sshd, path, "no", "true");
                    exit.remove(exit.size() - 1);
                    exit.addAll(1, List.of("-O", "exit"));
                    Turn.ok(exit, null, true, true);
                }
                clock.step();
            };
            Map<String, String> settings = sshd.settings();
            Turn.Result[] res = Turn.alternate("ssh agent turn", Turn.airlock(() -> Environments.open(Settings.of(settings)), a, content),
                    reference, s.plan.warmup(), s.plan.turnPairs("ssh"));
            s.rows.addAll(Turn.rows("ssh", res, "a new connection each turn, wall time of the whole turn",
                    "OpenSSH: a fresh `ssh HOST true` that stays as the turn's `ControlMaster` (`ControlPersist`), then reads"
                            + " `ssh HOST cat`, writes `ssh HOST 'cat > F'`, execs `ssh HOST CMD` over it, `ssh -O exit`; wall time",
                    1.0, t -> t[Turn.OPEN], "a fresh `ssh HOST true` (new connection; it stays as the master)",
                    "<= 1.1", 1.1, "`ssh -O exit` (the master's end)"));
        }
    }

    /** OpenSSH to the bench's sshd through {@code controlPath}; {@code master} "auto" makes the first call the master. */
    private static List<String> ssh(Services.Sshd sshd, String controlPath, String master, String command) {
        List<String> a = sshd.ssh(false, command);
        a.addAll(1, List.of("-o", "ControlMaster=" + master, "-o", "ControlPath=" + controlPath, "-o", "ControlPersist=yes"));
        return a;
    }
}
