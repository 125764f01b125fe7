package dev.airlock.spi;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.OptionalLong;

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
                return p.waitFor();
            }

            @Override
            public OptionalLong processGroup() {
                return OptionalLong.empty();
            }
        };
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
}
