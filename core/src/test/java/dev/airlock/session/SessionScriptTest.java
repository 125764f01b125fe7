package dev.airlock.session;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The session's script, run by the real shells of this host (bash, dash, busybox ash) as the core sends it. */
class SessionScriptTest {

    @TempDir
    Path tmp;

    @ParameterizedTest
    @ValueSource(strings = {"bash", "dash", "busybox"})
    void cdAndExportCarryOverAndExitNStillSaves(String shell) throws Exception {
        Path work = Files.createDirectories(tmp.resolve("it's a dir\nwith a newline"));
        Run s = new Run(shell, tmp.resolve("s"));
        Out r = s.exec("cd " + q(work) + "; export A=\"x'y\nz\"; export B='\\back\\slash'; exit 3");
        assertEquals(3, r.exit, r.err);
        r = s.exec("pwd; printf '%s|%s' \"$A\" \"$B\"");
        assertEquals(0, r.exit, r.err);
        assertEquals(work + "\nx'y\nz|\\back\\slash", r.text());
    }

    @Test
    void functionsAndAliasesCarryOverOnBash() throws Exception {
        Run s = new Run("bash", tmp.resolve("s"));
        assertEquals(0, s.exec("greet() { printf 'hello %s\\n' \"$1\"; }; alias ll='echo aliased'").exit);
        Out r = s.exec("greet you; ll");
        assertEquals("hello you\naliased\n", r.text(), r.err);
    }

    @ParameterizedTest
    @ValueSource(strings = {"bash", "dash", "busybox"})
    void aFailedCdAndACommandFailingHalfWayKeepTheState(String shell) throws Exception {
        Path work = Files.createDirectories(tmp.resolve("work"));
        Run s = new Run(shell, tmp.resolve("s"));
        s.exec("cd " + q(work) + " && export KEPT=1");
        Out missing = s.exec("cd " + q(tmp.resolve("missing")));
        assertTrue(missing.exit != 0 && !missing.err.isEmpty(), "cd into a missing directory must fail with a message");
        Out half = s.exec("export HALF=1 && false && export NEVER=1");
        assertEquals(1, half.exit);
        Out r = s.exec("pwd; echo \"$KEPT $HALF ${NEVER-unset}\"");
        assertEquals(work + "\n1 1 unset\n", r.text(), r.err);
    }

    @ParameterizedTest
    @ValueSource(strings = {"bash", "dash", "busybox"})
    void outputIsByteExactWithNoMarker(String shell) throws Exception {
        Run s = new Run(shell, tmp.resolve("s"));
        s.exec("export X=1");
        Out r = s.exec("printf 'a\\000b\\377'; printf 'err' >&2");
        assertArrayEquals(new byte[] {'a', 0, 'b', (byte) 0xff}, r.out);
        assertEquals("err", r.err);
        assertEquals("", s.exec("export Y=2").text());
    }

    @ParameterizedTest
    @ValueSource(strings = {"bash", "dash", "busybox"})
    void injectedVariablesAreNeverSavedButTheSessionsOwnAre(String shell) throws Exception {
        Run s = new Run(shell, tmp.resolve("s"));
        s.launchEnv.put("GITHUB_TOKEN", "injected-secret-1");
        s.launchEnv.put("AIRLOCK_HOME", "/airlock-home-1");
        s.launchEnv.put("TMPDIR", "/scratch-1");
        s.exec("export MY_API_TOKEN=own-value; export TMPDIR=/changed; export AIRLOCK_X=1; export PATH=/nowhere:$PATH");
        String snapshot = Files.readString(s.snapshot(), StandardCharsets.ISO_8859_1);
        assertFalse(snapshot.contains("injected-secret-1"), "an injected secret was written to the snapshot");
        assertFalse(snapshot.contains("airlock-home-1") || snapshot.contains("AIRLOCK_X"), "Airlock's own variables were saved");
        assertFalse(snapshot.contains("/changed") || snapshot.contains("scratch-1"), "TMPDIR is Airlock's and never saved");
        assertTrue(snapshot.contains("own-value"), "a variable the session exported itself was not kept");
        s.launchEnv.put("TMPDIR", "/scratch-2");
        Out r = s.exec("echo \"$MY_API_TOKEN $TMPDIR ${PATH%%:*}\"");
        assertEquals("own-value /scratch-2 /nowhere\n", r.text(), r.err);
    }

    @ParameterizedTest
    @ValueSource(strings = {"bash", "dash", "busybox"})
    void aRequestsOwnVariableWinsForThatExecOnly(String shell) throws Exception {
        Run s = new Run(shell, tmp.resolve("s"));
        s.exec("export K=session");
        s.requestEnv.put("K", "request");
        assertEquals("request\n", s.exec("echo \"$K\"").text());
        s.requestEnv.clear();
        assertEquals("session\n", s.exec("echo \"$K\"").text(), "the request's value outlived its exec");
        s.requestEnv.put("K", "request");
        s.exec("export K=changed-in-command");
        s.requestEnv.clear();
        assertEquals("changed-in-command\n", s.exec("echo \"$K\"").text(), "a change the command made was lost");
    }

