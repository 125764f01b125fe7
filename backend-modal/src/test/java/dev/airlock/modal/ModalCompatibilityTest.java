package dev.airlock.modal;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.emulator.CallJournal;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.EnvironmentCompatibilityKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** The compatibility kit against the Modal emulator, over the real gRPC wire. */
class ModalCompatibilityTest extends EnvironmentCompatibilityKit {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture();

    @Override
    protected Settings settings() {
        return EMULATOR.settings();
    }

    @Override
    protected Environment openEnvironment(OpenContext context) {
        return new ModalProvider().open(context);
    }

    @Override
    protected Optional<Environment> attach(Environment to) {
        String id = ModalBackend.of(to).sandboxId();
        return Optional.of(openEnvironment(OpenContext.of(settings().with(ModalSettings.SANDBOX_ID, id))));
    }

    /** The case's snapshot image, deleted on the service (ImageDelete), so a run leaves none behind. */
    @Override
    protected void discardSnapshot(String id) {
        try (ModalClient c = ModalProvider.client(settings())) {
            c.authenticate();
            if (!ModalSnapshots.delete(c, id)) {
                throw new AssertionError("snapshot image " + id + " was not on the service to delete");
            }
        }
    }

    @Override
    protected Collection<String> secrets() {
        return List.of(ModalFixture.TOKEN_ID, ModalFixture.TOKEN_SECRET);
    }

    /** What travelled in TaskExecStart argv: never the payload, never an env value. */
    @Test
    void noPayloadOrEnvValueInAnyExecStartArgv() {
        byte[] payload = new byte[3 * 1024 * 1024 + 17];
        new Random(16).nextBytes(payload);
        String value = "env-value-" + Long.toHexString(new Random().nextLong());
        try (Environment env = open(Map.of())) {
            ExecResult r = env.exec(ExecRequest.builder("printf %s \"$SECRET_ISH\" >&2; cat").env("SECRET_ISH", value)
                    .stdin(payload).build());
            assertEquals(0, r.exitCode());
            assertArrayEquals(payload, r.stdout().bytes());
            assertEquals(value, new String(r.stderr().bytes(), StandardCharsets.UTF_8));
        }
        CallJournal journal = EMULATOR.served.journal();
        assertFalse(journal.entries("TaskExecStart").isEmpty(), "no exec reached the emulator");
        journal.assertNoneCarries(value, ModalFixture.TOKEN_ID, ModalFixture.TOKEN_SECRET);
        journal.assertNoneCarries(payload);
        journal.assertNoDoubleDispatch();
    }
}
