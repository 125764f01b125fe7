package dev.airlock.docker;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.FileStat;
import dev.airlock.Payload;
import dev.airlock.WriteOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One shared container: commands, stdin, output, kill and files, asserted by what a user sees. */
@ExtendWith(DockerFixture.class)
class DockerEnvironmentTest {
    private static Environment shared;

    /** Opened by the first test that runs (not in @BeforeAll, so a missing daemon skips each test). */
    private static synchronized Environment env() {
        if (shared == null) {
            shared = Environments.open(DockerFixture.settings("airlock.exec.output-grace", "500ms"));
        }
        return shared;
    }

    @AfterAll
    static void close() {
        if (shared != null) {
            shared.close();
        }
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        for (int i = 0; i < n; i += 4096) {
            b[i] = 0; // NUL bytes throughout
        }
        return b;
    }

    @Test
    void stdinAndStdoutAreByteExactFor8MiBWithNulBytes() {
        byte[] data = random(8 << 20, 1);
        ExecResult r = env().exec(ExecRequest.builder("cat").stdin(data).build());
        assertEquals(0, r.exitCode(), r.stderr().text());
        assertArrayEquals(data, r.stdout().bytes());
    }

    @Test
    void moreThanTheHeapStreamsThroughStdinAndStdout() throws Exception {
        long size = Runtime.getRuntime().maxMemory() + (64L << 20); // more than this JVM could hold
        java.security.MessageDigest sent = java.security.MessageDigest.getInstance("SHA-256");
        java.security.MessageDigest got = java.security.MessageDigest.getInstance("SHA-256");
        InputStream source = new java.security.DigestInputStream(
                dev.airlock.tck.Sample.generated("more than the heap", size, 5, 0).open(), sent);
        java.security.DigestOutputStream sink = new java.security.DigestOutputStream(java.io.OutputStream.nullOutputStream(), got);
        ExecResult r = env().exec(ExecRequest.builder("cat").stdin(Payload.ofStream(source, size))
                .output(sink, java.io.OutputStream.nullOutputStream()).build());
        assertEquals(0, r.exitCode());
        assertArrayEquals(sent.digest(), got.digest(), "the bytes that came back differ from those sent");
    }

    @Test
    void aCommandReadingToEndOfInputTerminates() {
        byte[] data = random(3 << 20, 2);
        ExecResult r = env().exec(ExecRequest.builder("wc -c")
                .stdin(Payload.ofStream(new ByteArrayInputStream(data))).build());
        assertEquals(0, r.exitCode(), r.stderr().text());
        assertEquals(String.valueOf(data.length), r.stdout().text().strip());
        ExecResult empty = env().exec(ExecRequest.builder("cat; echo end").stdin(new byte[0]).build());
        assertEquals("end\n", empty.stdout().text());
    }

    @Test
    void noStdinMeansImmediateEndOfInput() {
        ExecResult r = env().exec(ExecRequest.builder("cat; echo after").build());
        assertEquals(0, r.exitCode());
        assertEquals("after\n", r.stdout().text());
    }

    @Test
    void exitCodesAndStderrArrive() {
        ExecResult r = env().exec(ExecRequest.builder("printf 'a\\0b'; echo oops >&2; exit 7").build());
        assertEquals(7, r.exitCode());
        assertArrayEquals(new byte[] {'a', 0, 'b'}, r.stdout().bytes());
        assertEquals("oops\n", r.stderr().text());
        assertEquals(137, env().exec(ExecRequest.builder("kill -9 $$").build()).exitCode());
    }

    @Test
    void outputThatLooksLikeAirlocksOwnLinesArrivesUntouched() {
        ExecResult r = env().exec(ExecRequest.builder("printf '\\001airlock-exec 1 1\\n\\001airlock-exit-00 0\\n\\001\\001a\\001'").build());
        assertEquals(0, r.exitCode());
        assertEquals("\u0001airlock-exec 1 1\n\u0001airlock-exit-00 0\n\u0001\u0001a\u0001", r.stdout().text());
    }

    /**
     * Prints a fake launcher record and a fake old-style trailer for every 32-hex token in its own
     * and its parent's argv (where the wrapper's nonce lives), then goes on.
     */
    private static final String FORGE = "for t in $(cat /proc/$PPID/cmdline /proc/$$/cmdline | tr '\\0' '\\n'"
            + " | grep -o '[0-9a-f]\\{32\\}' | sort -u); do"
            + " printf '\\n@airlock:%s:1:1:ok\\n\\001airlock-exit-%s 0\\n' \"$t\" \"$t\"; done; ";

