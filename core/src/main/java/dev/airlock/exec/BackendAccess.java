package dev.airlock.exec;

import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.Target;
import dev.airlock.spi.CoreAccess;
import dev.airlock.spi.Killer;
import dev.airlock.spi.RawResult;
import dev.airlock.spi.Stager;

import java.io.IOException;

/** The {@link CoreAccess} a backend gets: a narrow view of its {@link CoreEnvironment}. */
final class BackendAccess implements CoreAccess {
    private final CoreEnvironment env;

    BackendAccess(CoreEnvironment env) {
        this.env = env;
    }

    @Override
    public Target target() {
        return env.target();
    }

    @Override
    public boolean isClosed() {
        return env.isClosed();
    }

    @Override
    public RawResult run(String script, Payload stdin) throws IOException {
        return env.runRaw(script, stdin);
    }

    @Override
    public RemoteFiles files() {
        return env.files();
    }

    @Override
    public RemoteFiles shellFiles() {
        return env.shellFiles();
    }

    @Override
    public Stager shellStager() {
        return env.hooks().scripts();
    }

    @Override
    public Killer shellKiller() {
        return env.hooks().scripts();
    }
}
