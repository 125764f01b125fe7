package dev.airlock.cli;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static dev.airlock.cli.Airlock.raw;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ./airlock} on the modal backend against {@code ./airlock emulator modal}: up, then write,
 * exec and read across separate invocations, gc, down; the tokens only in the environment.
 */
class ModalCliIT {
    private static final String TOKEN_ID = "ak-cli-modal-0123";
    private static final String TOKEN_SECRET = "as-cli-modal-secret-4567";
    private static ServedEmulator emulator;
    private static String url;

    @BeforeAll
    static void startEmulator() throws Exception {
        emulator = ServedEmulator.start("modal", "http://127\\.0\\.0\\.1:\\d+",
                java.util.Map.of("MODAL_TOKEN_ID", TOKEN_ID, "MODAL_TOKEN_SECRET", TOKEN_SECRET));
        url = emulator.url;
    }

    @AfterAll
    static void stopEmulator() {
        if (emulator != null) {
            emulator.close();
        }
    }

    private static Airlock modal(String... args) {
        String[] all = new String[args.length + 2];
        all[0] = "--backend";
        all[1] = "modal";
        System.arraycopy(args, 0, all, 2, args.length);
        return raw(all).env("MODAL_SERVER_URL", url).env("MODAL_TOKEN_ID", TOKEN_ID).env("MODAL_TOKEN_SECRET", TOKEN_SECRET);
    }

    @Test
    void upThenWriteExecReadAcrossInvocationsThenDown() {
        Airlock.Result up = modal("up").run();
        assertEquals(0, up.exit(), up::toString);
        String id = up.out().strip();
        assertTrue(!id.isEmpty() && !id.contains(" ") && !id.contains("\n"), "up prints the sandbox id: " + up.out());
        try {
            String attach = "airlock.modal.sandbox-id=" + id;
            byte[] content = {0, 1, 2, (byte) 0xff, '\n', 0};
            Airlock.Result w = modal("--set", attach, "write", "/tmp/kept/data.bin").stdin(content).run();
            assertEquals(0, w.exit(), w::toString);
            Airlock.Result e = modal("--set", attach, "exec", "-n", "--", "wc -c < /tmp/kept/data.bin; exit 3").run();
            assertEquals(3, e.exit(), e::toString);
            assertEquals("6", e.out().strip());
            Airlock.Result r = modal("--set", attach, "read", "/tmp/kept/data.bin").run();
            assertEquals(0, r.exit(), r::toString);
            assertArrayEquals(content, r.stdout());
            Airlock.Result gc = modal("gc", "--older-than", "0s").run();
            assertEquals(0, gc.exit(), gc::toString);
            assertFalse(gc.out().contains(id), "gc keeps what up made unless --all");
            for (Airlock.Result each : List.of(up, w, e, r, gc)) {
                assertFalse(each.out().contains(TOKEN_SECRET) || each.err().contains(TOKEN_SECRET), "the secret was printed: " + each);
            }
        } finally {
            Airlock.Result down = modal("down", id).run();
            assertEquals(0, down.exit(), down::toString);
        }
        Airlock.Result gone = modal("--set", "airlock.modal.sandbox-id=" + id, "exec", "true").run();
        assertTrue(gone.exit() != 0, "down ended the sandbox: " + gone);
        assertEquals(1, gone.errLines().size(), gone::toString);
    }

    /**
     * issue 20: a named session on a sandbox {@code up} made keeps its directory and variables
     * across invocations (state under AIRLOCK_HOME, not in the private dir each close removes).
     */
    @Test
    void aNamedSessionOnAnUpSandboxCarriesOverAcrossInvocations(@TempDir Path home) {
        Airlock.Result up = modal("up").run();
        assertEquals(0, up.exit(), up::toString);
        String id = up.out().strip();
        try {
            String attach = "airlock.modal.sandbox-id=" + id;
            Airlock.Result first = modal("--set", attach, "--set", "airlock.session=dev", "exec", "-n", "--",
                    "mkdir -p /tmp/work && cd /tmp/work && export GREETING='hi there'; exit 3")
                    .env("AIRLOCK_HOME", home.toString()).run();
            assertEquals(3, first.exit(), first::toString);
            Airlock.Result second = modal("--set", attach, "--set", "airlock.session=dev", "exec", "-n", "--",
                    "pwd; printf '%s' \"$GREETING\"").env("AIRLOCK_HOME", home.toString()).run();
            assertEquals(0, second.exit(), second::toString);
            assertEquals("/tmp/work\nhi there", second.out(), "the session's directory and variable did not carry over");
            Airlock.Result plain = modal("--set", attach, "exec", "-n", "--", "pwd; echo \"${GREETING-unset}\"")
                    .env("AIRLOCK_HOME", home.toString()).run();
            assertFalse(plain.out().contains("hi there"), "a plain exec saw the session's variable: " + plain);
        } finally {
            Airlock.Result down = modal("down", id).run();
            assertEquals(0, down.exit(), down::toString);
        }
    }
}
