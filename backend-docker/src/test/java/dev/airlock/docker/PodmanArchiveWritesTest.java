package dev.airlock.docker;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@code airlock.docker.files=archive} against podman's archive endpoint: the route taken and the bytes commands read. */
@ExtendWith(PodmanFixture.class)
class PodmanArchiveWritesTest {

    @Test
    void archiveWritesLandWhereCommandsLookAndATmpfsTakesTheShellPath() {
        try (Environment env = new DockerProvider().open(OpenContext.of(PodmanFixture.podmanSettings(
                DockerSettings.FILES, "archive", DockerHardening.TMPFS, "/scratch:mode=1777")))) {
            byte[] data = new byte[(2 << 20) + 7];
            new Random(3).nextBytes(data);
            data[0] = 0;
            env.files().write("/work/f", data);
            assertEquals(1, DockerBackend.of(env).archiveWrites(), "the root filesystem takes the archive route");
            assertArrayEquals(data, env.exec(ExecRequest.builder("cat /work/f").build()).stdout().bytes());
            env.files().write("/scratch/f", data);
            assertEquals(1, DockerBackend.of(env).archiveWrites(), "a tmpfs takes the shell path");
            assertArrayEquals(data, env.exec(ExecRequest.builder("cat /scratch/f").build()).stdout().bytes());
        }
    }
}
