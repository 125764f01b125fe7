package dev.airlock.ssh;

import dev.airlock.exec.LaunchRecordStream;
import dev.airlock.shell.Launcher;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The launcher text run by each login shell sshd might start (dash, bash, busybox sh; zsh, fish
 * and tcsh when installed), as sshd would: {@code LOGIN_SHELL -c TEXT} in a new session. The command must get
 * its stdin and exit status, and the stripped marker must name its own process group.
 */
class CommandTextTest {
    private static final String NONCE = "00ff00ff00ff00ff";

    private static List<List<String>> loginShells() {
        List<List<String>> out = new ArrayList<>();
        // fish and tcsh are not POSIX: the text must still reach sh unchanged through them.
        for (String s : List.of("dash", "bash", "zsh", "fish", "tcsh")) {
            Path p = SshdServer.find(s);
            if (p != null) {
                out.add(List.of(p.toString()));
            }
        }
        Path busybox = SshdServer.find("busybox");
        if (busybox != null) {
            out.add(List.of(busybox.toString(), "sh"));
        }
        return out;
    }

    @Test
    void everyLoginShellRunsTheCommandInItsOwnGroupWithStdinAndStatus() throws Exception {
        List<List<String>> shells = loginShells();
        assertTrue(shells.size() >= 2, "expected at least dash and bash here: " + shells);
        Path setsid = SshdServer.find("setsid");
        String script = "read line; printf '%s|%s' \"$line\" \"$(cut -d' ' -f5 /proc/$$/stat)\"; "
                + "printf 'e\\000r' >&2; exit 7";
        for (List<String> login : shells) {
            for (String shell : List.of("sh", "bash")) {
                List<String> cmd = new ArrayList<>();
                cmd.add(setsid.toString()); // sshd makes each session child a session leader
                cmd.addAll(login);
                cmd.add("-c");
                cmd.add(SshBackend.commandText(shell, Launcher.recordLine(NONCE) + script));
                Process p = new ProcessBuilder(cmd).start();
                try (OutputStream in = p.getOutputStream()) {
                    in.write("it's input\n".getBytes(StandardCharsets.UTF_8));
                }
                CompletableFuture<byte[]> errBytes = CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
                LaunchRecordStream records = new LaunchRecordStream(p.getInputStream(), NONCE);
                String out = new String(records.readAllBytes(), StandardCharsets.UTF_8);
                assertEquals(7, p.waitFor(), login + " / " + shell);
                assertArrayEquals(new byte[] {'e', 0, 'r'}, errBytes.get(), login + " / " + shell);
                assertTrue(records.seen(), login + " / " + shell);
                long pgid = records.record().pid();
                assertEquals("it's input|" + pgid, out, login + " / " + shell + ": the shell leads its own group");
                assertTrue(records.record().startTime().isPresent(), login + " / " + shell);
            }
        }
    }

    private static byte[] readAll(InputStream in) {
        try {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            in.transferTo(b);
            return b.toByteArray();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Every character a login shell might treat specially reaches {@code sh} unchanged, through each login shell. */
    @Test
    void theScriptTravelsUnchangedThroughEveryLoginShell() throws Exception {
        String payload = "a'b\"c $HOME `x` \\ \\\\ \\' !! !$ % %1 ~ * ? [a] {a,b} ; & | < > # \t tab \r cr \u00e9\u4e2d\ud83d\ude00 \u0001"
                + "\n  indented\n\\\n";
        String script = "cat <<'END'\n" + payload + "END\nprintf '\\n\\n'";
        String expected = payload + "\n\n";
        List<List<String>> shells = loginShells();
        for (List<String> login : shells) {
            List<String> cmd = new ArrayList<>(login);
            cmd.add("-c");
            cmd.add(SshBackend.commandText("sh", script));
            Process p = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.waitFor(), login + ": " + out);
            assertEquals(expected, out, login.toString());
        }
        assertTrue(shells.stream().anyMatch(l -> l.get(0).endsWith("fish")) || SshdServer.find("fish") == null);
        // Nothing in the text the login shell parses is special to fish or tcsh inside single quotes.
        String text = SshBackend.commandText("bash", payload);
        assertFalse(text.contains("\\\\") || text.contains("\\'") || text.contains("!") || text.contains("\n"), text);
    }

    /**
     * The waiting channel ({@link WarmChannel}) under each login shell: the first line of stdin
     * is the command, and only that line is taken: the command reads the rest of its stdin
     * unchanged, runs in its own group and its status is the channel's. End of input without a
     * line ends it with 0 and runs nothing.
     */
    @Test
    void theWaitingChannelRunsTheCommandOnItsFirstLineAndLeavesTheRestOfStdin() throws Exception {
        Path setsid = SshdServer.find("setsid");
        String script = "read line; printf '%s|%s|' \"$line\" \"$(cut -d' ' -f5 /proc/$$/stat)\"; cat; "
                + "printf 'e\\000r' >&2; exit 7";
        String waiting = WarmChannel.waitingText();
        assertFalse(waiting.contains("\\") || waiting.contains("!") || waiting.contains("\n"), waiting);
        for (List<String> login : loginShells()) {
            for (String shell : List.of("sh", "bash")) {
                List<String> cmd = new ArrayList<>();
                cmd.add(setsid.toString());
                cmd.addAll(login);
                cmd.add("-c");
                cmd.add(waiting);
                Process p = new ProcessBuilder(cmd).start();
                try (OutputStream in = p.getOutputStream()) {
                    in.write((WarmChannel.line(shell, Launcher.recordLine(NONCE) + script) + "it's input\nand more 'x' \\ !\n")
                            .getBytes(StandardCharsets.UTF_8));
                }
                CompletableFuture<byte[]> errBytes = CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
                LaunchRecordStream records = new LaunchRecordStream(p.getInputStream(), NONCE);
                String out = new String(records.readAllBytes(), StandardCharsets.UTF_8);
                assertEquals(7, p.waitFor(), login + " / " + shell);
                assertArrayEquals(new byte[] {'e', 0, 'r'}, errBytes.get(), login + " / " + shell);
                assertTrue(records.seen(), login + " / " + shell);
                assertEquals("it's input|" + records.record().pid() + "|and more 'x' \\ !\n", out, login + " / " + shell);
            }
            List<String> cmd = new ArrayList<>(login);
            cmd.add("-c");
            cmd.add(waiting);
            Process idle = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .redirectErrorStream(true).start();
            String out = new String(idle.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, idle.waitFor(), login + ": " + out);
            assertEquals("", out, login + ": end of input ran something");
        }
    }
}
