package dev.airlock.shell;

import dev.airlock.ConfigurationException;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Quoting and the staging prefix, run by every real POSIX shell found on this machine. */
class ShellScriptsTest {
    @TempDir
    Path dir;

    static List<String> shells() {
        List<String> out = new ArrayList<>();
        for (String s : List.of("/bin/sh", "/bin/bash", "/bin/dash", "/usr/bin/dash", "/bin/busybox")) {
            if (Files.isExecutable(Path.of(s)) && out.stream().noneMatch(x -> Path.of(x).getFileName().equals(Path.of(s).getFileName()))) {
                out.add(s);
            }
        }
        return out;
    }

    static Stream<Arguments> shellsAndWords() {
        List<String> words = List.of("plain", "with space", "it's", "\"double\"", "-leading-dash", "new\nline",
                "$HOME `id` $(id)", "back\\slash", "tab\there", "ünïcødé ✓", "", "*", "a'b'c''", "!bang");
        List<Arguments> out = new ArrayList<>();
        for (String sh : shells()) {
            for (String w : words) {
                out.add(Arguments.of(sh, w));
            }
        }
        return out.stream();
    }

    private static List<String> argv(String shell, String script) {
        return shell.endsWith("busybox") ? List.of(shell, "sh", "-c", script) : List.of(shell, "-c", script);
    }

