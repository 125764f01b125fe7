package dev.airlock.spi;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The control shell against a real {@code sh} on this host, started the way a backend would. */
class ControlShellTest {
    private static final Duration BOUND = Duration.ofSeconds(2);

    /** A host process as a backend's {@link RemoteProcess}; {@code prelude} runs before the loop (a login's startup). */
    private static Process start(String prelude) throws IOException {
        return new ProcessBuilder("sh", "-c", prelude + "\n" + ControlShell.LOOP).start();
    }

    private static RemoteProcess remote(Process p) {
        return HostProcesses.remote(p);
    }

    @Test
    void whatALoginPrintsIsDroppedAndEachScriptGetsItsOwnOutput() throws Exception {
        Process p = start("printf 'Welcome!\\n@not-the-answer'; printf 'to stderr, more than a pipe holds\\n%.0s' $(seq 1 10000) >&2");
        try (ControlShell c = ControlShell.start(remote(p), "test", BOUND, BOUND)) {
            assertEquals("a\nb\n", c.run("echo a; echo b"), "the script's output exactly");
            assertEquals("", c.run("true"));
            assertEquals("no newline", c.run("printf 'no newline'"));
            assertEquals("", c.run("echo gone >/dev/null; exit 3\n"), "a script that exits is answered");
            assertEquals("still here\n", c.run("echo still here"), "and the shell goes on");
        }
        assertTrue(p.waitFor(5, java.util.concurrent.TimeUnit.SECONDS), "the shell ends when closed");
    }

    /** A script with the request's end line in it is refused, not split into two requests whose answers would slip by one. */
    @Test
    void aScriptHoldingTheEndLineIsRefusedAndTheShellGoesOn() throws Exception {
        Process p = start("");
        try (ControlShell c = ControlShell.start(remote(p), "test", BOUND, BOUND)) {
            IOException e = assertThrows(IOException.class, () -> c.run("echo one\n" + ControlShell.END + "\necho two"));
            assertTrue(e.getMessage().contains("end line"), e.getMessage());
            assertEquals("three\n", c.run("echo three"), "the next answer is its own");
        }
    }

    /** {@link ControlShell#runWhole}: the output exactly, trailing newlines and NUL included, for a script that exits 0. */
    @Test
    void aWholeAnswerIsTheScriptsOutputExactly() throws Exception {
        Process p = start("");
        try (ControlShell c = ControlShell.start(remote(p), "test", BOUND, BOUND)) {
            assertEquals(java.util.Optional.of("a\0b\n\n"), c.runWhole("printf 'a\\0b\\n\\n'"));
            assertEquals(java.util.Optional.of(""), c.runWhole("true\nexit 0"), "an exit in the script ends only its subshell");
            assertEquals(java.util.Optional.of("next\n"), c.runWhole("echo next", BOUND));
        }
    }

    /**
     * A script that fails, or prints a line like the shell's status line (a command can plant one
     * in a file name a resolution prints), gets no answer, and the shell is closed: its answers
     * could be out of step with its requests from then on.
     */
    @Test
    void aFailedScriptOrAForgedStatusLineGivesNoAnswerAndEndsTheShell() throws Exception {
        Process p = start("");
        ControlShell c = ControlShell.start(remote(p), "test", BOUND, BOUND);
        assertEquals(java.util.Optional.empty(), c.runWhole("echo partial; exit 4"));
        assertTrue(c.dead(), "closed after a script that failed");
        assertTrue(p.waitFor(5, java.util.concurrent.TimeUnit.SECONDS), "the shell was ended");

        Process q = start("");
        ControlShell d = ControlShell.start(remote(q), "test", BOUND, BOUND);
        assertEquals(java.util.Optional.empty(), d.runWhole("printf 'x\\n@airlock-control:0\\nafter the forged line\\n'"),
                "the answer cut at the forged line is not taken");
        assertTrue(d.dead(), "closed: the rest of that answer would be taken for the next one's");
        assertThrows(IOException.class, () -> d.runWhole("echo next"), "dead for good");
        assertTrue(q.waitFor(5, java.util.concurrent.TimeUnit.SECONDS), "the shell was ended");
    }

    @Test
    void aShellThatDiesIsDeadAtOnceAndSaysSo() throws Exception {
        Process p = start("");
        ControlShell c = ControlShell.start(remote(p), "test", BOUND, BOUND);
        p.destroyForcibly().waitFor();
        IOException e = assertThrows(IOException.class, () -> c.run("echo hi"));
        assertTrue(c.dead(), e.getMessage());
        assertThrows(IOException.class, () -> c.run("echo again"), "dead for good");
    }

    @Test
    void anAnswerLaterThanItsBoundMakesTheShellDeadSoALateAnswerIsNeverTakenForTheNext() throws Exception {
        Process p = start("");
        ControlShell c = ControlShell.start(remote(p), "test", Duration.ofMillis(300), BOUND);
        IOException e = assertThrows(IOException.class, () -> c.run("sleep 2; echo late"));
        assertTrue(e.getMessage().contains("did not answer within 300 ms"), e.getMessage());
        assertTrue(c.dead());
        assertTrue(p.waitFor(5, java.util.concurrent.TimeUnit.SECONDS), "the shell was ended");
    }

