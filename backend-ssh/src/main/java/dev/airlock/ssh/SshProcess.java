package dev.airlock.ssh;

import com.jcraft.jsch.ChannelExec;
import dev.airlock.spi.RemoteProcess;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.OptionalLong;

/**
 * A command on one exec channel. The core drains stdout and stderr concurrently (one undrained
 * stream would stall every channel of the connection) and closes stdin, which sends EOF.
 */
final class SshProcess implements RemoteProcess {
    private static final Logger LOG = LoggerFactory.getLogger(SshProcess.class);

    private final ChannelExec channel;
    private final Connections.Lease lease;
    private final OutputStream stdin;
    private final InputStream stdout;
    private final InputStream stderr;

    SshProcess(ChannelExec channel, Connections.Lease lease, OutputStream stdin, InputStream stdout, InputStream stderr) {
        this.channel = channel;
        this.lease = lease;
        this.stdin = stdin;
        this.stdout = stdout;
        this.stderr = stderr;
    }

    @Override
    public OutputStream stdin() {
        return stdin;
    }

    @Override
    public InputStream stdout() {
        return stdout;
    }

    @Override
    public InputStream stderr() {
        return stderr;
    }

    /** How long {@link #waitFor} polls every millisecond before every 20 ms. */
    static final java.time.Duration QUICK_POLL = java.time.Duration.ofMillis(500);

    /**
     * Returns as soon as the server's exit-status or exit-signal arrives, not when the channel
     * closes: a background job holding the output open keeps the channel open, and the core's
     * output grace decides how long to wait for it. JSch has no callback for either message, so
     * poll: every millisecond for the first {@link #QUICK_POLL} (an agent's commands mostly end
     * within it, and a back-off there saw their end up to 20 ms late, about 10 on average, on
     * every exec), then every 20 ms. A channel that closed with neither is a lost connection.
     */
    @Override
    public int waitFor() throws InterruptedException {
        long quickUntil = System.nanoTime() + QUICK_POLL.toNanos();
        while (!ended()) {
            Thread.sleep(System.nanoTime() < quickUntil ? 1 : 20);
        }
        String signal = channel.getExitSignal();
        if (signal != null) {
            return ExitSignals.exitCode(signal);
        }
        int status = channel.getExitStatus();
        return status >= 0 ? status : NO_STATUS;
    }

    /** Whether the command ended (status or signal) or its channel closed. */
    boolean ended() {
        return channel.getExitStatus() >= 0 || channel.getExitSignal() != null || channel.isClosed();
    }

    /** Unknown here: the core's launcher record reports the group (sshd's session leader is the command's shell). */
    @Override
    public OptionalLong processGroup() {
        return OptionalLong.empty();
    }

    /**
     * The channel's own signal request: reaches only the remote shell, and only on servers that
     * honour it. Nothing is sent once the channel is closing: OpenSSH takes a request for a channel
     * it has freed as a protocol error and drops the whole connection, every other command on it
     * and the control shell included (a TERM that ended the shell, then the KILL after the grace,
     * did that when a slow {@code ~/.bashrc} held the launcher record back past a timeout). JSch
     * marks the channel closed before it sends its CLOSE under the channel's lock, so a signal sent
     * under that lock while the channel is open always reaches the server before the CLOSE.
     */
    void signal(String name) throws IOException {
        try {
            synchronized (channel) {
                if (channel.isClosed()) {
                    LOG.debug("not signalling {} over a closed channel: the command ended", name);
                    return;
                }
                channel.sendSignal(name);
            }
        } catch (Exception e) {
            throw new IOException("the SSH signal request failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void release() {
        try {
            stdout.close();
            stderr.close();
        } catch (IOException e) {
            LOG.debug("closing channel streams: {}", e.getMessage());
        }
        lease.release();
    }
}
