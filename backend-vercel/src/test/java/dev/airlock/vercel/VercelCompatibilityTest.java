package dev.airlock.vercel;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.EnvironmentCompatibilityKit;
import dev.airlock.vercel.emulator.VercelEmulator;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The compatibility kit against the Vercel emulator, and what its journal saw. */
class VercelCompatibilityTest extends EnvironmentCompatibilityKit {
    // Closed when the JVM ends: the kit's own @AfterAll closes its shared environment after ours would run.
    private static final VercelEmulatorFixture FIXTURE = new VercelEmulatorFixture(FaultPlan.none());

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(FIXTURE::close));
    }

    @Override
    protected Settings settings() {
        return FIXTURE.settings();
    }

    @Override
    protected Environment openEnvironment(OpenContext context) {
        return new VercelProvider().open(context);
    }

    @Override
    protected Optional<Environment> attach(Environment to) {
        return Optional.of(openEnvironment(OpenContext.of(settings().with(VercelSettings.SANDBOX_ID, to.id()))));
    }

    /** Deletes the kit's snapshot, and checks the emulator no longer holds it: a run leaves nothing. */
    @Override
    protected void discardSnapshot(String id) {
        try (VercelApi api = new VercelApi(VercelSettings.from(settings(), Map.of()), settings())) {
            api.deleteSnapshot(id);
        }
        assertFalse(FIXTURE.emulator.snapshotExists(id), "snapshot " + id + " is still there after its delete");
    }

    @Override
    protected Collection<String> secrets() {
        return List.of(VercelEmulatorFixture.TOKEN);
    }

    @Test
    void noPayloadOrEnvValueTravelsInACommandAndStagedFilesAre0600() {
        byte[] payload = "stdin-payload-\u00e9\u0000-7f3a9".getBytes(StandardCharsets.UTF_8);
        String envValue = "env-value-91c2e7";
        try (Environment env = new VercelProvider().open(OpenContext.of(settings()))) {
            ExecResult r = env.exec(ExecRequest.builder("printf %s \"$SECRET_ENV\"; cat").env(Map.of("SECRET_ENV", envValue))
                    .stdin(payload).build());
            assertEquals(0, r.exitCode(), r.stderr().text());
            byte[] expected = (envValue + new String(payload, StandardCharsets.ISO_8859_1)).getBytes(StandardCharsets.ISO_8859_1);
            assertArrayEquals(expected, r.stdout().bytes());
        }
        CallJournal journal = FIXTURE.journal;
        assertFalse(journal.entries("cmd").isEmpty());
        journal.assertNoneCarries(envValue);
        journal.assertNoneCarries(payload);
        journal.assertNoneCarries(VercelEmulatorFixture.TOKEN);
        journal.assertNoDoubleDispatch();
        List<VercelEmulator.StagedWrite> writes = FIXTURE.emulator.writes();
        assertFalse(writes.isEmpty(), "stdin was staged through fs/write (the variables go in the command's body, never its argv)");
        for (VercelEmulator.StagedWrite w : writes) {
            assertEquals(0600, w.headerMode(), w.path());
            assertEquals(0600, w.fileMode(), w.path());
        }
        assertTrue(writes.stream().anyMatch(w -> w.size() == payload.length), "the payload was one staged file");
    }
}