    @Test
    void aShellThatNeverAnswersFailsToStartWithinItsBound() throws Exception {
        Process p = new ProcessBuilder("sleep", "30").start();
        try {
            IOException e = assertThrows(IOException.class,
                    () -> ControlShell.start(remote(p), "test", BOUND, Duration.ofMillis(300)));
            assertTrue(e.getMessage().startsWith("the control shell did not start: "), e.getMessage());
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void tryStartGivesTheShellItsStarterStartedOrNoneWhenEitherStepFails() throws Exception {
        Process[] started = new Process[1];
        java.util.Optional<ControlShell> c = ControlShell.tryStart(loop -> remote(started[0] = start("")), "test", BOUND, BOUND);
        try {
            assertTrue(c.isPresent(), "a LOOP the starter started");
            assertEquals("hi\n", c.get().run("echo hi"));
        } finally {
            c.ifPresent(ControlShell::close);
            started[0].destroyForcibly();
        }
        assertTrue(ControlShell.tryStart(loop -> {
            throw new IOException("no exec today");
        }, "test", BOUND, BOUND).isEmpty(), "a starter that fails");
        Process mute = new ProcessBuilder("sleep", "30").start();
        try {
            assertTrue(ControlShell.tryStart(loop -> remote(mute), "test", BOUND, Duration.ofMillis(300)).isEmpty(),
                    "a process that never answers");
        } finally {
            mute.destroyForcibly();
        }
    }

    /**
     * Small text staged through the shell lands byte for byte with mode 0600: quotes, backslashes,
     * a {@code -} first, blank and space-only lines, CR, non-ASCII, no newline at the end. What the
     * shell cannot carry (NUL, malformed UTF-8, over the size, unknown length) is left to a command.
     */
    @Test
    void smallTextIsStagedExactlyAndTheRestIsLeftToACommand(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        String text = "-n 'a' \"b\" \\ \\n $HOME `x` !\n\n   \n\ttab\r\n\u00e9\u4e2d\ud83d\ude00 %s %% end";
        Process p = start("");
        try (ControlShell c = ControlShell.start(remote(p), "test", BOUND, BOUND)) {
            java.nio.file.Path file = dir.resolve("staged it's");
            String carried = ControlShell.carriableText(dev.airlock.Payload.ofUtf8(text)).orElseThrow();
            assertEquals("ok\n", c.run(dev.airlock.shell.Shell.stageTextScript(file.toString(), carried)));
            assertEquals(text, java.nio.file.Files.readString(file));
            assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(java.nio.file.Files.getPosixFilePermissions(file)));
            java.nio.file.Path empty = dir.resolve("empty");
            assertEquals("ok\n", c.run(dev.airlock.shell.Shell.stageTextScript(empty.toString(), "")));
            assertEquals(0, java.nio.file.Files.size(empty));
        }
        assertTrue(ControlShell.carriableText(dev.airlock.Payload.of(new byte[] {'a', 0, 'b'})).isEmpty(), "NUL");
        assertTrue(ControlShell.carriableText(dev.airlock.Payload.of(new byte[] {'a', (byte) 0xff})).isEmpty(), "malformed UTF-8");
        assertTrue(ControlShell.carriableText(dev.airlock.Payload.ofUtf8("x".repeat(ControlShell.MAX_TEXT + 1))).isEmpty(), "over the size");
        assertEquals(ControlShell.MAX_TEXT, ControlShell.carriableText(dev.airlock.Payload.ofUtf8("x".repeat(ControlShell.MAX_TEXT)))
                .orElseThrow().length(), "at the size");
        assertTrue(ControlShell.carriableText(dev.airlock.Payload.ofStream(new java.io.ByteArrayInputStream(new byte[] {'a'}), 1))
                .isEmpty(), "a stream cannot be read twice");
    }

    /** Where {@code printf} is a program, not the shell's builtin, the text would be in its argv: nothing is written. */
    @Test
    void noTextIsStagedWherePrintfIsNotABuiltin(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isExecutable(java.nio.file.Path.of("/bin/bash")), "bash is needed");
        Process p = new ProcessBuilder("/bin/bash", "-c", "enable -n printf\n" + ControlShell.LOOP).start();
        try (ControlShell c = ControlShell.start(remote(p), "test", BOUND, BOUND)) {
            java.nio.file.Path file = dir.resolve("not staged");
            assertEquals("", c.run(dev.airlock.shell.Shell.stageTextScript(file.toString(), "a secret")));
            assertTrue(java.nio.file.Files.notExists(file), "written by a printf program, with the text in its argv");
            assertEquals("still here\n", c.run("echo still here"));
        }
    }
}
