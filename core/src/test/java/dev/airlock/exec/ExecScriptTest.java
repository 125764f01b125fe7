package dev.airlock.exec;

import dev.airlock.Capabilities;
import dev.airlock.ConfigurationException;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Payload;
import dev.airlock.StagingException;
import dev.airlock.PayloadStrategy;
import dev.airlock.StdinMode;
import dev.airlock.Target;
import dev.airlock.shell.Launcher;
import dev.airlock.spi.Launch;
import dev.airlock.shell.StdinScripts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the prefix does with a request, run through the real core on host processes: the staged
 * stdin's cap (exactly at it passes, one byte over is refused, known length or not), the heredoc
 * path's bound, a command too long for argv run from a staged script, the staged env's unsets.
 */
class ExecScriptTest {
    @TempDir
    Path dir;

    private final List<HostBackend> opened = new ArrayList<>();

    private HostBackend open(StdinMode mode, boolean nativeEnv, String... more) {
        HostBackend b = new HostBackend(HostBackend.settings(dir, more), mode, nativeEnv, List.of());
        opened.add(b);
        return b;
    }

    @AfterEach
    void cleanUp() {
        opened.forEach(b -> b.env.close());
    }

    private static List<Path> staged(HostBackend b) throws IOException {
        return b.stagedLeft();
    }

    private static ExecRequest cat(Payload in) {
        return ExecRequest.builder("cat").stdin(in).build();
    }

    @Test
    void stagedStdinUpToTheCapPassesAndOneByteMoreIsRefused() throws Exception {
        HostBackend b = open(StdinMode.PAYLOAD, false, "airlock.stdin.max-staged-bytes", "100");
        byte[] exact = new byte[100];
        Arrays.fill(exact, (byte) 'a');
        assertArrayEquals(exact, b.exec(cat(Payload.of(exact))).stdout().bytes());
        assertArrayEquals(exact, b.exec(cat(Payload.ofStream(new ByteArrayInputStream(exact)))).stdout().bytes(),
                "a stream of exactly the cap was refused");

        ConfigurationException known = assertThrows(ConfigurationException.class, () -> b.exec(cat(Payload.of(new byte[101]))));
        assertTrue(known.getMessage().contains("airlock.stdin.max-staged-bytes"), known.getMessage());
        StagingException streamed = assertThrows(StagingException.class,
                () -> b.exec(cat(Payload.ofStream(new ByteArrayInputStream(new byte[101])))));
        assertTrue(streamed.getMessage().contains("airlock.stdin.max-staged-bytes"), streamed.getMessage());
        assertEquals(List.of(), staged(b), "a refused stdin left a staged file");
    }

    @Test
    void aHeredocBackendCarriesStdinUpToItsBoundAndRefusesMore() throws Exception {
        HostBackend b = open(StdinMode.HEREDOC, true);
        byte[] exact = new byte[StdinScripts.HEREDOC_MAX_BYTES];
        Arrays.fill(exact, (byte) 'x');
        exact[exact.length - 1] = '\n'; // a heredoc ends its text with a newline: one there already is kept as is
        ExecResult r = b.exec(ExecRequest.builder("wc -c").stdin(Payload.of(exact)).build());
        assertEquals(Integer.toString(exact.length), r.stdout().text().strip());
        byte[] over = Arrays.copyOf(exact, exact.length + 1); // text, not NULs: refused for its length alone
        over[exact.length] = 'x';
        ConfigurationException x = assertThrows(ConfigurationException.class,
                () -> b.exec(ExecRequest.builder("wc -c").stdin(Payload.of(over)).build()));
        assertTrue(x.getMessage().contains("exceeds"), x.getMessage());
        assertEquals("in\n", b.exec(ExecRequest.builder("cat").stdin(Payload.ofUtf8("in\n")).build()).stdout().text());
    }