    @ParameterizedTest
    @ValueSource(strings = {"bash", "dash", "busybox"})
    void theSnapshotIsPrivate(String shell) throws Exception {
        Run s = new Run(shell, tmp.resolve("sessions/s"));
        s.exec("umask 000; export A=1");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(s.snapshot())));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(s.dir)));
        assertEquals(List.of(SessionScript.SNAPSHOT), list(s.dir), "a temp file was left behind");
        Out plain = new Run(shell, tmp.resolve("plain")).exec("umask");
        assertEquals(plain.text(), s.exec("umask").text(), "the session changed the command's umask");
    }

    @Test
    void aRequestCwdIsEnteredInsteadAndStays() throws Exception {
        Path a = Files.createDirectories(tmp.resolve("a"));
        Path b = Files.createDirectories(tmp.resolve("b"));
        Run s = new Run("bash", tmp.resolve("s"));
        s.exec("cd " + q(a));
        s.cwd = b;
        assertEquals(b + "\n", s.exec("pwd").text());
        s.cwd = null;
        assertEquals(b + "\n", s.exec("pwd").text());
    }

    @ParameterizedTest
    @ValueSource(strings = {"bash", "dash", "busybox"})
    void aGoneDirectoryIsReportedAndTheSessionGoesOn(String shell) throws Exception {
        Path gone = Files.createDirectories(tmp.resolve("gone"));
        Run s = new Run(shell, tmp.resolve("s"));
        s.exec("cd " + q(gone));
        Files.delete(gone);
        Out r = s.exec("echo still");
        assertEquals("still\n", r.text());
        assertTrue(r.err.contains("the session directory " + gone + " is gone"), r.err);
    }

    /** The EXIT trap keeps stderr for its own line only (a killed command's "Terminated" stays out): a failed save still says so. */
    @ParameterizedTest
    @ValueSource(strings = {"bash", "dash", "busybox"})
    void aStateThatCannotBeSavedIsOneLineOnStderr(String shell) throws Exception {
        Path blocker = Files.writeString(tmp.resolve("a-file"), "x");
        Run s = new Run(shell, blocker.resolve("s")); // the session dir's parent is a file: mkdir fails
        Out r = s.exec("echo ran; echo own >&2; exit 4");
        assertEquals(4, r.exit, r.err);
        assertEquals("ran\n", r.text());
        assertEquals("own\nairlock: the session state could not be saved in " + blocker.resolve("s") + "\n", r.err);
    }

    static String q(Path p) {
        return dev.airlock.shell.Shell.quote(p.toString());
    }

    private static List<String> list(Path dir) throws IOException {
        try (var s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    record Out(int exit, byte[] out, String err) {
        String text() {
            return new String(out, StandardCharsets.UTF_8);
        }
    }

    /** One session's execs, each a fresh shell like the core's launch: a fixed launch env, the request's env on top. */
    static final class Run {
        final String shell;
        final Path dir;
        final Map<String, String> launchEnv = new LinkedHashMap<>();
        final Map<String, String> requestEnv = new LinkedHashMap<>();
        Path cwd;

        Run(String shell, Path dir) {
            this.shell = shell;
            this.dir = dir;
            launchEnv.put("PATH", System.getenv("PATH"));
            launchEnv.put("HOME", System.getProperty("user.home"));
        }

        Path snapshot() {
            return dir.resolve(SessionScript.SNAPSHOT);
        }

        Out exec(String command) throws IOException, InterruptedException {
            String script = (cwd == null ? "" : "cd " + q(cwd) + " || exit 126\n")
                    + SessionScript.wrap(command, dir.toString(), shell.equals("bash"), Set.copyOf(requestEnv.keySet()), cwd != null);
            List<String> argv = new ArrayList<>(shell.equals("busybox") ? List.of("busybox", "sh") : List.of(shell));
            argv.add("-c");
            argv.add(script);
            ProcessBuilder pb = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            pb.environment().clear();
            pb.environment().putAll(launchEnv);
            pb.environment().putAll(requestEnv);
            Process p = pb.start();
            var err = new java.util.concurrent.CompletableFuture<byte[]>();
            Thread t = new Thread(() -> {
                try {
                    err.complete(p.getErrorStream().readAllBytes());
                } catch (IOException e) {
                    err.completeExceptionally(e);
                }
            });
            t.start();
            byte[] out = p.getInputStream().readAllBytes();
            int exit = p.waitFor();
            return new Out(exit, out, new String(err.join(), StandardCharsets.UTF_8));
        }
    }
}