    private static Result run(String shell, String script, byte[] stdin) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(argv(shell, script)).start();
        try (var in = p.getOutputStream()) {
            in.write(stdin);
        } catch (IOException ignored) {
            // the script did not read its stdin
        }
        byte[] out = p.getInputStream().readAllBytes();
        byte[] err = p.getErrorStream().readAllBytes();
        return new Result(p.waitFor(), out, new String(err, StandardCharsets.UTF_8));
    }

    private record Result(int exit, byte[] out, String err) {
    }

    @ParameterizedTest(name = "{0} keeps {1}")
    @MethodSource("shellsAndWords")
    void quotedWordsSurviveEveryShell(String shell, String word) throws Exception {
        Result r = run(shell, "printf '%s' " + Shell.quote(word), new byte[0]);
        assertEquals(0, r.exit(), r.err());
        assertEquals(word, new String(r.out(), StandardCharsets.UTF_8));
    }

    static Stream<Arguments> shellsAndPaths() {
        List<String> names = List.of("stdin", "with space", "quote's", "-dash", "new\nline", "$(touch pwned)");
        List<Arguments> out = new ArrayList<>();
        for (String sh : shells()) {
            for (String n : names) {
                out.add(Arguments.of(sh, n));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} redirects from {1}")
    @MethodSource("shellsAndPaths")
    void redirectPrefixFeedsTheCommandAndRemovesTheFile(String shell, String name) throws Exception {
        Path staged = dir.resolve(name);
        byte[] payload = {0, 1, 2, (byte) 0xff, '\n', 'x'};
        Files.write(staged, payload);
        // The command checks the file is gone before its own code reads stdin.
        String script = StdinScripts.redirectPrefix(staged.toString())
                + "[ -e " + Shell.quotePath(staged.toString()) + " ] && echo still-there >&2\ncat";
        Result r = run(shell, script, new byte[0]);
        assertEquals(0, r.exit(), r.err());
        assertEquals("", r.err());
        assertArrayEquals(payload, r.out());
        assertFalse(Files.exists(staged));
        assertFalse(Files.exists(Path.of("pwned")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shells")
    void aMissingStagedFileExits201InEveryShell(String shell) throws Exception {
        Result r = run(shell, StdinScripts.redirectPrefix(dir.resolve("gone").toString()) + "echo ran", new byte[0]);
        assertEquals(StdinScripts.STAGING_FAILED, r.exit(), r.err());
        assertEquals(0, r.out().length, "the command must not run");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shells")
    void unreadStdinIsNeverExecuted(String shell) throws Exception {
        Path staged = dir.resolve("s");
        Files.writeString(staged, "touch " + dir.resolve("executed") + "\n");
        Result r = run(shell, StdinScripts.redirectPrefix(staged.toString()) + "true", new byte[0]);
        assertEquals(0, r.exit(), r.err());
        assertFalse(Files.exists(dir.resolve("executed")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shells")
    void stagedScriptRunsAndIsGoneFirst(String shell) throws Exception {
        Path script = dir.resolve("script with space");
        Files.writeString(script, StdinScripts.stagedScript(
                "echo \"args:$#\"\n[ -e '" + script + "' ] && echo left\n[ -e /proc/self/fd/3 ] && echo fd3-inherited\nexit 3\n"));
        String sh = shell.endsWith("busybox") ? shell + " sh" : shell;
        Result r = run(shell, StdinScripts.runStagedScript(sh, script.toString()), new byte[0]);
        assertEquals(3, r.exit(), r.err());
        assertEquals("args:0\n", new String(r.out(), StandardCharsets.UTF_8));
        assertFalse(Files.exists(script));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shells")
    void killProcessGroupEndsTheWholeGroup(String shell) throws Exception {
        Process group = new ProcessBuilder("setsid", "sh", "-c", "sleep 3401 & sleep 3401; wait").start();
        long pgid = group.pid();
        // setsid may not have made the group yet when start() returns: wait until it leads one.
        long until = System.nanoTime() + 5_000_000_000L;
        while (liveMembers(pgid) == 0 && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        Result r = run(shell, Shell.killProcessGroup("TERM", pgid), new byte[0]);
        assertEquals(0, r.exit(), r.err());
        assertEquals(true, group.waitFor(10, java.util.concurrent.TimeUnit.SECONDS), "the group survived");
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (liveMembers(pgid) > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(0, liveMembers(pgid), "members of the group survived");
    }

    /** Processes in the group that have not exited (zombies waiting for a reaper count as gone). */
    private static long liveMembers(long pgid) throws IOException {
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            return procs.filter(p -> p.getFileName().toString().matches("\\d+")).filter(p -> {
                try {
                    String stat = Files.readString(p.resolve("stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    return f[2].equals(Long.toString(pgid)) && !f[0].equals("Z");
                } catch (IOException | RuntimeException e) {
                    return false;
                }
            }).count();
        }
    }

    @Test
    void heredocRefusesWhatItCannotCarry() {
        ConfigurationException nul = assertThrows(ConfigurationException.class, () -> StdinScripts.heredoc(new byte[] {'a', 0}, "cat"));
        assertEquals(true, nul.getMessage().contains("NUL"));
        assertThrows(ConfigurationException.class, () -> StdinScripts.heredoc(new byte[StdinScripts.HEREDOC_MAX_BYTES + 1], "cat"));
        assertThrows(ConfigurationException.class, () -> StdinScripts.heredoc(new byte[] {(byte) 0xc3}, "cat"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shells")
    void heredocDeliversTextWithAFinalNewline(String shell) throws Exception {
        Result r = run(shell, StdinScripts.heredoc("a $HOME `x`\nb".getBytes(StandardCharsets.UTF_8), "cat"), new byte[0]);
        assertEquals(0, r.exit(), r.err());
        assertEquals("a $HOME `x`\nb\n", new String(r.out(), StandardCharsets.UTF_8));
    }

    /**
     * A group whose only member is a zombie (exited, its parent never reaped it) answers kill -0,
     * but no signal can reach it: the group-state script calls it gone, so the reaper sends no KILL
     * after the TERM that ended it. A group with a live member stays alive.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("shells")
    void aGroupOfZombiesIsGoneAndALiveGroupIsAlive(String shell) throws Exception {
        // setsid without a fork: the background child leads its own group, exits shortly after and stays
        // a zombie, because its parent has become `sleep` by then, which never waits (exiting at once, it
        // could be reaped by the shell before the exec).
        Process parent = new ProcessBuilder("sh", "-c", "setsid sh -c 'sleep 0.3; exit 0' & echo $!; exec sleep 20").start();
        try {
            String line = new java.io.BufferedReader(new java.io.InputStreamReader(parent.getInputStream(),
                    StandardCharsets.US_ASCII)).readLine();
            long zombie = Long.parseLong(line.strip());
            Path stat = Path.of("/proc", Long.toString(zombie), "stat");
            for (int i = 0; i < 300 && !readOrEmpty(stat).contains(") Z "); i++) {
                Thread.sleep(10);
            }
            org.junit.jupiter.api.Assumptions.assumeTrue(readOrEmpty(stat).contains(") Z "), "no zombie to look at");
            assertEquals(0, run(shell, "kill -0 -" + zombie, new byte[0]).exit(), "kill -0 still answers for a zombie group");
            assertEquals("gone", new String(run(shell, Shell.groupStateScript(zombie), new byte[0]).out(), StandardCharsets.UTF_8).strip());
            long live = parent.pid(); // sleep leads no group of its own; its group is this JVM's test runner's
            long group = Long.parseLong(Files.readString(Path.of("/proc", Long.toString(live), "stat")).replaceAll(".*\\) ", "").split(" ")[2]);
            assertTrue(new String(run(shell, Shell.groupStateScript(group), new byte[0]).out(), StandardCharsets.UTF_8).startsWith("alive"));
            assertEquals(0, run(shell, "g=" + zombie + "\n" + Shell.groupHasLiveMemberScript(), new byte[0]).exit(),
                    "no live member: the zombie does not count");
            assertEquals(1, run(shell, "g=" + group + "\n" + Shell.groupHasLiveMemberScript(), new byte[0]).exit(), "a live member");
        } finally {
            parent.destroyForcibly();
            parent.waitFor();
        }
    }

    /** A /proc file's text, or "" once the process is gone (it may be reaped between two reads). */
    private static String readOrEmpty(Path p) {
        try {
            return Files.readString(p);
        } catch (java.io.IOException e) {
            return "";
        }
    }

    /**
     * A failed write's clean-up takes its temp file and the directories it made, deepest first, up
     * to the one that existed; a made directory a command removed meanwhile is passed over, one a
     * command filled stops it, and nothing that existed before is touched.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("shells")
    void aFailedWritesCleanUpTakesWhatItMadeEvenWhenItsDirIsGone(String shell) throws Exception {
        Path existed = Files.createDirectories(dir.resolve(Path.of(shell).getFileName() + "/existed"));
        Path made = existed.resolve("made 1/made 2");
        Files.createDirectories(made);
        Files.writeString(made.resolve(".tmp-x"), "half");
        Result r = run(shell, AsideWrite.cleanUp(made.toString(), existed.toString(), Shell.quote(".tmp-x")), new byte[0]);
        assertEquals(0, r.exit(), r.err());
        assertFalse(Files.exists(existed.resolve("made 1")), "the made directories are gone");
        assertTrue(Files.isDirectory(existed), "the directory that existed stays");

        Files.createDirectories(made);
        Files.delete(made); // a command removed the write's directory before the clean-up
        r = run(shell, AsideWrite.cleanUp(made.toString(), existed.toString(), Shell.quote(".tmp-x")), new byte[0]);
        assertEquals(0, r.exit(), r.err());
        assertFalse(Files.exists(existed.resolve("made 1")), "the made parent of a vanished dir is gone too");

        Files.createDirectories(made);
        Files.writeString(existed.resolve("made 1/theirs"), "kept");
        r = run(shell, AsideWrite.cleanUp(made.toString(), existed.toString(), Shell.quote(".tmp-x")), new byte[0]);
        assertEquals(0, r.exit(), r.err());
        assertFalse(Files.exists(made));
        assertEquals("kept", Files.readString(existed.resolve("made 1/theirs")), "a directory a command filled stays, with its file");
    }
}
