package dev.airlock.shell;

import dev.airlock.Capabilities;
import dev.airlock.ConfigurationException;
import dev.airlock.StdinMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The staging and heredoc scripts, run by the real shells of this host. */
class StdinScriptsTest {

    @Test
    void heredocIsDeclaredNotByteExact() {
        assertFalse(StdinMode.HEREDOC.isByteExact());
        assertFalse(Capabilities.pipe().withStdinMode(StdinMode.HEREDOC).byteExact());
        assertTrue(StdinMode.PIPE.isByteExact() && StdinMode.PAYLOAD.isByteExact());
    }

    @Test
    void heredocRefusesWhatItCannotCarry() {
        ConfigurationException nul = assertThrows(ConfigurationException.class, () -> StdinScripts.heredoc(new byte[] {'a', 0}, "cat"));
        assertTrue(nul.getMessage().contains("NUL"), nul.getMessage());
        ConfigurationException utf8 = assertThrows(ConfigurationException.class,
                () -> StdinScripts.heredoc(new byte[] {(byte) 0xC3, 0x28}, "cat"));
        assertTrue(utf8.getMessage().contains("UTF-8"), utf8.getMessage());
        ConfigurationException big = assertThrows(ConfigurationException.class,
                () -> StdinScripts.heredoc(new byte[StdinScripts.HEREDOC_MAX_BYTES + 1], "cat"));
        assertTrue(big.getMessage().contains("too large"), big.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"sh", "bash"})
    void heredocAddsTheMissingNewlineSoItIsNotByteExact(String shell) throws Exception {
        byte[] in = "no trailing newline".getBytes(StandardCharsets.UTF_8);
        Result r = run(shell, StdinScripts.heredoc(in, "cat"));
        assertEquals(0, r.exit);
        assertArrayEquals("no trailing newline\n".getBytes(StandardCharsets.UTF_8), r.out);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sh", "bash"})
    void stagedScriptRunsFromItsDescriptorAfterTheFileIsGone(String shell, @TempDir Path dir) throws Exception {
        Path script = dir.resolve(".airlock-script-x");
        Files.writeString(script, StdinScripts.stagedScript("[ -e " + Shell.quote(script.toString()) + " ] && echo file-left\n"
                + "[ -e /dev/fd/3 ] && echo fd3-open\necho ran"));
        Result r = run(shell, StdinScripts.runStagedScript(shell, script.toString()));
        assertEquals(0, r.exit, r.err);
        assertEquals("ran\n", new String(r.out, StandardCharsets.UTF_8), "the script ran without its file or descriptor 3");
    }

    @ParameterizedTest
    @ValueSource(strings = {"sh", "bash"})
    void aFailedRedirectExits201BeforeTheCommand(String shell, @TempDir Path dir) throws Exception {
        Path missing = dir.resolve(".airlock-stdin-missing");
        Result r = run(shell, StdinScripts.redirectPrefix(missing.toString()) + "echo ran");
        assertEquals(StdinScripts.STAGING_FAILED, r.exit);
        assertEquals(0, r.out.length, "the command ran although its stdin could not be opened");
    }

    private record Result(int exit, byte[] out, String err) {
    }

    private static Result run(String shell, String script) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(shell, "-c", script).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        byte[] out = p.getInputStream().readAllBytes();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return new Result(p.exitValue(), out, err);
    }
}
