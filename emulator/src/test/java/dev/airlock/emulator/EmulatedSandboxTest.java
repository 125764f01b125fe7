package dev.airlock.emulator;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EmulatedSandboxTest {
    @TempDir
    Path dir;

    private EmulatedSandbox sandbox(SandboxIsolation iso) {
        return EmulatedSandbox.create("sb-1", "debian:12", dir.resolve("sb-1"), "/root", iso, new CallJournal());
    }

    private static String run(EmulatedSandbox sb, String script) throws Exception {
        SandboxProcess p = sb.exec(EmulatedSandbox.Command.shell("exec", script, sb.home(), Map.of(), UUID.randomUUID().toString()));
        p.stdin().close();
        byte[] out = p.stdout().readAllBytes();
        String err = new String(p.stderr().readAllBytes(), StandardCharsets.UTF_8);
        int code = p.waitFor();
        return code + ":" + new String(out, StandardCharsets.UTF_8).strip() + (err.isBlank() ? "" : " | " + err.strip());
    }

    @Test
    void aBackgroundProcessOutlivesItsExecUntilTheSandboxStops() throws Exception {
        SandboxIsolation iso = Services.bwrap();
        String n = String.valueOf(5000 + (System.nanoTime() % 1000));
        try (EmulatedSandbox sb = sandbox(iso)) {
            assertEquals("0:started", run(sb, "sleep " + n + ".1 >/dev/null 2>&1 & echo started"));
            awaitCount(n, 1);
            assertEquals("0:1", run(sb, "for f in /proc/[0-9]*/cmdline; do [ \"$(tr '\\0' ' ' < $f)\" = 'sleep " + n
                    + ".1 ' ] && echo hit; done 2>/dev/null | wc -l"), "the next exec sees it");
            sb.stop();
            assertEquals(0, sleepers(n));
        }
    }

    @Test
    void aSignalIsToldFromAnExitOfTheSameStatusUnderBwrap() throws Exception {
        aSignalIsToldFromAnExitOfTheSameStatus(Services.bwrap());
    }

    @Test
    void aSignalIsToldFromAnExitOfTheSameStatusUnderUnshare() throws Exception {
        aSignalIsToldFromAnExitOfTheSameStatus(Services.unshare());
    }

    /**
     * A command killed by SIGKILL or SIGTERM ends by that signal; one that runs {@code exit 137}
     * exits 137, though its host process's exit value is the same 137 both ways; a shell that
     * reports its child's signal exits 143.
     */
    private void aSignalIsToldFromAnExitOfTheSameStatus(SandboxIsolation iso) throws Exception {
        try (EmulatedSandbox sb = sandbox(iso)) {
            assertEquals(SandboxProcess.Exit.signal(9), exit(sb, "kill -KILL $$"));
            assertEquals(SandboxProcess.Exit.signal(15), exit(sb, "kill -TERM $$"));
            assertEquals(SandboxProcess.Exit.code(137), exit(sb, "exit 137"));
            assertEquals(SandboxProcess.Exit.code(143), exit(sb, "sh -c 'kill -TERM $$'"), "the shell reports its child's signal as 143");
            assertEquals(SandboxProcess.Exit.code(0), exit(sb, "true"));
            assertEquals(128 + 9, exit(sb, "kill -KILL $$").shellStatus());
        }
    }

    private static SandboxProcess.Exit exit(EmulatedSandbox sb, String script) throws Exception {
        SandboxProcess p = sb.exec(EmulatedSandbox.Command.shell("exec", script, sb.home(), Map.of(), UUID.randomUUID().toString()));
        p.stdin().close();
        p.stdout().readAllBytes();
        p.stderr().readAllBytes();
        return p.exit();
    }

    @Test
    void theEmulatorsOwnKillOfTheGroupReadsAsThatSignal() throws Exception {
        try (EmulatedSandbox sb = sandbox(Services.bwrap())) {
            SandboxProcess p = sb.exec(EmulatedSandbox.Command.shell("exec", "echo up; sleep 600", sb.home(), Map.of(),
                    UUID.randomUUID().toString()));
            p.stdin().close();
            assertEquals("up", new String(p.stdout().readNBytes(2), StandardCharsets.UTF_8));
            p.signal(9);
            assertEquals(SandboxProcess.Exit.signal(9), p.exit());
        }
    }

    @Test
    void commandsRunAsTheSandboxsUserUnderBwrap() throws Exception {
        commandsRunAsTheSandboxsUser(Services.bwrap());
    }

    @Test
    void commandsRunAsTheSandboxsUserUnderUnshare() throws Exception {
        commandsRunAsTheSandboxsUser(Services.unshare());
    }

    /**
     * As a service's sandbox: the user is named, owns its home and what the file API writes, is
     * refused root's files, and a command sent as root is root.
     */
    private void commandsRunAsTheSandboxsUser(SandboxIsolation iso) throws Exception {
        Assumptions.assumeTrue(SandboxIsolation.privileged(), "only root can switch commands to another uid");
        EmulatedSandbox.User daytona = new EmulatedSandbox.User("daytona", 1000, "/home/daytona");
        try (EmulatedSandbox sb = EmulatedSandbox.create("sb-u", "debian:12", dir.resolve("sb-u"), daytona, iso, new CallJournal())) {
            sb.write("/home/daytona/staged/f", new ByteArrayInputStream("x".getBytes(StandardCharsets.UTF_8)), 0600);
            assertEquals("0:daytona 1000 1000 /home/daytona daytona:x:1000:1000::/home/daytona:/bin/bash", run(sb,
                    "echo $(id -un) $(id -u) $(id -g) $HOME $(grep '^daytona:' /etc/passwd)"));
            assertEquals("0:daytona daytona x", run(sb,
                    "echo $(stat -c %U /home/daytona) $(stat -c %U /home/daytona/staged) $(cat /home/daytona/staged/f)"));
            assertEquals("1: | touch: cannot touch '/not-mine': Permission denied", run(sb, "touch /not-mine"));
            SandboxProcess p = sb.exec(new EmulatedSandbox.Command("exec", List.of("sh", "-c", "id -un; touch /mine"), "/",
                    Map.of(), UUID.randomUUID().toString(), 0, Optional.empty(), true));
            p.stdin().close();
            assertEquals("root\n", new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8));
            assertEquals(0, p.waitFor());
            assertEquals(0, Files.getAttribute(sb.resolve("/mine").host(), "unix:uid"), "made by root");
        }
    }

    @Test
    void theSandboxHasItsOwnLoopbackUpUnderBwrap() throws Exception {
        loopbackIsUp(Services.bwrap());
    }

    @Test
    void theSandboxHasItsOwnLoopbackUpUnderUnshare() throws Exception {
        loopbackIsUp(Services.unshare());
    }

    /**
     * A server in the sandbox listens on its own 127.0.0.1 (a Vercel port route reaches it there):
     * connecting to a closed port is refused, not "Network is unreachable" as on a loopback left down.
     */
    private void loopbackIsUp(SandboxIsolation iso) throws Exception {
        try (EmulatedSandbox sb = sandbox(iso)) {
            String out = run(sb, "bash -c 'exec 3<>/dev/tcp/127.0.0.1/9' 2>&1; echo done");
            assertTrue(out.contains("Connection refused"), out);
        }
    }

    @Test
    void aStoppedSandboxLeavesNoProcessUnderBwrap() throws Exception {
        stopKillsEverything(Services.bwrap());
    }

    @Test
    void aStoppedSandboxLeavesNoProcessUnderUnshare() throws Exception {
        stopKillsEverything(Services.unshare());
    }

    private void stopKillsEverything(SandboxIsolation iso) throws Exception {
        String n = String.valueOf(4000 + (System.nanoTime() % 1000));
        try (EmulatedSandbox sb = sandbox(iso)) {
            // A background job, one that left the group with setsid, and one that ignores SIGTERM.
            SandboxProcess p = sb.exec(EmulatedSandbox.Command.shell("exec", "sleep " + n + ".1 & setsid sleep " + n
                    + ".2 & sh -c \"trap '' TERM; sleep " + n + ".3\" & echo started; wait", "/root", Map.of(), "k1"));
            p.stdin().close();
            byte[] line = p.stdout().readNBytes(8);
            assertEquals("started\n", new String(line, StandardCharsets.UTF_8));
            awaitCount(n, 3);
            sb.stop();
            assertEquals(0, sleepers(n), "processes left after stop");
            assertTrue(sb.livePids().isEmpty());
            assertThrows(IllegalStateException.class, () -> sb.exec(EmulatedSandbox.Command.shell("exec", "true", "/root",
                    Map.of(), "k2")));
            sb.stop(); // twice is harmless
        }
        assertFalse(Files.exists(dir.resolve("sb-1")), "root removed on close");
    }

    private static void awaitCount(String n, int count) throws InterruptedException {
        for (int i = 0; i < 500 && sleepers(n) < count; i++) {
            Thread.sleep(10);
        }
        assertEquals(count, sleepers(n), "the test's sleepers started");
    }

    /** Live (non-zombie) processes running {@code sleep n.*}. */
    private static long sleepers(String n) {
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            return procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).filter(p -> {
                try {
                    String cmd = new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8);
                    String stat = Files.readString(p.resolve("stat"));
                    char state = stat.charAt(stat.lastIndexOf(')') + 2);
                    return cmd.startsWith("sleep\0" + n + ".") && state != 'Z';
                } catch (IOException e) {
                    return false;
                }
            }).count();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void filesKeepModesAndOwnersAndLinksCannotReachTheHost() throws Exception {
        try (EmulatedSandbox sb = sandbox(Services.any())) {
            sb.write("/work/secret.bin", new ByteArrayInputStream(new byte[] {0, 1, (byte) 0xff}), 0600);
            PosixFileAttributes a = sb.stat("/work/secret.bin").orElseThrow();
            assertEquals("rw-------", PosixFilePermissions.toString(a.permissions()));
            assertEquals(System.getProperty("user.name"), a.owner().getName());
            assertTrue(run(sb, "stat -c %a /work/secret.bin").startsWith("0:600"));
            sb.chmod("/work/secret.bin", 0640);
            assertEquals("rw-r-----", PosixFilePermissions.toString(sb.stat("/work/secret.bin").orElseThrow().permissions()));

            // A command plants links to host places; the file API follows them inside the sandbox only.
            Files.createSymbolicLink(sb.root().resolve("work/shadow"), Path.of("/etc/shadow-airlock-test"));
            Files.createSymbolicLink(sb.root().resolve("work/up"), Path.of("/"));
            Files.createSymbolicLink(sb.root().resolve("work/dots"), Path.of("../../../../../../tmp"));
            // An atomic write replaces the link itself (rename semantics); it never writes through it.
            sb.write("/work/shadow", new ByteArrayInputStream(new byte[1]), 0644);
            assertFalse(Files.exists(Path.of("/etc/shadow-airlock-test")));
            assertTrue(Files.isRegularFile(sb.root().resolve("work/shadow"), java.nio.file.LinkOption.NOFOLLOW_LINKS));
            sb.write("/work/up/root/x", new ByteArrayInputStream("in".getBytes(StandardCharsets.UTF_8)), 0644);
            assertTrue(Files.isRegularFile(sb.root().resolve("root/x")));
            String tag = "dots-" + UUID.randomUUID();
            sb.write("/work/dots/" + tag, new ByteArrayInputStream(new byte[1]), 0644);
            assertTrue(Files.isRegularFile(sb.root().resolve("tmp/" + tag)));
            assertFalse(Files.exists(Path.of("/tmp", tag)));
            assertThrows(AccessDeniedException.class, () -> sb.write("/usr/x", new ByteArrayInputStream(new byte[1]), 0644));
            assertTrue(sb.delete("/work", true));
            assertFalse(sb.delete("/work", true));
            assertTrue(sb.read("/etc/hostname").readAllBytes().length >= 0, "system dirs read through");
        }
    }

    @Test
    void anUploadReplacesTheFileOnlyAtCommitAndLeavesNothingWhenAbandoned() throws Exception {
        try (EmulatedSandbox sb = sandbox(Services.any())) {
            sb.write("/work/f", new ByteArrayInputStream("old".getBytes(StandardCharsets.UTF_8)), 0644);
            Path work = sb.resolve("/work").host();
            try (EmulatedSandbox.Upload u = sb.upload("/work/f", 0600)) {
                u.stream().write("half".getBytes(StandardCharsets.UTF_8));
            } // closed without a commit: a client that stopped sending
            assertEquals("old", Files.readString(work.resolve("f")));
            try (Stream<Path> left = Files.list(work)) {
                assertEquals(List.of("f"), left.map(f -> f.getFileName().toString()).toList(), "the abandoned upload's temp file stayed");
            }
            try (EmulatedSandbox.Upload u = sb.upload("/work/f", 0600)) {
                u.stream().write("new".getBytes(StandardCharsets.UTF_8));
                assertEquals("old", Files.readString(work.resolve("f")), "the file changed before the commit");
                u.commit();
            }
            assertEquals("new", Files.readString(work.resolve("f")));
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(work.resolve("f"))));
            assertThrows(AccessDeniedException.class, () -> sb.upload("/usr/x", 0644), "the system dirs are read-only");
        }
    }
}
