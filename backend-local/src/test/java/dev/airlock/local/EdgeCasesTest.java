package dev.airlock.local;

import dev.airlock.DeniedException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Payload;
import dev.airlock.settings.Settings;
import dev.airlock.tck.Sample;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Cases a review found: slow readers, a command's own exit 201, a bad cwd after staging, sandbox-wide cancel. */
class EdgeCasesTest {
    @TempDir
    Path dir;

    /** Opens with the temp dir as the workdir: under bubblewrap (the default) the only host dir commands can see. */
    private Environment open(String... extra) {
        String[] kv = Stream.concat(Stream.of("airlock.container", "no", "airlock.exec.output-grace", "200ms",
                        "airlock.local.workdir", dir.toString()),
                Stream.of(extra)).toArray(String[]::new);
        return Environments.open(Settings.of(kv));
    }

    /** A caller's sink that stalls longer than the output grace before taking anything. */
    private static final class SlowSink extends OutputStream {
        final ByteArrayOutputStream got = new ByteArrayOutputStream();
        boolean stalled;

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) throws IOException {
            if (!stalled) {
                stalled = true;
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    throw new IOException(e);
                }
            }
            got.write(b, off, len);
        }
    }

    @Test
    void aSlowCallerSinkLosesNothing() throws Exception {
        byte[] data = Sample.generated("300k", 300_000, 11, 50).open().readAllBytes();
        SlowSink out = new SlowSink();
        try (Environment env = open()) {
            ExecResult r = env.exec(ExecRequest.builder("cat").stdin(data).output(out, OutputStream.nullOutputStream()).build());
            assertEquals(0, r.exitCode());
            assertArrayEquals(data, out.got.toByteArray());
        }
    }

    @Test
    void aSlowReaderOfAFileGetsEveryByte() throws Exception {
        byte[] data = Sample.generated("600k", 600_000, 12, 50).open().readAllBytes();
        Path file = dir.resolve("big.bin");
        Files.write(file, data);
        try (Environment env = open(); InputStream in = env.files().read(file.toString())) {
            byte[] first = in.readNBytes(10);
            Thread.sleep(1000); // longer than the output grace, with the pipe full
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            all.write(first);
            in.transferTo(all);
            assertArrayEquals(data, all.toByteArray());
        }
    }

    @ParameterizedTest(name = "stdin-mode={0}")
    @ValueSource(strings = {"pipe", "payload"})
    void aCommandsOwnExit201IsItsExitCode(String mode) {
        try (Environment env = open("airlock.local.stdin-mode", mode)) {
            ExecResult r = env.exec(ExecRequest.builder("cat >/dev/null; echo ran; exit 201").stdin(Payload.ofUtf8("x")).build());
            assertEquals(201, r.exitCode());
            assertEquals("ran\n", r.stdout().text(), "the started mark must never reach the caller");
        }
    }

    @Test
    void aBadCwdAfterStagingLeavesNoStagedFile() throws Exception {
        try (Environment env = open("airlock.local.stdin-mode", "payload")) {
            ExecResult r = env.exec(ExecRequest.builder("cat").cwd(dir.resolve("missing").toString())
                    .stdin(Payload.ofUtf8("input")).build());
            assertEquals(126, r.exitCode());
            try (Stream<Path> left = Files.list(Path.of(env.target().stagingDir()))) {
                assertEquals(0, left.count(), "a staged file was left behind");
            }
        }
    }

    @Test
    void sandboxCancelStopsOnlyWhenItCancelledSomething() throws Exception {
        Path file = dir.resolve("f");
        Files.writeString(file, "content");
        try (Environment env = open("airlock.cancel", "sandbox")) {
            try (InputStream in = env.files().read(file.toString())) {
                assertEquals("content", new String(in.readAllBytes()));
            }
            Execution done = env.start(ExecRequest.of("true"));
            done.await();
            done.cancel();
            assertEquals(0, env.exec(ExecRequest.of("true")).exitCode(), "the sandbox was stopped by a no-op cancel");
        }
    }

    @Test
    void copyInCannotPlantAProtectedFile(@TempDir Path state) throws Exception {
        Path home = Files.createDirectories(state.resolve("airlock-home")); // outside the workdir, as Airlock insists
        try (Environment env = open("airlock.home-mode", "profile", "airlock.home", home.toString())) {
            byte[] tar = tarWith(".ssh/authorized_keys", "ssh-ed25519 AAAA attacker\n");
            assertThrows(DeniedException.class, () -> env.files().copyIn("~", new java.io.ByteArrayInputStream(tar)));
            assertFalse(Files.exists(home.resolve("home/.ssh/authorized_keys")));
        }
    }

    private byte[] tarWith(String name, String content) throws Exception {
        Path src = Files.createDirectories(dir.resolve("tar-src"));
        Path f = src.resolve(name);
        Files.createDirectories(f.getParent());
        Files.writeString(f, content);
        Process p = new ProcessBuilder("tar", "-cf", "-", "-C", src.toString(), ".").start();
        byte[] tar = p.getInputStream().readAllBytes();
        assertEquals(0, p.waitFor());
        return tar;
    }
}