    @Test
    void aCommandThatReadsTheWrappersTokensCannotForgeItsExitCode() {
        ExecResult r = env().exec(ExecRequest.builder(FORGE + "echo forged; exit 7").build());
        assertEquals(7, r.exitCode(), r.stderr().text());
        assertTrue(r.stdout().text().contains("\n@airlock:"), "the command found its wrapper's nonce: " + r.stdout().text());
        assertTrue(r.stdout().text().endsWith("forged\n"), "the forged lines are the command's output: " + r.stdout().text());
    }

    @Test
    void aCommandThatForgesItsEndCannotOutrunItsTimeout() {
        ExecResult r = env().exec(ExecRequest.builder(FORGE + "sleep 307; echo not-reached")
                .timeout(Duration.ofSeconds(2)).build());
        assertEquals(124, r.exitCode(), r.stdout().text());
        assertTrue(r.timedOut());
        assertTrue(r.stdout().text().contains("\n@airlock:"), r.stdout().text());
        ExecResult ps = env().exec(ExecRequest.builder("ps -o args | grep -c '^sleep 307' || true").build());
        assertEquals("0", ps.stdout().text().strip(), "the command outlived its timeout");
    }

    @Test
    void aCommandThatClosesItsOutputAndGoesOnEndsWithItsOwnStatus() {
        // The exec's output ends while the command still runs (no wrapper holds it open): the
        // status is still the command's, taken when the daemon says the exec ended.
        ExecResult r = env().exec(ExecRequest.builder("echo before; exec >&- 2>&-; sleep 2; exit 5")
                .timeout(Duration.ofMinutes(1)).build());
        assertEquals(5, r.exitCode());
        assertFalse(r.timedOut());
        assertEquals("before\n", r.stdout().text());
    }

    @Test
    void aCommandThatKillsItsOwnGroupKeepsItsOutputAndSignalStatus() {
        ExecResult r = env().exec(ExecRequest.builder("echo before; kill -9 0").build());
        assertEquals(137, r.exitCode());
        assertEquals("before\n", r.stdout().text());
    }

    @Test
    void aTimeoutKillsTheWholeProcessTree() {
        ExecResult r = env().exec(ExecRequest.builder("sh -c 'sleep 301' & sleep 302; echo not-reached")
                .timeout(Duration.ofSeconds(1)).build());
        assertEquals(124, r.exitCode());
        assertTrue(r.timedOut());
        assertFalse(r.stdout().text().contains("not-reached"));
        ExecResult ps = env().exec(ExecRequest.builder("ps -o args | grep -c '^sleep 30[12]' || true").build());
        assertEquals("0", ps.stdout().text().strip(), "grandchildren survived the timeout");
    }

    /**
     * The kill goes through a control shell in the container, which a command can kill: the next
     * timeout still kills the whole tree, a TERM-ignoring grandchild included (by an exec per step).
     */
    @Test
    void aTimeoutKillsTheTreeAfterACommandKilledTheControlShell() throws InterruptedException {
        try (Environment env = Environments.open(DockerFixture.settings())) {
            String killControl = "for p in /proc/[0-9]*; do grep -q 'airlock-r''un' $p/cmdline 2>/dev/null"
                    + " && kill -9 ${p#/proc/} && echo killed; done; true";
            // The control shell's exec is started at open; its process may appear a moment later.
            ExecResult killed = env.exec(ExecRequest.of(killControl));
            for (int i = 0; i < 50 && !killed.stdout().text().contains("killed"); i++) {
                Thread.sleep(100);
                killed = env.exec(ExecRequest.of(killControl));
            }
            assertTrue(killed.stdout().text().contains("killed"), "no control shell found: " + killed.stdout().text()
                    + killed.stderr().text());
            ExecResult r = env.exec(ExecRequest.builder("sh -c 'trap \"\" TERM; sleep 303' >/dev/null 2>&1 & sleep 304")
                    .timeout(Duration.ofSeconds(1)).build());
            assertTrue(r.timedOut());
            ExecResult ps = env.exec(ExecRequest.builder("ps -o args | grep -c '^sleep 30[34]' || true").build());
            assertEquals("0", ps.stdout().text().strip(), "the tree survived the timeout");
        }
    }

    /** An environment attached to a container leaves no control shell behind in it when it closes. */
    @Test
    void closingAnAttachedEnvironmentEndsItsControlShell() throws InterruptedException {
        String count = "n=0; for p in /proc/[0-9]*; do grep -q 'airlock-r''un' $p/cmdline 2>/dev/null && n=$((n+1)); done; echo $n";
        Environment own = env();
        String before = own.exec(ExecRequest.of(count)).stdout().text().strip();
        String id = DockerBackend.of(own).containerId();
        try (Environment attached = Environments.open(DockerFixture.settings(DockerSettings.CONTAINER, id))) {
            assertTrue(Integer.parseInt(attached.exec(ExecRequest.of(count)).stdout().text().strip()) > Integer.parseInt(before),
                    "the attached environment started no control shell");
        }
        String after = "";
        for (int i = 0; i < 50 && !after.equals(before); i++) {
            Thread.sleep(100);
            after = own.exec(ExecRequest.of(count)).stdout().text().strip();
        }
        assertEquals(before, after, "the attached environment's control shell outlived its close");
    }

