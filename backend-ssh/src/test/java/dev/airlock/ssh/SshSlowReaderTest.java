package dev.airlock.ssh;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One command's output nobody reads (the caller's sink blocks) must not stall the other commands
 * on the same connection, nor the kill that ends it. The connect timeout is longer than the waits
 * here: a stalled connection would be noticed only through it, so this fails rather than recovers.
 */
class SshSlowReaderTest {

    /** A caller's sink that takes {@code before} bytes, then blocks until released. */
    private static final class StuckSink extends OutputStream {
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch stuck = new CountDownLatch(1);
        final AtomicLong taken = new AtomicLong();

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (taken.addAndGet(len) > 64 * 1024) {
                stuck.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException();
                }
            }
        }
    }

    @Test
    void anUnreadOutputStallsNoOtherCommandAndItsKillIsPrompt() throws Exception {
        try (SshdServer server = SshdServer.start();
             Environment env = Environments.open(server.settings(SshSettings.CONNECT_TIMEOUT, "600s"))) {
            StuckSink sink = new StuckSink();
            Path pidFile = server.dir.resolve("flood.pid");
            try {
                Execution flood = env.start(ExecRequest.builder("echo $$ > " + pidFile + "; head -c 40000000 /dev/zero; sleep 300")
                        .output(sink, OutputStream.nullOutputStream()).build());
                long pid = SshExecTest.awaitPid(pidFile);
                assertTrue(sink.stuck.await(120, java.util.concurrent.TimeUnit.SECONDS), "the flood never reached the sink");
                assertEquals(1, SshBackend.of(env).openConnections(), "both commands must share one connection here");

                // Another command on the same connection runs to its end while the flood is unread.
                Execution other = env.start(ExecRequest.of("head -c 3000000 /dev/zero | wc -c"));
                ExecResult r = other.await(Duration.ofSeconds(120)).orElseThrow(
                        () -> new AssertionError("a command stalled behind another one's unread output"));
                assertEquals(0, r.exitCode(), r.stderr().text());
                assertEquals("3000000", r.stdout().text().trim());

                // The flood's cancel kills it over the same pool, without waiting for a connect timeout.
                flood.cancel();
                ExecResult c = flood.await(Duration.ofSeconds(120)).orElseThrow(
                        () -> new AssertionError("the cancel of the unread command stalled"));
                assertTrue(c.cancelled());
                assertTrue(SshExecTest.gone(pid), "the unread command " + pid + " survived its cancel");
            } finally {
                sink.release.countDown();
            }
        }
    }
}
