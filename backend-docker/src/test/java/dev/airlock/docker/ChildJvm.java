package dev.airlock.docker;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;

/** Opens a docker environment, prints its container id, then runs a long command until killed. */
public final class ChildJvm {
    private ChildJvm() {
    }

    public static void main(String[] args) {
        Environment env = Environments.open(DockerFixture.settings());
        System.out.println(DockerBackend.of(env).containerId());
        System.out.flush();
        env.exec(ExecRequest.builder("sleep 306").build());
    }
}
