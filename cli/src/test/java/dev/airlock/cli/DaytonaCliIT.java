package dev.airlock.cli;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.airlock.cli.Airlock.raw;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ./airlock} on the daytona backend against {@code ./airlock emulator daytona}: up, then
 * write, exec and read across separate invocations, gc, down; the key only in the environment.
 */
class DaytonaCliIT {
    private static final String KEY = "cli-daytona-key-0123456789";
    private static ServedEmulator emulator;
    private static String url;

    @BeforeAll
    static void startEmulator() throws Exception {
        emulator = ServedEmulator.start("daytona", "http://127\\.0\\.0\\.1:\\d+/api",
                java.util.Map.of("DAYTONA_API_KEY", KEY));
        url = emulator.url;
    }

    @AfterAll
    static void stopEmulator() {
        if (emulator != null) {
            emulator.close();
        }
    }

    private static Airlock daytona(String... args) {
        String[] all = new String[args.length + 2];
        all[0] = "--backend";
        all[1] = "daytona";
        System.arraycopy(args, 0, all, 2, args.length);
        return raw(all).env("DAYTONA_API_URL", url).env("DAYTONA_API_KEY", KEY);
    }

    @Test
    void upThenWriteExecReadAcrossInvocationsThenDown() {
        Airlock.Result up = daytona("up").run();
        assertEquals(0, up.exit(), up::toString);
        String id = up.out().strip();
        assertTrue(id.matches("[0-9a-f-]{36}"), "up prints the sandbox id: " + up.out());
        try {
            String attach = "airlock.daytona.sandbox-id=" + id;
            byte[] content = {0, 1, 2, (byte) 0xff, '\n', 0};
            Airlock.Result w = daytona("--set", attach, "write", "/tmp/kept/data.bin").stdin(content).run();
            assertEquals(0, w.exit(), w::toString);
            Airlock.Result e = daytona("--set", attach, "exec", "-n", "--", "wc -c < /tmp/kept/data.bin; exit 3").run();
            assertEquals(3, e.exit(), e::toString);
            assertEquals("6", e.out().strip());
            Airlock.Result r = daytona("--set", attach, "read", "/tmp/kept/data.bin").run();
            assertEquals(0, r.exit(), r::toString);
            assertArrayEquals(content, r.stdout());
            Airlock.Result gc = daytona("gc", "--older-than", "0s").run();
            assertEquals(0, gc.exit(), gc::toString);
            assertFalse(gc.out().contains(id), "gc keeps what up made unless --all");
            for (Airlock.Result each : List.of(up, w, e, r, gc)) {
                assertFalse(each.out().contains(KEY) || each.err().contains(KEY), "the key was printed: " + each);
            }
        } finally {
            Airlock.Result down = daytona("down", id).run();
            assertEquals(0, down.exit(), down::toString);
        }
        Airlock.Result gone = daytona("--set", "airlock.daytona.sandbox-id=" + id, "exec", "true").run();
        assertTrue(gone.exit() != 0 && gone.err().contains(id), "down removed the sandbox: " + gone);
        Airlock.Result again = daytona("down", id).run();
        assertEquals(2, again.exit(), again::toString);
        assertEquals(1, again.errLines().size(), again::toString);
    }
}
