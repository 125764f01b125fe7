package dev.airlock.ssh;

import com.jcraft.jsch.HostKey;
import com.jcraft.jsch.HostKeyRepository;
import com.jcraft.jsch.UserInfo;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The known_hosts check. JSch runs with {@code StrictHostKeyChecking=yes} always; this wrapper
 * around its own known_hosts parser adds OpenSSH's {@code accept-new} (an unknown host's key is
 * appended to the file, a changed key is still refused) and remembers the key the server offered,
 * so a refusal can name its fingerprint. JSch's own add would rewrite the user's whole file, so
 * new keys are appended here instead, like OpenSSH does.
 */
final class HostKeys implements HostKeyRepository {
    /** The key a server offered in the last check, for error messages. */
    record Offered(String host, String type, String fingerprint) {
    }

    private final HostKeyRepository delegate;
    private final Path file;
    private final boolean acceptNew;
    private final Set<String> accepted = ConcurrentHashMap.newKeySet();
    private volatile Offered lastOffered;

    HostKeys(HostKeyRepository delegate, Path file, boolean acceptNew) {
        this.delegate = delegate;
        this.file = file;
        this.acceptNew = acceptNew;
    }

    Offered lastOffered() {
        return lastOffered;
    }

    Path file() {
        return file;
    }

    @Override
    public int check(String host, byte[] key) {
        String type = keyType(key);
        lastOffered = new Offered(host, type, fingerprint(key));
        int r = delegate.check(host, key);
        if (r == OK) {
            return OK;
        }
        String entry = host + " " + type + " " + Base64.getEncoder().encodeToString(key);
        if (accepted.contains(entry)) {
            return OK;
        }
        if (r == NOT_INCLUDED && acceptNew) {
            try {
                append(entry);
            } catch (IOException e) {
                // Refuse rather than trust a key we could not record: the next run would ask again.
                return NOT_INCLUDED;
            }
            accepted.add(entry);
            return OK;
        }
        return r;
    }

    private synchronized void append(String entry) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        if (dir != null && !Files.isDirectory(dir)) {
            Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
        if (!Files.exists(file)) {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        }
        boolean needsNewline = false;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size > 0) {
                ByteBuffer last = ByteBuffer.allocate(1);
                ch.read(last, size - 1);
                needsNewline = last.get(0) != '\n';
            }
        }
        try (OutputStream out = Files.newOutputStream(file, StandardOpenOption.APPEND)) {
            out.write(((needsNewline ? "\n" : "") + entry + "\n").getBytes(StandardCharsets.UTF_8));
        }
    }

    @Override
    public void add(HostKey hostkey, UserInfo ui) {
        // Never reached with StrictHostKeyChecking=yes; new keys are appended by check().
    }

    @Override
    public void remove(String host, String type) {
        // Airlock never removes known hosts; the user does, with ssh-keygen -R.
    }

    @Override
    public void remove(String host, String type, byte[] key) {
        // as above
    }

    @Override
    public String getKnownHostsRepositoryID() {
        return file.toString();
    }

    @Override
    public HostKey[] getHostKey() {
        return delegate.getHostKey();
    }

    @Override
    public HostKey[] getHostKey(String host, String type) {
        return delegate.getHostKey(host, type);
    }

    /** The algorithm name at the head of an SSH public key blob ({@code ssh-ed25519}...). */
    static String keyType(byte[] blob) {
        if (blob.length < 4) {
            return "unknown";
        }
        int n = ByteBuffer.wrap(blob, 0, 4).getInt();
        if (n <= 0 || n > blob.length - 4 || n > 64) {
            return "unknown";
        }
        return new String(blob, 4, n, StandardCharsets.US_ASCII);
    }

    /** OpenSSH's fingerprint form: {@code SHA256:} and unpadded base64. */
    static String fingerprint(byte[] blob) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(blob);
            return "SHA256:" + Base64.getEncoder().withoutPadding().encodeToString(d);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no SHA-256", e);
        }
    }
}
