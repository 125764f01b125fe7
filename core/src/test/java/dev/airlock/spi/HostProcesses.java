package dev.airlock.spi;

import java.io.InputStream;
import java.io.OutputStream;
import java.util.OptionalLong;

/** Test helper: a process of this host as a backend's {@link RemoteProcess}, its streams and exit as they are. */
public final class HostProcesses {
    private HostProcesses() {
    }

    public static RemoteProcess remote(Process p) {
        return new RemoteProcess() {
            @Override
            public OutputStream stdin() {
                return p.getOutputStream();
            }

            @Override
            public InputStream stdout() {
                return p.getInputStream();
            }

            @Override
            public InputStream stderr() {
                return p.getErrorStream();
            }

            @Override
            public int waitFor() throws InterruptedException {
                return p.waitFor();
            }

            @Override
            public OptionalLong processGroup() {
                return OptionalLong.empty();
            }
        };
    }
}
