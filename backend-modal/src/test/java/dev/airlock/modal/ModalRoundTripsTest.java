package dev.airlock.modal;

import dev.airlock.DeniedException;
import dev.airlock.Environment;
import dev.airlock.NoSuchPathException;
import dev.airlock.Payload;
import dev.airlock.WriteOptions;
import dev.airlock.emulator.CallJournal;
import dev.airlock.remote.RetryPolicy;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The round trips an agent's turn costs on Modal (issue 35), and that each one cut keeps what it
 * promised: reads through the image's file tool byte-exact and streamed, a write one exec behind
 * the guard, the lookups of an open made once per JVM (and asked again when the service refuses
 * what was kept), and a close that terminates without an exec first.
 */
class ModalRoundTripsTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture();

    private static Environment open(Map<String, String> extra) {
        return new ModalProvider().open(OpenContext.of(EMULATOR.settings().with(extra)));
    }

    private static List<CallJournal.Entry> since(int at) {
        List<CallJournal.Entry> all = EMULATOR.served.journal().entries();
        return new ArrayList<>(all.subList(at, all.size()));
    }

    private static long starts(List<CallJournal.Entry> calls, String firstWord) {
        return calls.stream().filter(e -> e.call().equals("TaskExecStart") && e.command().startsWith(firstWord)).count();
    }

    /** NUL, invalid UTF-8, empty, and more than one tool chunk and pipe: read back as written, by the tool, no shell. */
    @Test
    void readsGoThroughTheFileToolByteExact() throws Exception {
        byte[] odd = {0, (byte) 0xff, (byte) 0xfe, 'a', 0, '\n', (byte) 0xc3, 0x28};
        byte[] big = new byte[3 * 1024 * 1024 + 17];
        new Random(35).nextBytes(big);
        try (Environment env = open(Map.of())) {
            env.files().write("/tmp/odd", odd);
            env.files().write("/tmp/empty", new byte[0]);
            env.files().write("/tmp/big", Payload.of(big));
            int at = EMULATOR.served.journal().size();
            assertArrayEquals(odd, env.files().readBytes("/tmp/odd"));
            assertArrayEquals(new byte[0], env.files().readBytes("/tmp/empty"));
            try (InputStream in = env.files().read("/tmp/big")) {
                byte[] back = in.readAllBytes();
                assertEquals(big.length, back.length);
                assertTrue(Arrays.equals(big, back), "the big file came back different");
            }
            List<CallJournal.Entry> calls = since(at);
            assertEquals(3, starts(calls, ModalFiles.FS_TOOLS), "three reads by the tool: " + calls);
            assertEquals(0, starts(calls, "sh"), "no shell for a read the tool can do: " + calls);
        }
    }

    /**
     * A read whose end is not heard (the tool's exit status lost) is an error at the end of the
     * stream, never a file that merely looks whole. The waits before the read are counted on a
     * clean emulator; then emulators whose plan loses one of the next few {@code TaskExecWait}s
     * (a wait of the core's may come between) run the same steps: each read is whole or that
     * error, and at least one is the error.
     */
    @Test
    void aReadWhoseExitIsLostFailsAtItsEnd() throws Exception {
        long waits = readWithFaults("").orElseThrow();
        int failed = 0;
        for (long k = waits + 1; k <= waits + 3; k++) {
            if (readWithFaults("TaskExecWait:unavailable@nth=" + k).isEmpty()) {
                failed++;
            }
        }
        assertTrue(failed > 0, "no lost wait reached the read");
    }

    /**
     * Opens, writes {@code /tmp/r} and reads it back: the TaskExecWait calls made before the read
     * when it came back whole, empty when it failed as unfinished (any other failure fails the test).
     */
    private static java.util.OptionalLong readWithFaults(String faults) throws Exception {
        ModalFixture f = new ModalFixture(faults, Map.of());
        f.start();
        try {
            Settings s = f.settings().with(Map.of("airlock.modal.retry.max-attempts", "1"));
            Environment env;
            long waits;
            try {
                env = new ModalProvider().open(OpenContext.of(s));
                env.files().write("/tmp/r", new byte[5000]);
                waits = f.served.faults().callCounts().getOrDefault("TaskExecWait", 0L);
            } catch (dev.airlock.AirlockException e) {
                return java.util.OptionalLong.of(-1); // the lost wait was the open's or the write's
            }
            try (env; InputStream in = env.files().read("/tmp/r")) {
                byte[] back;
                try {
                    back = in.readAllBytes();
                } catch (java.io.IOException e) {
                    assertTrue(e.getMessage().contains("ended unfinished"), e.getMessage());
                    return java.util.OptionalLong.empty();
                }
                assertEquals(5000, back.length, "a read came back short without an error");
                return java.util.OptionalLong.of(waits);
            }
        } finally {
            f.served.close();
        }
    }

    /** What the tool cannot read is the shell read's precise answer: missing, a directory; a relative or quoted path goes the shell way. */
    @Test
    void whatTheToolCannotReadIsTheShellReadsAnswer() {
        try (Environment env = open(Map.of())) {
            assertThrows(NoSuchPathException.class, () -> env.files().readBytes("/tmp/not-there"));
            RuntimeException dir = assertThrows(RuntimeException.class, () -> env.files().readBytes("/tmp"));
            assertTrue(dir.getMessage().contains("is a directory"), dir.getMessage());
            env.files().write("/tmp/a \"quoted\" name", "q".getBytes(StandardCharsets.UTF_8));
            assertEquals("q", new String(env.files().readBytes("/tmp/a \"quoted\" name"), StandardCharsets.UTF_8));
        }
    }

    /**
     * A write is the guard's judgement and one exec (the core's one-run write), not judged twice;
     * a replace keeps the mode; a symlinked target is written through the shell write (the link
     * stays); a protected path is refused before any exec.
     */
    @Test
    void aWriteIsOneExecBehindTheGuardAndKeepsItsPromises() {
        try (Environment env = open(Map.of())) {
            env.files().write("/tmp/warm", new byte[] {1}); // the guard's first judgement resolves more
            env.exec("printf old > /tmp/kept && chmod 0640 /tmp/kept && ln -s /tmp/kept /tmp/link");
            int at = EMULATOR.served.journal().size();
            env.files().write("/tmp/kept", "new\0bytes".getBytes(StandardCharsets.UTF_8));
            List<CallJournal.Entry> calls = since(at);
            assertEquals(2, starts(calls, "sh"), "the guard's resolution and the write: " + calls);
            assertEquals("new\0bytes", env.exec("cat /tmp/kept").stdout().text());
            assertEquals("640", env.exec("stat -c %a /tmp/kept").stdout().text().strip());

            byte[] big = new byte[3 * 1024 * 1024];
            new Random(3).nextBytes(big);
            int large = EMULATOR.served.journal().size();
            env.files().write("/tmp/kept", Payload.of(big));
            List<CallJournal.Entry> bigCalls = since(large);
            // Over the core's one-run bound (1 MiB): the place, then the write; the path is judged once all the same.
            assertEquals(3, starts(bigCalls, "sh"), "a large write is the guard's resolution, the place and the write: " + bigCalls);
            assertArrayEquals(big, env.files().readBytes("/tmp/kept"));
            assertEquals("640", env.exec("stat -c %a /tmp/kept").stdout().text().strip());

            env.files().write("/tmp/link", "through".getBytes(StandardCharsets.UTF_8));
            assertEquals("through", env.exec("cat /tmp/kept").stdout().text());
            assertEquals("/tmp/kept", env.exec("readlink /tmp/link").stdout().text().strip());
            env.files().write("/tmp/link", Payload.of(big));
            assertArrayEquals(big, env.files().readBytes("/tmp/kept"));
            assertEquals("/tmp/kept", env.exec("readlink /tmp/link").stdout().text().strip());

            int before = EMULATOR.served.journal().size();
            assertThrows(DeniedException.class, () -> env.files().write(env.target().home() + "/.ssh/authorized_keys",
                    Payload.of("x".getBytes(StandardCharsets.UTF_8)), WriteOptions.defaults()));
            assertEquals(0, starts(since(before), "sh"), "a refused write ran something");
        }
    }

    /** copyIn runs its script once judged: a tree arrives with its modes; one that cannot be unpacked is an error, not a silent nothing. */
    @Test
    void copyInUnpacksOrFails() throws Exception {
        try (Environment env = open(Map.of())) {
            env.exec("mkdir -p /tmp/src/d && printf hi > /tmp/src/d/f && chmod 0750 /tmp/src/d/f && printf x > /tmp/afile");
            byte[] tar;
            try (InputStream out = env.files().copyOut("/tmp/src")) {
                tar = out.readAllBytes();
            }
            env.files().copyIn("/tmp/dst", new java.io.ByteArrayInputStream(tar));
            assertEquals("hi 750", env.exec("printf '%s ' \"$(cat /tmp/dst/d/f)\"; stat -c %a /tmp/dst/d/f").stdout().text().strip());
            assertThrows(dev.airlock.AirlockException.class,
                    () -> env.files().copyIn("/tmp/afile/sub", new java.io.ByteArrayInputStream(tar)));
            assertThrows(dev.airlock.AirlockException.class,
                    () -> env.files().copyIn("/tmp/dst2", new java.io.ByteArrayInputStream("not a tar at all".repeat(100)
                            .getBytes(StandardCharsets.UTF_8))));
        }
    }

    /** A second open of the same settings asks for no token, environment, app or image: one create and the probe. */
    @Test
    void aSecondOpenMakesNoLookups() {
        open(Map.of()).close();
        int at = EMULATOR.served.journal().size();
        open(Map.of()).close();
        List<String> calls = since(at).stream().map(CallJournal.Entry::call).toList();
        for (String lookup : List.of("AuthTokenGet", "EnvironmentGetOrCreate", "AppGetOrCreate", "ImageGetOrCreate")) {
            assertFalse(calls.contains(lookup), lookup + " asked again: " + calls);
        }
        assertEquals(1, calls.stream().filter(c -> c.startsWith("SandboxCreate")).count(), calls.toString());
    }

    /** A kept image the service no longer knows: the create is refused, the lookups asked again once, and the open succeeds. */
    @Test
    void aStaleKeptImageIsAskedForAgain() {
        Settings s = EMULATOR.settings().with(Map.of(ModalSettings.APP, "stale-test"));
        ModalSettings ms = ModalSettings.from(s, Map.of());
        open(Map.of(ModalSettings.APP, "stale-test")).close();
        ModalLookups.Found good = ModalLookups.found(ms).orElseThrow();
        ModalLookups.keep(ms, new ModalLookups.Found(good.app(), "im-gone000000000000000000"));
        int at = EMULATOR.served.journal().size();
        try (Environment env = open(Map.of(ModalSettings.APP, "stale-test"))) {
            assertEquals("ok", env.exec("echo ok").stdout().text().strip());
        }
        List<String> calls = since(at).stream().map(CallJournal.Entry::call).toList();
        assertTrue(calls.contains("ImageGetOrCreate"), "the image was not asked for again: " + calls);
        assertEquals(good, ModalLookups.found(ms).orElseThrow());
    }

    /** Close terminates the sandbox with no exec first (the private dir goes with it). */
    @Test
    void closeIsOneTerminate() {
        Environment env = open(Map.of());
        int at = EMULATOR.served.journal().size();
        env.close();
        List<String> calls = since(at).stream().map(CallJournal.Entry::call).toList();
        assertEquals(List.of("SandboxTerminateV2"), calls);
        assertEquals(0, ((dev.airlock.modal.emulator.ModalEmulator) EMULATOR.served.emulator()).liveSandboxes());
    }

    /** An attached sandbox outlives the environment: its private dir is removed by the core's exec, as before. */
    @Test
    void anAttachedSandboxHasItsPrivateDirRemoved() throws Exception {
        Settings s = EMULATOR.settings();
        try (ModalClient c = new ModalClient(ModalSettings.from(s, Map.of()), RetryPolicy.from(s, ModalSettings.PREFIX));
             ModalSandbox kept = ModalSandbox.create(c, true)) {
            String dir;
            try (Environment env = open(Map.of(ModalSettings.SANDBOX_ID, kept.id()))) {
                dir = env.target().privateDir();
                assertEquals("yes", env.exec("[ -d '" + dir + "' ] && echo yes").stdout().text().strip());
            }
            try (Environment again = open(Map.of(ModalSettings.SANDBOX_ID, kept.id()))) {
                assertEquals("gone", again.exec("[ -e '" + dir + "' ] || echo gone").stdout().text().strip());
            }
        }
    }
}