    @Test
    void aCommandTooLongForArgvRunsFromAStagedScriptThatIsRemoved() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        String filler = "x".repeat(50_000); // three times this is over the backend's 100 KiB argv limit
        ExecResult r = b.exec(ExecRequest.of(": " + filler + "; echo ran"));
        assertEquals(0, r.exitCode(), r.stderr().text());
        assertEquals("ran\n", r.stdout().text());
        assertEquals(1, b.stagedPaths.size(), "the long command was not staged: " + b.stagedPaths);
        assertEquals(List.of(), staged(b));
        assertEquals("short\n", b.exec(ExecRequest.of("echo short")).stdout().text());
        assertEquals(1, b.stagedPaths.size(), "a short command was staged");
    }

    @Test
    void theStagedEnvUnsetsValidNamesOnlyAndQuotesValues() throws Exception {
        Set<String> unset = new LinkedHashSet<>(List.of("GONE_1", "not-a-name", "9LIVES"));
        Map<String, String> set = new LinkedHashMap<>();
        set.put("A", "it's $HOME");
        String script = new String(ExecScript.envScript(unset, set), StandardCharsets.UTF_8);
        assertEquals("unset GONE_1\nexport A='it'\\''s $HOME'\n", script);
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", script + "printf '%s|%s' \"$A\" \"${GONE_1-unset}\"");
        pb.environment().put("GONE_1", "secret");
        Process p = pb.start();
        assertEquals("it's $HOME|unset", new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        assertEquals(0, p.waitFor());
    }

    private static final Target TARGET = new Target("Linux", "box", 1000, "op", "/home/op", "/home/op", "/home/op", "/tmp",
            "/home/op/.airlock", "bash", false, "none");

    /** The launch of {@code request} as the user's command, recording the paths staged for it. */
    private static Launch build(ExecRequest request, Capabilities caps, List<String> staged) throws IOException {
        return build(request, false, caps, Map.of(), Set.of(), staged);
    }

    private static Launch build(ExecRequest request, boolean internal, Capabilities caps, Map<String, String> set, Set<String> unset,
                                List<String> staged) throws IOException {
        return ExecScript.build(request, request.command(), internal, true, caps, TARGET, TARGET_SHELL, set, unset, 1 << 20, Launcher.nonce(), null,
                (path, data) -> {
                    staged.add(path);
                    try (InputStream in = data.open()) {
                        in.readAllBytes();
                    }
                });
    }

    /** A backend whose argv limit is exactly the estimate for {@code command} without stdin or cwd. */
    private static Capabilities argvLimitFitting(String command) {
        return Capabilities.builder().nativeEnv(true)
                .argvLimit(StdinScripts.noStdinPrefix().length() + 512 + 3 * command.length()).build();
    }

    /**
     * The argv estimate (the staging lines, 512 bytes for the lines after them, three bytes per
     * command byte for quoting) may be exactly the backend's limit: only past it is the command staged.
     */
    @Test
    void aCommandWhoseArgvEstimateIsExactlyTheLimitIsPassedAndOneByteMoreIsStaged() throws Exception {
        String fits = ": " + "x".repeat(998);
        Capabilities caps = argvLimitFitting(fits);
        List<String> staged = new ArrayList<>();
        assertTrue(build(ExecRequest.of(fits), caps, staged).script().endsWith(fits), "the command is not in the argv");
        assertEquals(List.of(), staged);

        String over = fits + "x";
        assertFalse(build(ExecRequest.of(over), caps, staged).script().contains(over), "a command past the limit is in the argv");
        assertEquals(1, staged.size(), "a command past the limit was not staged: " + staged);
    }

    /** The cwd travels in the launch too: a long one pushes a command that fits without it into the staged script. */
    @Test
    void aLongCwdCountsTowardsTheArgvEstimate() throws Exception {
        String fits = ": " + "x".repeat(998);
        Capabilities caps = argvLimitFitting(fits);
        List<String> staged = new ArrayList<>();
        String cwd = "/work/" + "d".repeat(2000);
        Launch l = build(ExecRequest.builder(fits).cwd(cwd).build(), caps, staged);
        assertFalse(l.script().contains(fits), "a command whose cwd took it past the limit is in the argv");
        assertTrue(l.script().contains(cwd), "the cwd is not in the launch");
        assertEquals(1, staged.size(), "the command was not staged: " + staged);
    }

    /** A backend that sets env natively gets the variables with the launch; otherwise they are staged, never launched. */
    @Test
    void theEnvGoesWithTheLaunchOnlyToABackendThatSetsItNatively() throws Exception {
        Map<String, String> set = Map.of("A", "secret-value");
        Set<String> unset = Set.of("GONE");
        List<String> staged = new ArrayList<>();
        Launch nativeEnv = build(ExecRequest.of("true"), false, Capabilities.builder().nativeEnv(true).build(), set, unset, staged);
        assertEquals(set, nativeEnv.env());
        assertEquals(unset, nativeEnv.unset());
        assertEquals(List.of(), staged);

        Launch stagedEnv = build(ExecRequest.of("true"), false, Capabilities.builder().nativeEnv(false).build(), set, unset, staged);
        assertEquals(Map.of(), stagedEnv.env());
        assertEquals(Set.of(), stagedEnv.unset());
        assertEquals(1, staged.size(), "the env was not staged: " + staged);
        assertFalse(stagedEnv.script().contains("secret-value"), "an env value is in the command text");
    }

    /** A PAYLOAD backend whose SDK streams stdin while the command runs gets it piped: nothing is staged. */
    @Test
    void aStreamedPayloadBackendGetsStdinPipedNotStaged() throws Exception {
        Capabilities caps = Capabilities.builder().nativeEnv(true).stdinMode(StdinMode.PAYLOAD)
                .payloadStrategy(PayloadStrategy.STREAMED).build();
        List<String> staged = new ArrayList<>();
        Launch l = build(ExecRequest.builder("cat").stdin(Payload.ofUtf8("in")).build(), caps, staged);
        assertTrue(l.pipeStdin());
        assertEquals(List.of(), staged);
    }

    /** The target's shell by absolute path, as the probe found it. */
    private static final String TARGET_SHELL = "/usr/bin/bash";

    /**
     * Airlock's own scripts run under sh; the user's command under the target's shell, named by its
     * absolute path, so a request's own PATH (which may lack it) cannot keep it from starting.
     */
    @Test
    void internalScriptsRunUnderShAndTheUsersCommandUnderTheTargetsShell() throws Exception {
        Capabilities caps = Capabilities.builder().nativeEnv(true).build();
        List<String> staged = new ArrayList<>();
        assertEquals("sh", build(ExecRequest.of("true"), true, caps, Map.of(), Set.of(), staged).shell());
        assertEquals(TARGET_SHELL, build(ExecRequest.of("true"), caps, staged).shell());
    }

    /** The cwd, its ~ expanded on the target, is entered before the command. */
    @Test
    void theCommandRunsInTheRequestedCwd() throws Exception {
        Launch l = build(ExecRequest.builder("pwd").cwd("~/w").build(), Capabilities.builder().nativeEnv(true).build(), new ArrayList<>());
        assertTrue(l.script().contains("\ncd -- /home/op/w || exit 126\n"), l.script());
    }

    /** The caller's stdin stream, staged whole on a PAYLOAD backend, is closed once staged. */
    @Test
    void aStagedStdinStreamIsClosedOnceStaged() throws Exception {
        boolean[] closed = {false};
        InputStream callers = new ByteArrayInputStream("in".getBytes(StandardCharsets.US_ASCII)) {
            @Override
            public void close() {
                closed[0] = true;
            }
        };
        List<String> staged = new ArrayList<>();
        build(ExecRequest.builder("cat").stdin(Payload.ofStream(callers)).build(),
                Capabilities.builder().nativeEnv(true).stdinMode(StdinMode.PAYLOAD).build(), staged);
        assertEquals(1, staged.size());
        assertTrue(closed[0], "the caller's stdin stream was left open");
    }
}
