package dev.airlock.ssh;

import com.jcraft.jsch.HostKeyRepository;
import com.jcraft.jsch.JSch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 31, door 4: accept-new records a host key only in a regular file. A known_hosts path that
 * is a FIFO (as {@code /dev/stdin} may lead to) is never opened, written nor replaced: the key is
 * not accepted, at once, and the FIFO stays.
 */
class HostKeysTest {
    @TempDir
    Path dir;

    private static byte[] ed25519Blob() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        byte[] type = "ssh-ed25519".getBytes(StandardCharsets.US_ASCII);
        b.writeBytes(ByteBuffer.allocate(4).putInt(type.length).array());
        b.writeBytes(type);
        b.writeBytes(ByteBuffer.allocate(4).putInt(32).array());
        b.writeBytes(new byte[32]);
        return b.toByteArray();
    }

    private HostKeys hostKeys(Path file) throws Exception {
        JSch jsch = new JSch();
        Path empty = Files.createFile(dir.resolve("empty_known_hosts"));
        jsch.setKnownHosts(empty.toString());
        return new HostKeys(jsch.getHostKeyRepository(), file, true);
    }

    @Test
    void aNewKeyIsNeverRecordedInAFifo() throws Exception {
        Path fifo = dir.resolve("known_hosts");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        HostKeys keys = hostKeys(fifo);
        CompletableFuture<Integer> r = CompletableFuture.supplyAsync(() -> keys.check("[127.0.0.1]:2222", ed25519Blob()));
        // bounded generously: only a hang (an open of the FIFO that waits for a writer) exceeds it
        assertEquals(HostKeyRepository.NOT_INCLUDED, r.get(20, TimeUnit.SECONDS));
        assertEquals(0010000, ((Integer) Files.getAttribute(fifo, "unix:mode", LinkOption.NOFOLLOW_LINKS)) & 0170000,
                "the FIFO was replaced");
    }

    @Test
    void aNewKeyIsStillAppendedToARegularFileThroughALink() throws Exception {
        Path real = Files.writeString(dir.resolve("real_known_hosts"), "");
        Path link = Files.createSymbolicLink(dir.resolve("known_hosts"), real);
        assertEquals(HostKeyRepository.OK, hostKeys(link).check("[127.0.0.1]:2222", ed25519Blob()));
        assertTrue(Files.isSymbolicLink(link), "the link stays");
        assertTrue(Files.readString(real).startsWith("[127.0.0.1]:2222 ssh-ed25519 "), Files.readString(real));
    }
}
