package dev.airlock.emulator;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code isolation=gvisor} beyond the escape probes ({@link SandboxEscapeTest} runs those under
 * gVisor too): ordinary work and byte-exact files through the file API, and nothing of a sandbox
 * left on the host after a timed-out command and its close.
 */
class GvisorSandboxTest {
    @TempDir
    Path dir;

    private EmulatedSandbox sandbox() {
        return EmulatedSandbox.create("sb-gvisor", "debian:12", dir.resolve("sb"), "/root", Services.gvisor(), new CallJournal());
    }

    private record Run(int code, String out, String err) {
    }

    private static Run run(EmulatedSandbox sb, String script, byte[] stdin) throws Exception {
        SandboxProcess p = sb.exec(EmulatedSandbox.Command.shell("exec", script, "/root", Map.of("GREETING", "hi there"),
                UUID.randomUUID().toString()));
        try (OutputStream in = p.stdin()) {
            in.write(stdin);
        }
        String out = new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.stderr().readAllBytes(), StandardCharsets.UTF_8);
        return new Run(p.waitFor(), out, err);
    }

    private static Run run(EmulatedSandbox sb, String script) throws Exception {
        return run(sb, script, new byte[0]);
    }

    /**
     * Under gVisor the status comes from the {@code runsc exec} client, which reports a signal as
     * 128+N (it has no other way), and nothing outside the container sees the raw status: a
     * signal reads as that code here, while bubblewrap and unshare tell it apart
     * ({@code EmulatedSandboxTest}). Pinned, so a runsc that starts to tell is noticed.
     */
    @Test
    void aSignalReadsAs128PlusNUnderGvisor() throws Exception {
        try (EmulatedSandbox sb = sandbox()) {
            SandboxProcess p = sb.exec(EmulatedSandbox.Command.shell("exec", "kill -KILL $$", "/root", Map.of(),
                    UUID.randomUUID().toString()));
            p.stdin().close();
            p.stdout().readAllBytes();
            p.stderr().readAllBytes();
            assertEquals(SandboxProcess.Exit.code(137), p.exit());
        }
    }

    @Test
    void ordinaryWorkAndByteExactFilesThroughTheFileApi() throws Exception {
        try (EmulatedSandbox sb = sandbox()) {
            // Pipes, a background job, a subshell, the environment, stdin, stderr apart, the exit status.
            Run work = run(sb, "(echo a; sleep 0.1 & wait) | cat; x=$(printf b); echo \"$x $GREETING $HOME $(pwd)\";"
                    + " tr a-z A-Z; echo oops >&2; exit 7", "from stdin".getBytes(StandardCharsets.UTF_8));
            assertEquals(7, work.code(), work.err());
            assertEquals("a\nb hi there /root /root\nFROM STDIN", work.out());
            assertEquals("oops\n", work.err());

            // The file API writes every byte value; the command reads exactly those bytes, with the mode given.
            byte[] data = new byte[256 * 1024];
            new Random(31).nextBytes(data);
            for (int i = 0; i < 256; i++) {
                data[i] = (byte) i;
            }
            sb.write("/work/in.bin", new ByteArrayInputStream(data), 0600);
            Run sum = run(sb, "sha256sum < /work/in.bin; find /work/in.bin -printf '%m %s\\n'");
            assertEquals(sha256(data) + "  -\n600 " + data.length + "\n", sum.out(), sum.err());

            // And what a command writes, the file API reads byte for byte.
            Run made = run(sb, "head -c 100000 /dev/urandom > /tmp/out.bin && sha256sum < /tmp/out.bin");
            assertEquals(0, made.code(), made.err());
            byte[] back = sb.read("/tmp/out.bin").readAllBytes();
            assertEquals(100000, back.length);
            assertEquals(sha256(back) + "  -\n", made.out());

            // A file the command has read, replaced and then deleted through the API: the next command sees each change.
            sb.write("/root/v", new ByteArrayInputStream("one".getBytes(StandardCharsets.UTF_8)), 0644);
            assertEquals("one", run(sb, "cat /root/v").out());
            sb.write("/root/v", new ByteArrayInputStream("two!".getBytes(StandardCharsets.UTF_8)), 0644);
            assertEquals("two!", run(sb, "cat /root/v").out());
            assertTrue(sb.delete("/root/v", false));
            assertEquals("gone\n", run(sb, "test -e /root/v || echo gone").out());
            assertArrayEquals(data, sb.read("/work/in.bin").readAllBytes());
        }
    }

    @Test
    void aTimedOutCommandAndAClosedSandboxLeaveNoProcess() throws Exception {
        String n = String.valueOf(7000 + (System.nanoTime() % 1000));
        Path state;
        List<Long> hostPids;
        try (EmulatedSandbox sb = sandbox()) {
            SandboxProcess p = sb.exec(EmulatedSandbox.Command.shell("exec", "sleep " + n + ".1 & sleep " + n
                    + ".2 & echo started; wait", "/root", Map.of(), "t1"));
            p.stdin().close();
            assertEquals("started\n", new String(p.stdout().readNBytes(8), StandardCharsets.UTF_8));
            p.signal(9); // what an emulator does when the command's timeout passes
            assertTrue(p.waitFor(10, TimeUnit.SECONDS), "the exec did not end after its kill");
            assertTrue(p.exitValue() != 0);
            // The kill took the command's whole group inside the container, background jobs included.
            Run left = run(sb, "for i in $(seq 50); do found=;"
                    + " for f in /proc/[0-9]*/cmdline; do case $(tr '\\0' ' ' < $f 2>/dev/null) in 'sleep " + n + ".'*) found=1;; esac; done;"
                    + " [ -z \"$found\" ] && break; sleep 0.1; done; echo ${found:-none}");
            assertEquals("none\n", left.out(), left.err());

            // One that left its group stays until the sandbox closes, as under bubblewrap.
            assertEquals(0, run(sb, "setsid sleep " + n + ".3 >/dev/null 2>&1 &").code());
            state = sb.root().resolveSibling(sb.root().getFileName() + ".gvisor");
            hostPids = sb.livePids();
            assertTrue(hostPids.size() >= 2, "the sentry and the gofer are the sandbox's host processes: " + hostPids);
        }
        for (long pid : hostPids) {
            assertTrue(ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true), "host process " + pid + " outlived the sandbox");
        }
        assertTrue(hostProcessesMentioning(state.toString()).isEmpty(), "a runsc process of the sandbox is left");
        assertFalse(Files.exists(state), "runsc's state and the bundle are removed");
        assertFalse(Files.exists(dir.resolve("sb")), "the root is removed");
        assertFalse(Files.readString(Path.of("/proc/self/mounts")).contains(dir.toString()), "a mount is left");
    }

    /** Explicit gvisor where it cannot work is refused in one line that says why and what to do (runs with or without runsc). */
    @Test
    void gvisorWithoutRunscIsRefusedInOneLine() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> SandboxIsolation.detect(
                Settings.of(SandboxIsolation.KEY, "gvisor", SandboxIsolation.RUNSC_KEY, dir.resolve("no-runsc").toString())));
        assertEquals("airlock.emulator.isolation=gvisor but there is no runsc at " + dir.resolve("no-runsc")
                + "; install Debian's runsc (apt-get install runsc) as root, or set airlock.emulator.isolation=auto", e.getMessage());
    }

    private static List<Long> hostProcessesMentioning(String text) throws IOException {
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            return procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).filter(p -> {
                try {
                    return new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8).contains(text);
                } catch (IOException gone) {
                    return false;
                }
            }).map(p -> Long.parseLong(p.getFileName().toString())).toList();
        }
    }

    private static String sha256(byte[] data) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
    }
}
