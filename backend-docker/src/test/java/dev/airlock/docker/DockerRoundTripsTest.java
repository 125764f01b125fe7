package dev.airlock.docker;

import dev.airlock.AirlockException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Payload;
import dev.airlock.WriteOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What an agent's turn costs in commands started in the container (docker execs, each a round
 * trip the daemon makes into the container) and in API calls: open creates and starts the
 * container (no image inspect first: the create says whether it is here) and starts one exec,
 * the control shell, which answers the probe, the profile home, every write's path resolution
 * and the private dir's removal at close; a small write is one exec. Counted as the requests
 * reaching the daemon through a proxy.
 * And what a write that fails or loses its connection leaves: the old bytes and no temp file.
 */
@ExtendWith(DockerFixture.class)
class DockerRoundTripsTest {
    private static final Path SOCKET = Path.of("/var/run/docker.sock");

    private static long execStarts(UnixSocketProxy proxy) {
        return proxy.requests().stream().filter(l -> l.matches("POST (/v[0-9.]+)?/exec/[0-9a-f]+/start")).count();
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static String sh(Environment env, String script) {
        ExecResult r = env.exec(ExecRequest.builder(script).build());
        assertEquals(0, r.exitCode(), script + ": " + r.stderr().text());
        return r.stdout().text();
    }

    /** The temp files a write put beside its target and left, as {@code ls -a} lists them. */
    private static String tempFiles(Environment env, String dir) {
        return sh(env, "ls -a " + dir + " | grep airlock-write || true");
    }

    @Test
    void openStartsOneExecASmallWriteOneAndCloseNone() throws Exception {
        try (UnixSocketProxy proxy = new UnixSocketProxy(SOCKET)) {
            Environment env = Environments.open(DockerFixture.settings(DockerSettings.HOST, proxy.url()));
            long atOpen = execStarts(proxy);
            byte[] first = random(4096, 1);
            byte[] second = random(4096, 2);
            env.files().write("/srv/w1", Payload.of(first), WriteOptions.defaults().withCreateParents(true));
            long firstWrite = execStarts(proxy) - atOpen;
            env.files().write("/srv/w1", second);
            long secondWrite = execStarts(proxy) - atOpen - firstWrite;
            assertArrayEquals(second, env.files().read("/srv/w1").readAllBytes(), "the last write's bytes");
            long beforeClose = execStarts(proxy);
            env.close();
            long atClose = execStarts(proxy) - beforeClose;
            assertEquals(1, atOpen, "open: the control shell only (the probe and the profile home run in it)");
            assertEquals(java.util.List.of(), proxy.requests().stream().filter(l -> l.matches("GET (/v[0-9.]+)?/images/.*/json")).toList(),
                    "the image is not inspected before a create that finds it");
            assertEquals(1, firstWrite, "the first write: its own exec (the guard's rules and the path resolved in the control shell)");
            assertEquals(1, secondWrite, "a write: its own exec");
            assertEquals(0, atClose, "close: the private dir is removed in the control shell");
        }
    }

    /**
     * The guard resolves a write's path once, in the container's own view (the resolution script,
     * whose functions open with {@code canon() {}, sent once), not once in front of a native file
     * API and again in the shell write behind it.
     */
    @Test
    void aWriteResolvesItsPathOnce() throws Exception {
        try (UnixSocketProxy proxy = new UnixSocketProxy(SOCKET);
             Environment env = Environments.open(DockerFixture.settings(DockerSettings.HOST, proxy.url()))) {
            env.files().write("/srv/once", Payload.of(random(4096, 10)), WriteOptions.defaults().withCreateParents(true));
            proxy.watch("canon() {");
            byte[] bytes = random(4096, 11);
            env.files().write("/srv/once", bytes);
            assertEquals(1, proxy.watchedCount(), "resolution scripts sent for one write");
            assertArrayEquals(bytes, env.files().read("/srv/once").readAllBytes());
        }
    }

    /** A content stream that fails half-way: the write fails, the old bytes stay, no temp file is left. */
    @Test
    void aWriteWhoseContentFailsHalfWayLeavesTheOldBytesAndNoTempFile() throws Exception {
        try (Environment env = Environments.open(DockerFixture.settings())) {
            byte[] old = random(4096, 3);
            env.files().write("/srv/f", Payload.of(old), WriteOptions.defaults().withCreateParents(true));
            byte[] half = random(2048, 4);
            InputStream failing = new InputStream() {
                private int sent;

                @Override
                public int read() throws IOException {
                    byte[] one = new byte[1];
                    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    if (sent >= half.length) {
                        throw new IOException("the source failed half-way");
                    }
                    int n = Math.min(len, half.length - sent);
                    System.arraycopy(half, sent, b, off, n);
                    sent += n;
                    return n;
                }
            };
            assertThrows(AirlockException.class, () -> env.files().write("/srv/f", Payload.ofStream(failing, 4096), WriteOptions.defaults()));
            assertArrayEquals(old, env.files().read("/srv/f").readAllBytes(), "the old bytes, not half of the new");
            awaitNoTempFile(env, "/srv");
        }
    }

    /**
     * The write's shell is SIGKILLed while its content streams, as the kill's SIGKILL after the
     * grace took it when the SIGTERM came just before {@code cat} started (CI saw the temp file
     * stay), or as the OOM killer would: its EXIT trap never runs, yet once the write has failed
     * no temp file is there, and the old bytes are.
     */
    @Test
    void aWriteWhoseShellIsKilledOutrightLeavesTheOldBytesAndNoTempFile() throws Exception {
        try (Environment env = Environments.open(DockerFixture.settings())) {
            byte[] old = random(4096, 7);
            env.files().write("/srv/k", Payload.of(old), WriteOptions.defaults().withCreateParents(true));
            byte[] half = random(2048, 8);
            CountDownLatch fail = new CountDownLatch(1);
            InputStream halfThenFails = new InputStream() {
                private boolean sent;

                @Override
                public int read() throws IOException {
                    byte[] one = new byte[1];
                    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    if (!sent) {
                        sent = true;
                        int n = Math.min(len, half.length);
                        System.arraycopy(half, 0, b, off, n);
                        return n;
                    }
                    try {
                        fail.await(60, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    throw new IOException("the source failed half-way");
                }
            };
            try {
                CompletableFuture<Void> write = CompletableFuture.runAsync(() ->
                        env.files().write("/srv/k", Payload.ofStream(halfThenFails, 4096), WriteOptions.defaults()));
                String made = tempFiles(env, "/srv");
                for (int i = 0; i < 600 && made.isEmpty(); i++) {
                    Thread.sleep(100);
                    made = tempFiles(env, "/srv");
                }
                assertTrue(!made.isEmpty(), "the write's script made its temp file");
                // The write's shell: the one whose command line makes the temp file (the bracket
                // keeps this script's own line from matching).
                String killed = sh(env, "for p in /proc/[0-9]*; do grep -q 'mktemp ./.airlock-writ[e]-' $p/cmdline 2>/dev/null"
                        + " && kill -KILL ${p#/proc/} && echo ${p#/proc/}; done; true");
                assertTrue(!killed.isBlank(), "the write's shell was found and killed");
                fail.countDown();
                ExecutionException failed = assertThrows(ExecutionException.class, () -> write.get(60, TimeUnit.SECONDS));
                assertTrue(failed.getCause() instanceof AirlockException, failed.getCause().toString());
            } finally {
                fail.countDown();
            }
            assertArrayEquals(old, env.files().read("/srv/k").readAllBytes(), "the old bytes, not half of the new");
            assertEquals("", tempFiles(env, "/srv"), "no temp file is left once the write has failed");
        }
    }

    /**
     * The exec's connection breaks while the content streams (a network fault, a daemon restart):
     * the write fails, and in the container the write's script sees its input end short, removes its
     * temp file and leaves the target as it was.
     */
    @Test
    void aWriteWhoseConnectionBreaksMidStreamLeavesTheOldBytesAndNoTempFile() throws Exception {
        try (UnixSocketProxy proxy = new UnixSocketProxy(SOCKET);
             Environment env = Environments.open(DockerFixture.settings(DockerSettings.HOST, proxy.url()))) {
            byte[] old = random(4096, 5);
            env.files().write("/srv/g", Payload.of(old), WriteOptions.defaults().withCreateParents(true));
            byte[] half = random(2048, 6);
            CountDownLatch halfSent = new CountDownLatch(1);
            CountDownLatch broken = new CountDownLatch(1);
            InputStream pausing = new InputStream() {
                private int sent;

                @Override
                public int read() throws IOException {
                    byte[] one = new byte[1];
                    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    if (sent >= half.length) {
                        halfSent.countDown();
                        try {
                            broken.await(60, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new java.io.InterruptedIOException();
                        }
                        return -1; // the rest never comes: the connection is gone by now
                    }
                    int n = Math.min(len, half.length - sent);
                    System.arraycopy(half, sent, b, off, n);
                    sent += n;
                    return n;
                }
            };
            Thread breaker = new Thread(() -> {
                try {
                    if (halfSent.await(60, TimeUnit.SECONDS)) {
                        proxy.breakExecConnections();
                    }
                } catch (InterruptedException | IOException e) {
                    // the write below fails its own way then
                } finally {
                    broken.countDown();
                }
            });
            breaker.start();
            assertThrows(AirlockException.class, () -> env.files().write("/srv/g", Payload.ofStream(pausing, 4096), WriteOptions.defaults()));
            breaker.join();
            assertArrayEquals(old, env.files().read("/srv/g").readAllBytes(), "the old bytes, not what got through");
            awaitNoTempFile(env, "/srv");
        }
    }

    /**
     * The write's script ends in the container on its own time after the caller heard of the
     * failure: waits (bounded, a minute) until its temp file is gone, then says whether it is.
     */
    private static void awaitNoTempFile(Environment env, String dir) throws InterruptedException {
        String left = tempFiles(env, dir);
        for (int i = 0; i < 600 && !left.isEmpty(); i++) {
            Thread.sleep(100);
            left = tempFiles(env, dir);
        }
        assertEquals("", left, "no temp file is left in " + dir);
    }
}
