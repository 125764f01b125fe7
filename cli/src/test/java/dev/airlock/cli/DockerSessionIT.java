package dev.airlock.cli;

import dev.airlock.docker.DockerFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static dev.airlock.cli.Airlock.raw;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** A named session on a sandbox made by {@code up}: its state carries over between invocations that attach to it. */
@ExtendWith(DockerFixture.class)
class DockerSessionIT {

    @TempDir
    Path tmp;
    /** Airlock's state, outside the working directory (where Airlock refuses it). */
    private final Path home = Airlock.stateDir();

    private Airlock docker(String... args) {
        String[] all = new String[6 + args.length];
        System.arraycopy(new String[] {"--backend", "docker", "--set", "airlock.docker.image=" + DockerFixture.IMAGE,
                "--set", "airlock.docker.pull=never"}, 0, all, 0, 6);
        System.arraycopy(args, 0, all, 6, args.length);
        return raw(all).env("AIRLOCK_HOME", home.toString());
    }

    @Test
    void aNamedSessionKeepsItsStateOnAnUpSandbox() {
        Airlock.Result up = docker("up").run();
        assertEquals(0, up.exit(), up::toString);
        String attach = "airlock.docker.container=" + up.out().strip();
        try {
            Airlock.Result first = docker("--set", attach, "--set", "airlock.session=dev", "exec", "-n", "--",
                    "mkdir -p /tmp/proj && cd /tmp/proj && export STAGE=two").run();
            assertEquals(0, first.exit(), first::toString);
            Airlock.Result second = docker("--set", attach, "--set", "airlock.session=dev", "exec", "-n", "--",
                    "echo \"$PWD $STAGE\"").run();
            assertEquals(0, second.exit(), second::toString);
            assertEquals("/tmp/proj two\n", second.out());
            Airlock.Result other = docker("--set", attach, "--set", "airlock.session=other", "exec", "-n", "--",
                    "echo \"${STAGE-unset}\"").run();
            assertEquals("unset\n", other.out(), other::toString);
        } finally {
            Airlock.Result down = docker("down", up.out().strip()).run();
            assertEquals(0, down.exit(), down::toString);
        }
    }
}
