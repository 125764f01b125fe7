package dev.airlock.cli;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;


import static dev.airlock.cli.Airlock.raw;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ./airlock} on the vercel backend against {@code ./airlock emulator vercel}: up, then write,
 * exec and read in separate invocations attached to the same sandbox, then down (issue 18).
 */
class VercelCliIT {
    private static final String TOKEN = "vercel-cli-test-token-5e1f";
    private static final String TEAM = "team_cli";
    private static ServedEmulator emulator;
    private static String url;

    @BeforeAll
    static void startEmulator() throws Exception {
        emulator = ServedEmulator.start("vercel", "http://127\\.0\\.0\\.1:\\d+",
                java.util.Map.of("VERCEL_TOKEN", TOKEN, "VERCEL_TEAM_ID", TEAM));
        url = emulator.url;
    }

    @AfterAll
    static void stopEmulator() {
        if (emulator != null) {
            emulator.close();
        }
    }

    private static Airlock vercel(String... args) {
        String[] head = {"--backend", "vercel", "--set", "airlock.vercel.api-url=" + url,
                "--set", "airlock.vercel.project-id=prj_cli", "--set", "airlock.vercel.team-id=" + TEAM};
        String[] all = new String[head.length + args.length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(args, 0, all, head.length, args.length);
        return raw(all).env("VERCEL_TOKEN", TOKEN);
    }

    @Test
    void upThenWriteExecReadAcrossInvocationsThenDown() {
        Airlock.Result up = vercel("up").run();
        assertEquals(0, up.exit(), up::toString);
        String name = up.out().strip();
        assertTrue(name.matches("[A-Za-z0-9_-]+"), "up prints the sandbox name: " + up.out());
        try {
            String attach = "airlock.vercel.sandbox-id=" + name;
            byte[] content = {0, 1, 2, (byte) 0xff, '\n', 0};
            Airlock.Result w = vercel("--set", attach, "write", "/tmp/kept/data.bin").stdin(content).run();
            assertEquals(0, w.exit(), w::toString);
            Airlock.Result e = vercel("--set", attach, "exec", "-n", "--", "wc -c < /tmp/kept/data.bin; exit 3").run();
            assertEquals(3, e.exit(), e::toString);
            assertEquals("6", e.out().strip());
            Airlock.Result r = vercel("--set", attach, "read", "/tmp/kept/data.bin").run();
            assertEquals(0, r.exit(), r::toString);
            assertArrayEquals(content, r.stdout());
            Airlock.Result gc = vercel("gc", "--older-than", "30d").run();
            assertEquals(0, gc.exit(), gc::toString);
            assertTrue(!gc.out().contains(name), "gc keeps what up made unless --all");
        } finally {
            Airlock.Result down = vercel("down", name).run();
            assertEquals(0, down.exit(), down::toString);
        }
        Airlock.Result gone = vercel("--set", "airlock.vercel.sandbox-id=" + name, "exec", "--", "true").run();
        assertNotEquals(0, gone.exit(), "down removed the sandbox: " + gone);
        assertTrue(gone.err().contains(name), gone::toString);
        assertTrue(!gone.err().contains(TOKEN) && !up.err().contains(TOKEN), "the token is never printed");
    }
}