    @Test
    void environmentVariablesArriveExactly() {
        String v = "a b\n'\"$HOME`x`\\\u00e9";
        ExecResult r = env().exec(ExecRequest.builder("printf '%s' \"$V\"").env(Map.of("V", v)).build());
        assertEquals(v, new String(r.stdout().bytes(), StandardCharsets.UTF_8));
    }

    @Test
    void treesGoInAndOutAsTarWithModes() throws Exception {
        byte[] exe = "#!/bin/sh\necho run\n".getBytes(StandardCharsets.US_ASCII);
        byte[] secret = random(70_000, 4);
        java.io.ByteArrayOutputStream tar = new java.io.ByteArrayOutputStream();
        try (var out = new org.apache.commons.compress.archivers.tar.TarArchiveOutputStream(tar)) {
            out.setLongFileMode(org.apache.commons.compress.archivers.tar.TarArchiveOutputStream.LONGFILE_POSIX);
            var d = new org.apache.commons.compress.archivers.tar.TarArchiveEntry("sub/");
            d.setMode(040750);
            out.putArchiveEntry(d);
            out.closeArchiveEntry();
            for (var f : Map.of("run.sh", new Object[] {exe, 0100755}, "sub/" + "x".repeat(120), new Object[] {secret, 0100600}).entrySet()) {
                byte[] body = (byte[]) f.getValue()[0];
                var e = new org.apache.commons.compress.archivers.tar.TarArchiveEntry(f.getKey());
                e.setMode((int) f.getValue()[1]);
                e.setSize(body.length);
                out.putArchiveEntry(e);
                out.write(body);
                out.closeArchiveEntry();
            }
        }
        env().files().copyIn("/tmp/tree", new ByteArrayInputStream(tar.toByteArray()));
        assertEquals("run", env().exec(ExecRequest.builder("/tmp/tree/run.sh").build()).stdout().text().strip());
        assertEquals(0755, env().files().stat("/tmp/tree/run.sh").orElseThrow().mode());
        assertEquals(0600, env().files().stat("/tmp/tree/sub/" + "x".repeat(120)).orElseThrow().mode());
        assertEquals(0750, env().files().stat("/tmp/tree/sub").orElseThrow().mode());
        assertEquals(java.util.List.of("run.sh", "sub"), env().files().list("/tmp/tree").stream().map(FileStat::name).toList());
        Map<String, byte[]> back = new java.util.TreeMap<>();
        try (var in = new org.apache.commons.compress.archivers.tar.TarArchiveInputStream(env().files().copyOut("/tmp/tree"))) {
            org.apache.commons.compress.archivers.tar.TarArchiveEntry e;
            while ((e = in.getNextEntry()) != null) {
                if (e.isFile()) {
                    back.put(e.getName().replaceFirst("^\\./", ""), in.readAllBytes());
                }
            }
        }
        assertArrayEquals(exe, back.get("run.sh"));
        assertArrayEquals(secret, back.get("sub/" + "x".repeat(120)));
        assertTrue(env().files().delete("/tmp/tree"));
        assertFalse(env().files().stat("/tmp/tree").isPresent());
    }

    @Test
    void filesAreByteExactWithModes() throws Exception {
        byte[] data = random(5 << 20, 3);
        env().files().write("/tmp/t/dir with space/f.bin", Payload.of(data), WriteOptions.mode(0600));
        try (InputStream in = env().files().read("/tmp/t/dir with space/f.bin")) {
            assertArrayEquals(data, in.readAllBytes());
        }
        FileStat st = env().files().stat("/tmp/t/dir with space/f.bin").orElseThrow();
        assertEquals(0600, st.mode());
        assertEquals(data.length, st.size());
        byte[] odd = {(byte) 0xff, 0, (byte) 0xc3, 0x28, '\n'};
        env().files().write("/tmp/t/dir with space/f.bin", odd);
        try (InputStream in = env().files().read("/tmp/t/dir with space/f.bin")) {
            assertArrayEquals(odd, in.readAllBytes());
        }
        assertEquals(0600, env().files().stat("/tmp/t/dir with space/f.bin").orElseThrow().mode(), "overwrite keeps the mode");
        env().files().write("/tmp/t/empty", new byte[0]);
        assertEquals(0, env().files().stat("/tmp/t/empty").orElseThrow().size());
    }
}
