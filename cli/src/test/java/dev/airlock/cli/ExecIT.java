package dev.airlock.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

import static dev.airlock.cli.Airlock.airlock;
import static dev.airlock.cli.Airlock.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code ./airlock exec} end to end: words, options, stdin and output bytes, exit statuses. */
class ExecIT {

    @Test
    void theReadmeCommandGreetsFromThisHost() throws Exception {
        Process uname = new ProcessBuilder("uname", "-n").start();
        String host = new String(uname.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        uname.waitFor();

        Airlock.Result r = airlock("exec", "echo hello from $(uname -n)").run();

        assertEquals(0, r.exit(), r::toString);
        assertEquals("hello from " + host + "\n", r.out());
        assertEquals("", r.err());
    }

    @Test
    void stdinReachesTheCommandAndItsStdoutComesBackByteExact() {
        byte[] random = new byte[1 << 20];
        new Random(42).nextBytes(random);

        Airlock.Result r = airlock("exec", "cat").stdin(random).run();

        assertEquals(0, r.exit(), r::toString);
        assertArrayEquals(random, r.stdout());
    }

    @Test
    void everyByteValueAndNulBytesSurviveStdinAndStdout() {
        byte[] all = new byte[256 * 4 + 1000];
        for (int i = 0; i < 1024; i++) {
            all[i] = (byte) i;
        }
        // the tail stays NUL bytes, and there is no trailing newline

        Airlock.Result r = airlock("exec", "cat").stdin(all).run();

        assertEquals(0, r.exit(), r::toString);
        assertArrayEquals(all, r.stdout());
    }

    @Test
    void emptyStdinIsEndOfInput() {
        Airlock.Result r = airlock("exec", "wc -c").stdin(new byte[0]).run();

        assertEquals(0, r.exit(), r::toString);
        assertEquals("0", r.out().strip());
    }

    @Test
    void dashNGivesTheCommandNoStdinSoCatExitsAtOnce() {
        // Our stdin is an open pipe nobody writes to: without -n, cat would wait on it forever.
        Airlock.Result r = airlock("exec", "-n", "cat").stdinLeftOpen().run();

        assertEquals(0, r.exit(), r::toString);
        assertEquals(0, r.stdout().length);
    }

    @Test
    void stdinStreamsLiveWhileOurStdinStaysOpen() {
        // The line must reach the command at once, not wait in a buffer for more input or for EOF.
        Airlock.Result r = airlock("exec", "read line; echo \"got $line\"").stdinLeftOpen(bytes("first line\n")).run();

        assertEquals(0, r.exit(), r::toString);
        assertEquals("got first line\n", r.out());
    }

    @Test
    void stdoutAndStderrStayApart() {
        Airlock.Result r = airlock("exec", "printf out; printf err >&2").run();

        assertEquals(0, r.exit(), r::toString);
        assertEquals("out", r.out());
        assertEquals("err", r.err());
    }

    @Test
    void wordsAreJoinedBySingleSpacesIntoOneShellCommandAsSshDoes() {
        Airlock.Result r = airlock("exec", "printf", "'%s|'", "a", "b c").run();

        assertEquals(0, r.exit(), r::toString);
        assertEquals("a|b|c|", r.out());
    }

    @Test
    void optionsAfterTheFirstWordBelongToTheCommand() {
        assertEquals("--timeout\n", airlock("exec", "echo", "--timeout").run().out());
        assertEquals("hi", airlock("exec", "echo", "-n", "hi").run().out());
        assertEquals("-- x\n", airlock("exec", "--", "echo", "--", "x").run().out());
    }

    @Test
    void anAtArgumentIsPassedLiterallyNeverReadAsAFile(@TempDir Path dir) {
        Airlock.write(dir.resolve("notes"), bytes("exec\necho\nexpanded\n"));

        Airlock.Result r = airlock("exec", "echo", "@notes").in(dir).run();

        assertEquals(0, r.exit(), r::toString);
        assertEquals("@notes\n", r.out());
    }

    @Test
    void cwdAndEnvReachTheCommand(@TempDir Path dir) throws IOException {
        Path real = dir.toRealPath();

        Airlock.Result r = airlock("exec", "--cwd", real.toString(), "--env", "GREETING=a b=c", "--env", "EMPTY=",
                "pwd; printf '%s|%s' \"$GREETING\" \"${EMPTY-unset}\"").run();

        assertEquals(0, r.exit(), r::toString);
        assertEquals(real + "\na b=c|", r.out());
    }

    @Test
    void theCommandsOwnExitStatusIsOurs() {
        Airlock.Result r = airlock("exec", "exit 7").run();

        assertEquals(7, r.exit(), r::toString);
        assertEquals("", r.err());
    }

    @Test
    void aTimeoutExits124AndSaysSo() {
        Airlock.Result r = airlock("exec", "--timeout", "1", "sleep 30").run();

        assertEquals(124, r.exit(), r::toString);
        assertEquals(List.of("airlock: timed out after 1s"), r.errLines());
    }

    @Test
    void aTimeoutTakesDurationsLikeEverySetting() {
        Airlock.Result r = airlock("exec", "--timeout", "500ms", "sleep 30").run();

        assertEquals(124, r.exit(), r::toString);
        assertEquals(List.of("airlock: timed out after 0.5s"), r.errLines());
        assertEquals(0, airlock("exec", "--timeout", "1m", "true").run().exit());
    }

    /**
     * In a session the command's shell has an EXIT trap (it saves the state), so when the timeout's
     * TERM reached the group, bash lived on long enough to report its killed foreground job on our
     * stderr: a stray "Terminated" above the timeout line. Only the timeout line may appear, and the
     * session still answers after.
     */
    @Test
    void aTimeoutInASessionSaysOnlyThatItTimedOut() {
        Path home = Airlock.stateDir();
        for (int i = 0; i < 3; i++) {
            Airlock.Result r = airlock("--set", "airlock.session=timeout", "exec", "--timeout", "1", "sleep 30")
                    .env("AIRLOCK_HOME", home.toString()).run();

            assertEquals(124, r.exit(), r::toString);
            assertEquals(List.of("airlock: timed out after 1s"), r.errLines());
        }
        Airlock.Result after = airlock("--set", "airlock.session=timeout", "exec", "-n", "echo still here")
                .env("AIRLOCK_HOME", home.toString()).run();
        assertEquals(0, after.exit(), after::toString);
        assertEquals("still here\n", after.out());
        assertEquals("", after.err());
    }

    @Test
    void execStreamsAndDoesNotCapOutput() {
        // the capture cap is for the library's captured results; exec hands every byte on as it comes
        Airlock.Result r = airlock("--set", "airlock.output.max-bytes=1k", "exec", "head -c 3000000 /dev/zero").run();

        assertEquals(0, r.exit(), r::toString);
        assertEquals(3_000_000, r.stdout().length);
    }

    @Test
    void aMisspelledSettingIsNamedWithTheKeyMeant() {
        Airlock.Result r = airlock("--set", "airlock.outptu.max-bytes=1", "exec", "true").run();

        assertEquals(0, r.exit(), r::toString);
        assertTrue(r.err().contains("unknown setting airlock.outptu.max-bytes; did you mean airlock.output.max-bytes?"), r::toString);

        Airlock.Result strict = airlock("--set", "airlock.outptu.max-bytes=1", "--set", "airlock.settings.strict=true",
                "exec", "true").run();
        assertEquals(125, strict.exit(), strict::toString);
        assertOneLine(strict, "airlock: usage: unknown setting airlock.outptu.max-bytes");
    }

    @Test
    void helpNamesACommandsOptions() {
        Airlock.Result r = airlock("help", "exec").run();

        assertEquals(0, r.exit(), r::toString);
        assertTrue(r.out().contains("--timeout=DURATION") || r.out().contains("--timeout DURATION"), r::out);
        Airlock.Result all = airlock("help").run();
        assertEquals(0, all.exit(), all::toString);
        assertTrue(all.out().contains("exec") && all.out().contains("doctor"), all::out);
    }

    @Test
    void zeroWordsIsAUsageError125() {
        Airlock.Result r = airlock("exec").run();

        assertEquals(125, r.exit(), r::toString);
        assertOneLine(r, "airlock: usage: ");
    }

    @Test
    void badOptionsBeforeTheFirstWordAreUsageErrors125() {
        for (List<String> args : List.of(List.of("exec", "--bogus", "true"), List.of("exec", "--timeout", "soon", "true"),
                List.of("exec", "--timeout", "0", "true"), List.of("exec", "--env", "NOEQUALS", "true"),
                List.of("exec", "--env", "1BAD=x", "true"))) {
            Airlock.Result r = airlock(args.toArray(String[]::new)).run();
            assertEquals(125, r.exit(), () -> args + ": " + r);
            assertOneLine(r, "airlock: usage: ");
        }
    }

    @Test
    void anUnknownBackendIsAUsageError125() {
        Airlock.Result r = airlock("--backend", "nope", "exec", "true").run();

        assertEquals(125, r.exit(), r::toString);
        assertOneLine(r, "airlock: usage: no backend named 'nope'");
    }

    @Test
    void aSecretKeyInSetIsRefused125() {
        Airlock.Result r = airlock("--set", "airlock.modal.token-secret=hunter2", "exec", "true").run();

        assertEquals(125, r.exit(), r::toString);
        assertOneLine(r, "airlock: usage: --set refuses the secret key");
        assertTrue(!r.err().contains("hunter2"), "the secret value must not be echoed");
    }

    @Test
    void aReaderThatGoesAwayStopsTheCommandLikeSigpipe() throws Exception {
        // `airlock exec yes | head -c 5`: yes must not run on forever once nobody reads.
        String marker = "airlock-it-" + System.nanoTime();
        Process p = airlock("exec", "-n", "yes", marker).start();
        byte[] first = p.getInputStream().readNBytes(5);
        p.getInputStream().close();
        Airlock.Result r = Airlock.finish(p, CompletableFuture.completedFuture(first),
                CompletableFuture.supplyAsync(() -> Airlock.readAll(p.getErrorStream())),
                CompletableFuture.completedFuture(null));

        assertEquals(141, r.exit(), r::toString);
        assertEquals("", r.err());
        Processes.assertNoneRunning("yes", marker);
    }

    static void assertOneLine(Airlock.Result r, String prefix) {
        assertEquals(1, r.errLines().size(), () -> "exactly one stderr line expected: " + r.err());
        assertTrue(r.err().startsWith(prefix), () -> "stderr should start with '" + prefix + "': " + r.err());
    }
}
