package dev.airlock.exec;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One output stream's drain: every byte to the sink, a broken sink never stops the drain, a held pipe is let go. */
class OutputPumpTest {
    /** Only a hang exceeds it. */
    private static final Duration LONG = Duration.ofSeconds(20);

    private static Thread run(OutputPump p) {
        Thread t = new Thread(p, "pump");
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Test
    void everyByteReachesTheSinkInOrder() throws Exception {
        byte[] data = new byte[300_000];
        new Random(7).nextBytes(data);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        OutputPump p = new OutputPump(new ByteArrayInputStream(data), sink);
        run(p);
        assertTrue(p.finish(LONG), "the stream ended, so the drain finished");
        assertArrayEquals(data, sink.toByteArray());
        assertNull(p.failure());
    }

    @Test
    void aSinkThatThrowsARuntimeExceptionIsReportedAndTheStreamStillDrains() throws Exception {
        byte[] data = new byte[500_000];
        ByteArrayInputStream in = new ByteArrayInputStream(data);
        int[] writes = new int[1];
        OutputPump p = new OutputPump(in, new OutputStream() {
            @Override
            public void write(int b) {
                throw new IllegalStateException("never single bytes");
            }

            @Override
            public void write(byte[] b, int off, int len) {
                writes[0]++;
                throw new IllegalStateException("the caller's sink broke");
            }
        });
        run(p);
        assertTrue(p.finish(LONG));
        assertEquals(0, in.available(), "the drain stopped at the broken sink: the command would block on a full pipe");
        assertEquals(1, writes[0], "after the sink broke, the rest is discarded, not written again");
        assertInstanceOf(IOException.class, p.failure());
        assertTrue(p.failure().getMessage().contains("the caller's sink broke"), p.failure().getMessage());
    }

    @Test
    void theFirstIoFailureOfTheSinkIsTheOneReported() throws Exception {
        IOException full = new IOException("disk full");
        OutputPump p = new OutputPump(new ByteArrayInputStream(new byte[200_000]), new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw full;
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                throw full;
            }
        });
        run(p);
        assertTrue(p.finish(LONG));
        assertSame(full, p.failure());
    }

    @Test
    void aPipeHeldOpenIsLetGoAfterTheGraceAndLaterBytesAreDiscarded() throws Exception {
        PipedOutputStream holder = new PipedOutputStream();
        PipedInputStream in = new PipedInputStream(holder, 1 << 16);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        OutputPump p = new OutputPump(in, sink);
        Thread t = run(p);
        holder.write("before".getBytes());
        holder.flush();
        // A background job keeps the pipe open and quiet: the drain must not wait for its end.
        assertFalse(p.finish(Duration.ofMillis(200)), "a pipe that never ends was taken for ended");
        holder.write("after".getBytes());
        holder.flush();
        holder.close();
        t.join(LONG.toMillis());
        assertFalse(t.isAlive());
        assertEquals("before", sink.toString(), "bytes after the drain gave up reached the sink");
    }

    @Test
    void aSlowSinkIsNeverMistakenForAnIdleCommand() throws Exception {
        CountDownLatch inWrite = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        ByteArrayOutputStream kept = new ByteArrayOutputStream();
        OutputPump p = new OutputPump(new ByteArrayInputStream("slow".getBytes()), new OutputStream() {
            @Override
            public void write(int b) {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                inWrite.countDown();
                try {
                    go.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                kept.write(b, off, len);
            }
        });
        run(p);
        assertTrue(inWrite.await(20, TimeUnit.SECONDS));
        Thread releaser = new Thread(() -> {
            try {
                Thread.sleep(600); // several graces long, while the sink is busy
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            go.countDown();
        });
        releaser.start();
        assertTrue(p.finish(Duration.ofMillis(100)), "the drain gave up while the caller's sink was still writing");
        assertEquals("slow", kept.toString());
    }

    /** Output that keeps coming after the command exited (a job printing steadily) is waited for, to its end. */
    @Test
    void steadyOutputAfterTheExitIsWaitedForToItsEnd() throws Exception {
        PipedInputStream in = new PipedInputStream(1 << 16);
        PipedOutputStream out = new PipedOutputStream(in);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        OutputPump p = new OutputPump(in, sink);
        run(p);
        Thread writer = new Thread(() -> {
            try {
                for (int i = 0; i < 10; i++) {
                    out.write('a' + i);
                    out.flush();
                    Thread.sleep(60);
                }
                out.close();
            } catch (IOException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        writer.start();
        assertTrue(p.finish(Duration.ofMillis(400)), "the drain gave up on output that was still arriving");
        assertEquals("abcdefghij", sink.toString(java.nio.charset.StandardCharsets.US_ASCII));
        writer.join();
    }

    /**
     * A command silent for longer than the grace whose last bytes come after its exit status (OpenSSH
     * sends exit-status, then what is left in the command's pipe): the grace counts from the exit,
     * not from the last byte before it. It once counted from the last byte, so such bytes were
     * dropped after 50 ms and the result said exit 0 with no output.
     */
    @Test
    void bytesThatTrailTheExitOfASilentCommandAreWaitedFor() throws Exception {
        PipedInputStream in = new PipedInputStream(1 << 16);
        PipedOutputStream out = new PipedOutputStream(in);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        OutputPump p = new OutputPump(in, sink);
        run(p);
        Duration grace = Duration.ofSeconds(3);
        // Silent for longer than the grace before the exit (the pump was made when the command started).
        Thread.sleep(grace.toMillis() + 500);
        CountDownLatch exited = new CountDownLatch(1);
        Thread late = new Thread(() -> {
            try {
                exited.await();
                Thread.sleep(300); // behind the exit status, on its way
                out.write("n3 done\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                out.close();
            } catch (IOException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        late.start();
        exited.countDown();
        assertTrue(p.finish(grace), "the drain gave up on bytes that came right after the exit");
        assertEquals("n3 done\n", sink.toString(java.nio.charset.StandardCharsets.US_ASCII));
        late.join();
    }
}
