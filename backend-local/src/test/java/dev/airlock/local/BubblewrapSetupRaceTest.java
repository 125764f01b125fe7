package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Bubblewrap copies the host's mounts while it sets a sandbox up; a container starting or
 * stopping meanwhile makes it fail ("Can't bind mount /oldroot/ ...: No such file or directory")
 * before anything of the command ran. Such a failure is started again; any other bubblewrap error
 * is the command's, at once. Driven by a bwrap of the test's own ({@code airlock.local.bwrap}) that
 * fails the next N starts with the words the real one used, then is the real one.
 */
class BubblewrapSetupRaceTest {
    @TempDir
    Path dir;

    private static final String RACE = "bwrap: Can't bind mount /oldroot/ on /newroot/: Unable to apply mount flags: remount"
            + " \"/newroot/var/lib/containers/storage/overlay/0123/merged\": No such file or directory";

    /**
     * A bwrap that, for a command holding {@code race-me} (the test's own, not the core's scripts),
     * counts its starts and, while the file {@code failures} holds a number above 0, counts it down
     * and fails with {@code words}.
     */
    private Path flakyBwrap(String words) throws Exception {
        Path real = Path.of(Bubblewrap.find(LocalSettings.from(Settings.empty())).orElseThrow().toString());
        Path script = dir.resolve("bwrap");
        Files.writeString(script, "#!/bin/sh\n"
                + "f=" + dir.resolve("failures") + "\n"
                + "case \"$*\" in *race-me*) echo x >> " + dir.resolve("starts") + " ;; *) exec " + real + " \"$@\" ;; esac\n"
                + "n=$(cat \"$f\" 2>/dev/null || echo 0)\n"
                + "if [ \"$n\" -gt 0 ]; then echo $((n - 1)) > \"$f\"; printf '%s\\n' '" + words.replace("'", "'\\''") + "' >&2; exit 1; fi\n"
                + "exec " + real + " \"$@\"\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        return script;
    }

    private Environment open(Path bwrap) {
        return Environments.open(Settings.of("airlock.container", "no", "airlock.local.isolation", "bwrap",
                "airlock.local.bwrap", bwrap.toString(), "airlock.local.workdir", dir.toString()));
    }

    private int startsSince(int before) throws Exception {
        return (int) Files.readString(dir.resolve("starts")).lines().count() - before;
    }

    private int starts() throws Exception {
        return Files.exists(dir.resolve("starts")) ? (int) Files.readString(dir.resolve("starts")).lines().count() : 0;
    }

    @Test
    void aMountThatWentAwayDuringSetUpIsStartedAgainAndTheCommandRunsOnce() throws Exception {
        BubblewrapRequirement.require();
        try (Environment env = open(flakyBwrap(RACE))) {
            Path ran = dir.resolve("ran");
            Files.writeString(dir.resolve("failures"), "2");
            int before = starts();
            ExecResult r = env.exec(ExecRequest.of(": race-me; echo once >> " + ran + "; printf 'out'; printf 'err' >&2; exit 3"));
            assertEquals(3, r.exitCode(), r.stderr().text());
            assertEquals("out", r.stdout().text());
            assertEquals("err", r.stderr().text(), "no marker byte, nothing of bubblewrap's failed attempts");
            assertEquals("once\n", Files.readString(ran, StandardCharsets.UTF_8));
            assertEquals(3, startsSince(before), "two failed set-ups, then the one that ran");
        }
    }

    @Test
    void anotherBubblewrapFailureOrOneThatKeepsRacingIsTheCommandsAtOnce() throws Exception {
        BubblewrapRequirement.require();
        try (Environment env = open(flakyBwrap("bwrap: Creating new namespace failed: Operation not permitted"))) {
            Files.writeString(dir.resolve("failures"), "1");
            int before = starts();
            ExecResult r = env.exec(ExecRequest.of(": race-me"));
            assertEquals(1, r.exitCode());
            assertEquals("bwrap: Creating new namespace failed: Operation not permitted\n", r.stderr().text(), "bubblewrap's words, whole");
            assertEquals(1, startsSince(before), "not started again");
        }
        try (Environment env = open(flakyBwrap(RACE))) {
            Files.writeString(dir.resolve("failures"), "5");
            int before = starts();
            ExecResult r = env.exec(ExecRequest.of(": race-me"));
            assertEquals(1, r.exitCode());
            assertEquals(RACE + "\n", r.stderr().text());
            assertEquals(3, startsSince(before), "three attempts at most");
        }
    }
}
