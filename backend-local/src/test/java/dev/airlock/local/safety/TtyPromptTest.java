package dev.airlock.local.safety;

import dev.airlock.tck.Services;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The /dev/tty approval prompt, answered by a person at a pseudo-terminal (python3's pty module
 * plays the person) while the process's stdin carries a binary payload.
 */
class TtyPromptTest {
    private static final byte[] PAYLOAD = {'H', 'o', 's', 't', ' ', 'a', '\n', 0, (byte) 0xff, (byte) 0xfe, '\n'};
    private static Path python;

    @TempDir
    Path airlockHome;
    @TempDir
    Path work;

    @BeforeAll
    static void needPython() {
        python = onPath("python3");
        Services.require(python != null, "python3 is not on PATH; it drives the pseudo-terminal (Debian: apt-get install python3)");
    }

    private static Path onPath(String name) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, name);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    private record Run(int exit, String terminal, List<String> results, int prompts) {
    }

    private Run run(String answer, String timeout) throws Exception {
        Path driver = work.resolve("pty_drive.py");
        try (InputStream in = TtyPromptTest.class.getResourceAsStream("pty_drive.py")) {
            Files.copy(in, driver, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        Path payload = work.resolve("payload");
        Files.write(payload, PAYLOAD);
        Path result = work.resolve("result-" + System.nanoTime());
        List<String> cmd = new ArrayList<>(List.of(python.toString(), driver.toString(), answer, payload.toString(),
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx128m",
                "-cp", System.getProperty("java.class.path"), TtyApprovalMain.class.getName(),
                airlockHome.toString(), timeout, result.toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(150, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("the prompt run did not finish");
        }
        String terminal = new String(out, StandardCharsets.UTF_8);
        int prompts = Integer.parseInt(terminal.replaceAll("(?s).*\\[prompts=(\\d+)\\].*", "$1"));
        List<String> results = Files.exists(result) ? Files.readAllLines(result) : List.of();
        return new Run(p.exitValue(), terminal, results, prompts);
    }

    private Path sshConfig() {
        return airlockHome.resolve("home/.ssh/config");
    }

    private byte[] expectedFile() {
        byte[] tail = "Host work\n".getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[PAYLOAD.length + tail.length];
        System.arraycopy(PAYLOAD, 0, all, 0, PAYLOAD.length);
        System.arraycopy(tail, 0, all, PAYLOAD.length, tail.length);
        return all;
    }

    @ParameterizedTest(name = "answer {0}")
    @CsvSource({"o, 2, approved once", "s, 1, approved for this session", "a, 1, approved always (remembered)",
            "once, 2, approved once", "session, 1, approved for this session"})
    void anAnswerOnTheTerminalApproves(String answer, int prompts, String echo) throws Exception {
        Run r = run(answer, "60s");
        assertEquals(0, r.exit, r.terminal);
        assertEquals(List.of("write ok", "exec 0"), r.results, r.terminal);
        assertEquals(prompts, r.prompts, r.terminal);
        assertTrue(r.terminal.contains("airlock: approval needed to write '" + sshConfig() + "'"), r.terminal);
        assertTrue(r.terminal.contains("airlock: " + echo), r.terminal);
        assertArrayEquals(expectedFile(), Files.readAllBytes(sshConfig()), "stdin carried the payload byte-exact");
        Path allow = airlockHome.resolve("approvals.list");
        assertEquals(answer.startsWith("a"), Files.exists(allow));
    }

    @Test
    void alwaysIsRememberedByTheNextProcess() throws Exception {
        assertEquals(1, run("a", "60s").prompts);
        Run next = run("d", "60s");
        assertEquals(List.of("write ok", "exec 0"), next.results, next.terminal);
        assertEquals(0, next.prompts, next.terminal);
    }

    @ParameterizedTest(name = "answer {0}")
    @CsvSource({"d", "deny", "n", "''"})
    void denyOnTheTerminalDenies(String answer) throws Exception {
        Run r = run(answer, "60s");
        assertEquals(0, r.exit, r.terminal);
        assertEquals(List.of("write ApprovalRequiredException", "exec ApprovalRequiredException"), r.results, r.terminal);
        assertEquals(2, r.prompts, r.terminal);
        assertTrue(r.terminal.contains("airlock: denied"), r.terminal);
        assertFalse(Files.exists(sshConfig()));
    }

    @Test
    void silenceDenies() throws Exception {
        Run r = run("-", "1s");
        assertEquals(List.of("write ApprovalRequiredException", "exec ApprovalRequiredException"), r.results, r.terminal);
        assertEquals(2, r.prompts, r.terminal);
        assertTrue(r.terminal.contains("airlock: no answer within 1s; denied"), r.terminal);
        assertFalse(Files.exists(sshConfig()));
    }

    @Test
    void anUnclearAnswerIsAskedAgain() throws Exception {
        Run r = run("maybe", "2s");
        assertTrue(r.terminal.contains("please answer o (once), s (session), a (always) or d (deny)"), r.terminal);
        assertEquals(List.of("write ApprovalRequiredException", "exec ApprovalRequiredException"), r.results, r.terminal);
    }

    static String read(InputStream in) throws IOException {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
}
