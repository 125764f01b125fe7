package dev.airlock.exec;

import dev.airlock.Capabilities;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.Launch;
import dev.airlock.spi.RemoteProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a backend's transport can count on from the core (the SPI's promises about a launched
 * command), driven through the real core on host processes.
 */
class TransportContractTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();


    /**
     * A command given no stdin has its transport's stdin closed at once: a login shell whose
     * startup reads stdin (a profile that prompts) sees its end and goes on, instead of hanging the exec.
     */
    @Test
    void withoutStdinTheTransportsStdinIsClosedSoAStartupThatReadsItGoesOn() throws Exception {
        HostBackend b = new HostBackend(HostBackend.settings(dir), Capabilities.pipe().withNativeEnv(true), List.of()) {
            @Override
            public RemoteProcess launch(Launch l, Deadline deadline) throws IOException {
                if (l.internal()) {
                    return super.launch(l, deadline);
                }
                String startup = "read -r answer\n"; // before the core's own prefix, as a profile runs
                return super.launch(new Launch(l.shell(), startup + l.script(), l.env(), l.unset(), l.pipeStdin(), l.internal()),
                        deadline);
            }
        };
        opened.add(b);
        Optional<ExecResult> r = b.start(ExecRequest.of("echo ran")).await(HostBackend.HANG);
        assertTrue(r.isPresent(), "a startup reading the transport's stdin hung: the core never closed it");
        assertEquals("ran\n", r.get().stdout().text());
    }

    /** Every launched command's transport is released once its exec returned, so a backend can free its channel. */
    @Test
    void eachCommandsTransportIsReleasedWhenItsExecReturns() {
        AtomicInteger started = new AtomicInteger();
        AtomicInteger released = new AtomicInteger();
        HostBackend b = new HostBackend(HostBackend.settings(dir), Capabilities.pipe().withNativeEnv(true), List.of()) {
            @Override
            public RemoteProcess launch(Launch l, Deadline deadline) throws IOException {
                RemoteProcess p = super.launch(l, deadline);
                if (l.internal()) {
                    return p;
                }
                started.incrementAndGet();
                return new DelegatingProcess(p) {
                    @Override
                    public void release() {
                        released.incrementAndGet();
                    }
                };
            }
        };
        opened.add(b);
        for (int i = 0; i < 2; i++) {
            assertEquals(0, b.exec(ExecRequest.of("echo ran")).exitCode());
            assertEquals(started.get(), released.get(), "a returned exec's transport was not released");
        }
    }
}
