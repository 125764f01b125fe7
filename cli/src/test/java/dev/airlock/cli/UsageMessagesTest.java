package dev.airlock.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A mistyped command line gets one line saying what is wrong and what to write instead; in-process, no subprocess. */
class UsageMessagesTest {
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private PrintStream realErr;

    /** The build's own {@code -Dairlock.*} properties (a kit selection, say), kept out of the CLI's settings while it runs. */
    private final java.util.Map<String, String> buildProperties = new java.util.HashMap<>();

    @BeforeEach
    void captureStderr() {
        realErr = System.err;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith("airlock.")) {
                buildProperties.put(name, System.clearProperty(name));
            }
        }
    }

    @AfterEach
    void restoreStderr() {
        System.setErr(realErr);
        buildProperties.forEach(System::setProperty);
    }

    private String stderrOf(int expectedExit, String... args) {
        assertEquals(expectedExit, AirlockCli.run(args), () -> err.toString(StandardCharsets.UTF_8));
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void anExecOptionBeforeExecSaysWhereItBelongs() {
        assertEquals("airlock: usage: --timeout is an option of exec: give it after the command, as in"
                + " 'airlock exec --timeout DURATION ...' (see 'airlock exec --help')\n", stderrOf(2, "--timeout", "2s", "exec", "true"));
    }

    @Test
    void aMisspelledCommandGetsTheClosestOne() {
        assertEquals("airlock: usage: unknown command 'exce'; did you mean exec? (see 'airlock --help')\n", stderrOf(2, "exce", "true"));
    }

    @Test
    void aMisspelledBackendGetsTheClosestOne() {
        assertEquals("airlock: usage: no backend named 'dokcer' (airlock.backend); did you mean docker? found: daytona, docker,"
                + " local, modal, ssh, vercel\n", stderrOf(125, "--backend", "dokcer", "exec", "true"));
    }

    @Test
    void noCommandListsEveryCommand() {
        assertEquals("airlock: usage: missing command: exec, write, read, backends, up, url, down, gc, snapshot, doctor, emulator, mcp,"
                + " session or help (see 'airlock --help')\n", stderrOf(2));
    }

    @Test
    void sessionWithoutASubcommandSaysWhichThereAre() {
        assertEquals("airlock: usage: missing subcommand: list or end NAME (see 'airlock session --help')\n", stderrOf(2, "session"));
    }

    @Test
    void anUnknownSettingSaysItCameFromSet() {
        assertEquals("airlock: usage: unknown setting airlock.outptu.max-bytes; did you mean airlock.output.max-bytes?"
                + " (from --set) (airlock.settings.strict=true)\n", stderrOf(125, "--set", "airlock.outptu.max-bytes=1",
                "--set", "airlock.settings.strict=true", "exec", "true"));
    }

    @Test
    void aTtlThatIsNoLifetimeIsOneLineBeforeAnythingIsMade() {
        assertEquals("airlock: usage: --ttl must be positive, such as 30m or 2h\n",
                stderrOf(2, "--backend", "docker", "up", "--ttl", "0s"));
    }

    @Test
    void aTtlThatIsNoDurationSaysWhatADurationLooksLike() {
        assertEquals("airlock: usage: setting --ttl has invalid value 'soon': expected a duration such as 30s, 5m, 2h or 1500ms\n",
                stderrOf(2, "--backend", "docker", "up", "--ttl", "soon"));
    }
}
