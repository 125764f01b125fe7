package dev.airlock.modal;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Terminate exactly once under racing close and cancel; up/down keep a sandbox across clients. */
class ModalLifecycleTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture();

    private long terminates() {
        return EMULATOR.served.journal().entries().stream().filter(e -> e.call().startsWith("SandboxTerminate")).count();
    }

    @Test
    void racingClosesAndACancelTerminateOnce() throws Exception {
        long before = terminates();
        Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings().with("airlock.cancel", "sandbox")));
        Execution running = env.start(ExecRequest.of("sleep 30"));
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            int n = i;
            Thread t = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                if (n % 2 == 0) {
                    running.cancel();
                } else {
                    env.close();
                }
            });
            t.start();
            threads.add(t);
        }
        go.countDown();
        for (Thread t : threads) {
            t.join(60_000);
        }
        env.close();
        assertEquals(1, terminates() - before, "SandboxTerminate calls for one environment");
        assertEquals(0, ((dev.airlock.modal.emulator.ModalEmulator) EMULATOR.served.emulator()).liveSandboxes());
    }

    @Test
    void upKeepsASandboxAcrossClientsAndDownEndsIt() {
        ModalProvider p = new ModalProvider();
        String id = p.up(EMULATOR.settings(), dev.airlock.spi.SandboxLifecycle.DEFAULT_TTL);
        var attach = EMULATOR.settings().with(ModalSettings.SANDBOX_ID, id);
        try (Environment a = p.open(OpenContext.of(attach))) {
            a.files().write("/tmp/kept.txt", dev.airlock.Payload.ofUtf8("kept"));
        }
        try (Environment b = p.open(OpenContext.of(attach))) {
            ExecResult r = b.exec(ExecRequest.of("cat /tmp/kept.txt"));
            assertEquals("kept", new String(r.stdout().bytes(), StandardCharsets.UTF_8));
        }
        p.down(EMULATOR.settings(), id);
        assertThrows(dev.airlock.AirlockException.class, () -> p.open(OpenContext.of(attach)).close());
    }

    /**
     * An {@code up} sandbox lives its ttl, then ends by itself (its Modal timeout); attaching to it
     * after that is one line that says so and what to do, not a stack of gRPC.
     */
    @Test
    void anUpSandboxEndsAfterItsTtlAndAttachingThenSaysSo() throws Exception {
        ModalProvider p = new ModalProvider();
        String id = p.up(EMULATOR.settings(), java.time.Duration.ofSeconds(2));
        var attach = EMULATOR.settings().with(ModalSettings.SANDBOX_ID, id);
        try (Environment a = p.open(OpenContext.of(attach))) {
            assertEquals("up", a.exec(ExecRequest.of("printf up")).stdout().text(), "alive within its ttl");
            long end = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
            dev.airlock.AirlockException e = null;
            while (e == null && System.nanoTime() < end) {
                Thread.sleep(500);
                try {
                    p.open(OpenContext.of(attach)).close();
                } catch (dev.airlock.AirlockException ended) {
                    e = ended;
                }
            }
            assertTrue(e != null, "the sandbox outlived its 2 s ttl by 30 s");
            assertEndedLine(id, e);
            // An environment attached before the end meets it on its next command, told the same way.
            assertEndedLine(id, assertThrows(dev.airlock.AirlockException.class, () -> a.exec(ExecRequest.of("true"))));
        }
        dev.airlock.ConfigurationException tooLong = assertThrows(dev.airlock.ConfigurationException.class,
                () -> p.up(EMULATOR.settings(), java.time.Duration.ofHours(25)));
        assertEquals("--ttl 90000s is beyond Modal's sandbox lifetime: 1s to 24h", tooLong.getMessage());
    }

    /**
     * A sandbox that ends under a running command (its ttl, or {@code down} from elsewhere) kills
     * the command with it: the exec fails with the sandbox's ended line, never passes the kill's
     * 137 for the command's own exit (CI once saw the target probe of an attach fail with "exit
     * 137" when the ttl ran out during it).
     */
    @Test
    void aCommandTheSandboxEndsUnderFailsWithTheEndedLineNotExit137() throws Exception {
        ModalProvider p = new ModalProvider();
        String id = p.up(EMULATOR.settings(), dev.airlock.spi.SandboxLifecycle.DEFAULT_TTL);
        var attach = EMULATOR.settings().with(ModalSettings.SANDBOX_ID, id);
        try (Environment a = p.open(OpenContext.of(attach))) {
            java.util.concurrent.ExecutorService own = java.util.concurrent.Executors.newSingleThreadExecutor();
            var running = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> a.exec(ExecRequest.of("touch /tmp/started; sleep 60")), own); // its own thread: never queued behind others
            try (Environment b = p.open(OpenContext.of(attach))) {
                long end = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
                boolean started = false;
                while (!(started = b.exec(ExecRequest.of("test -f /tmp/started")).succeeded()) && System.nanoTime() < end) {
                    Thread.sleep(100);
                }
                assertTrue(started, "the command never started, so its end under the sandbox's would not be what is tested");
            }
            p.down(EMULATOR.settings(), id);
            java.util.concurrent.ExecutionException failed = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> running.get(60, java.util.concurrent.TimeUnit.SECONDS), () -> "the exec passed: " + running.join());
            assertTrue(failed.getCause() instanceof dev.airlock.AirlockException, String.valueOf(failed.getCause()));
            assertEndedLine(id, (Exception) failed.getCause());
            own.shutdown();
        }
    }

    private static void assertEndedLine(String id, Exception e) {
        assertTrue(e.getMessage().startsWith("the Modal sandbox " + id + " has ended")
                && e.getMessage().endsWith("make a new one with 'airlock --backend modal up --ttl DURATION' and attach to that")
                && !e.getMessage().contains("\n"), e.getMessage());
    }

    /**
     * A sandbox {@code up} made in the V1 family is attached and ended by its id alone: the id's
     * shape picks the family (as the official SDKs tell), not the attaching process's settings.
     */
    @Test
    void aV1SandboxIsAttachedByItsIdAlone() {
        ModalProvider p = new ModalProvider();
        int v1Terminates = EMULATOR.served.journal().entries("SandboxTerminate").size();
        String id = p.up(EMULATOR.settings().with(ModalSettings.FAMILY, "v1"), dev.airlock.spi.SandboxLifecycle.DEFAULT_TTL);
        try {
            assertFalse(ModalSandbox.isV2(id), "not a V1 sandbox id: " + id);
            try (Environment e = p.open(OpenContext.of(EMULATOR.settings().with(ModalSettings.SANDBOX_ID, id)))) {
                assertEquals("attached", e.exec(ExecRequest.of("printf attached")).stdout().text());
            }
        } finally {
            p.down(EMULATOR.settings(), id);
        }
        assertEquals(v1Terminates + 1, EMULATOR.served.journal().entries("SandboxTerminate").size(), "down ends a V1 sandbox with the V1 RPC");
    }

    /** A command that closes its stdin early runs on to its end, as with a pipe: the refused writes do not kill it. */
    @Test
    void aCommandThatClosesItsStdinEarlyRunsOnToItsEnd() {
        try (Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings()))) {
            ExecResult r = env.exec(ExecRequest.builder("exec 0<&-; sleep 1; echo done").stdin(new byte[8 * 1024 * 1024]).build());
            assertEquals(0, r.exitCode(), r.stderr().text());
            assertEquals("done\n", new String(r.stdout().bytes(), StandardCharsets.UTF_8));
        }
    }

    @Test
    void aStdinWriteToAnExitedCommandIsReportedNotHung() {
        try (Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings()))) {
            ExecResult r = env.exec(ExecRequest.builder("head -c 10").stdin(new byte[8 * 1024 * 1024]).build());
            assertEquals(0, r.exitCode());
            assertEquals(10, r.stdout().size());
        }
    }

    /**
     * gc finds the sandboxes a dead process left (both families, across list pages) by their tags,
     * never a younger one, never another owner's or an untagged one, never one an open environment
     * holds, and a kept one only when asked.
     */
    /** The gc test's own ledger: the module's other tests record their snapshots in the shared one. */
    @org.junit.jupiter.api.io.TempDir
    java.nio.file.Path airlockHome;

    @Test
    void gcTerminatesOnlyThisOwnersOrphansAndKeptOnesOnlyWhenAsked() {
        var emulator = (dev.airlock.modal.emulator.ModalEmulator) EMULATOR.served.emulator();
        ModalProvider p = new ModalProvider(java.util.Map.of("AIRLOCK_HOME", airlockHome.toString()));
        int before = emulator.liveSandboxes();
        String kept = p.up(EMULATOR.settings(), dev.airlock.spi.SandboxLifecycle.DEFAULT_TTL);
        java.util.Set<String> orphans = new java.util.HashSet<>();
        List<String> others = new ArrayList<>();
        try (ModalClient c = ModalProvider.client(EMULATOR.settings())) {
            for (int i = 0; i < dev.airlock.modal.emulator.ModalEmulator.LIST_PAGE + 1; i++) {
                orphans.add(ModalSandbox.create(c, leftByADeadProcess()).id());
            }
            others.add(foreign(c, List.of(dev.airlock.modal.proto.SandboxTag.newBuilder().setTagName("airlock.managed").setTagValue("true").build(),
                    dev.airlock.modal.proto.SandboxTag.newBuilder().setTagName("airlock.owner").setTagValue("mallory@elsewhere").build(),
                    dev.airlock.modal.proto.SandboxTag.newBuilder().setTagName("airlock.created").setTagValue("2020-01-01T00:00:00Z").build())));
            others.add(foreign(c, List.of()));
        }
        try (ModalClient v1 = ModalProvider.client(EMULATOR.settings().with(ModalSettings.FAMILY, "v1"))) {
            orphans.add(ModalSandbox.create(v1, leftByADeadProcess()).id());
        }
        assertEquals(before + orphans.size() + 3, emulator.liveSandboxes());

        assertEquals(List.of(), p.gc(EMULATOR.settings(), java.time.Duration.ofHours(1), true), "nothing is an hour old");
        try (dev.airlock.Environment live = p.open(dev.airlock.spi.OpenContext.of(EMULATOR.settings()))) {
            assertEquals(orphans, java.util.Set.copyOf(p.gc(EMULATOR.settings(), java.time.Duration.ZERO, false)));
            assertEquals(0, live.exec(dev.airlock.ExecRequest.of("true")).exitCode(), "gc removed an open environment's sandbox");
            assertEquals(before + 4, emulator.liveSandboxes(), "the open, kept, foreign and untagged sandboxes run on");
        }
        assertEquals(before + 3, emulator.liveSandboxes(), "the kept, the foreign and the untagged sandboxes run on");
        assertEquals(List.of(kept), p.gc(EMULATOR.settings(), java.time.Duration.ZERO, true));
        assertEquals(before + 2, emulator.liveSandboxes(), "another owner's and an untagged sandbox are never collected");
        try (ModalClient c = ModalProvider.client(EMULATOR.settings())) {
            others.forEach(id -> ModalSandbox.terminate(c, id, true));
        }
    }

    /** This owner's labels as a process that died before closing left them: its holder is gone. */
    private static dev.airlock.spi.ResourceLabels leftByADeadProcess() {
        dev.airlock.spi.ResourceLabels now = dev.airlock.spi.ResourceLabels.now(false);
        return new dev.airlock.spi.ResourceLabels(now.owner(), now.created(), now.version(), false, dev.airlock.tck.GoneHolder.label());
    }

    /** A sandbox made by someone else's client: the given tags only. */
    private static String foreign(ModalClient c, List<dev.airlock.modal.proto.SandboxTag> tags) {
        // An image the service knows: it refuses a create from an image id it has not made.
        String image = c.control("ImageGetOrCreate", dev.airlock.remote.Resource.none(), st -> st.imageGetOrCreate(
                dev.airlock.modal.proto.ImageGetOrCreateRequest.newBuilder().setAppId("ap-foreign").setImage(
                        dev.airlock.modal.proto.Image.newBuilder().addDockerfileCommands("FROM debian:bookworm-slim")).build()))
                .getImageId();
        return c.control("SandboxCreateV2", dev.airlock.remote.Resource.none(), st -> st.sandboxCreateV2(
                dev.airlock.modal.proto.SandboxCreateV2Request.newBuilder().setAppId("ap-foreign")
                        .setDefinition(dev.airlock.modal.proto.Sandbox.newBuilder().setImageId(image)).addAllTags(tags).build()))
                .getSandboxId();
    }
}
