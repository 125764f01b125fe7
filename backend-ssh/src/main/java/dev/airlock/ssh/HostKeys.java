package dev.airlock.ssh;

import com.jcraft.jsch.HostKey;
import com.jcraft.jsch.HostKeyRepository;
import com.jcraft.jsch.UserInfo;
import dev.airlock.shell.SpecialFiles;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The known_hosts check. JSch runs with {@code StrictHostKeyChecking=yes} always; this wrapper
 * around its own known_hosts parser checks the user's file and then the system's
 * ({@code /etc/ssh/ssh_known_hosts}), as OpenSSH does: a key listed in either is accepted, a host
 * listed with other keys only is refused. It adds OpenSSH's {@code accept-new} (an unknown host's
 * key is appended to the user's file, a changed key is still refused), hashing the new entry when
 * the user's file is hashed ({@code HashKnownHosts}), and remembers the key the server offered, so
 * a refusal can name its fingerprint. JSch's own add would rewrite the user's whole file, so new
 * keys are appended here instead, like OpenSSH does.
 */
final class HostKeys implements HostKeyRepository {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(HostKeys.class);
    private static final String HASH_MAGIC = "|1|";
    private static final SecureRandom RANDOM = new SecureRandom();
    /** The key a server offered in the last check, for error messages. */
    record Offered(String host, String type, String fingerprint) {
    }

    /** A known_hosts file and JSch's parse of it. */
    record KnownHostsFile(Path path, HostKeyRepository keys) {
    }

    private final HostKeyRepository delegate;
    private final Path file;
    private final List<KnownHostsFile> global;
    private final boolean acceptNew;
    private final Set<String> accepted = ConcurrentHashMap.newKeySet();
    private volatile Offered lastOffered;
    private volatile Path mismatchIn;

    HostKeys(HostKeyRepository delegate, Path file, boolean acceptNew) {
        this(delegate, file, List.of(), acceptNew);
    }

    HostKeys(HostKeyRepository delegate, Path file, List<KnownHostsFile> global, boolean acceptNew) {
        this.delegate = delegate;
        this.file = file;
        this.global = List.copyOf(global);
        this.acceptNew = acceptNew;
    }

    /** The file that listed the host with another key in the last refused check (the user's, or a system one). */
    Path mismatchIn() {
        Path p = mismatchIn;
        return p == null ? file : p;
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
        Path changedIn = r == CHANGED ? file : null;
        for (KnownHostsFile g : global) {
            int gr = g.keys().check(host, key);
            if (gr == OK) {
                return OK;
            }
            if (gr == CHANGED && changedIn == null) {
                changedIn = g.path();
            }
        }
        if (changedIn != null) {
            mismatchIn = changedIn;
            r = CHANGED;
        }
        String entry = host + " " + type + " " + Base64.getEncoder().encodeToString(key);
        if (accepted.contains(entry)) {
            return OK;
        }
        if (r == NOT_INCLUDED && acceptNew) {
            try {
                append(hashed() ? hashedHost(host) + " " + type + " " + Base64.getEncoder().encodeToString(key) : entry);
            } catch (IOException e) {
                // Refuse rather than trust a key we could not record: the next run would ask again.
                LOG.warn("the host key of {} was not accepted: {}", host, e.getMessage());
                return NOT_INCLUDED;
            }
            accepted.add(entry);
            return OK;
        }
        return r;
    }

    private synchronized void append(String entry) throws IOException {
        // Only ever appended to a regular file (through a link to one too), or a new one made where
        // nothing is: a device, FIFO or socket (/dev/stdin's end) is never written, opened (a FIFO's
        // open would block the connect) nor replaced, and a dangling link fails the exclusive create.
        if (Files.exists(file) && !Files.isRegularFile(file)) {
            int mode = (Integer) Files.getAttribute(file, "unix:mode");
            throw new IOException(SpecialFiles.message("recording the host key in", file.toString(),
                    SpecialFiles.kind(mode).orElse(Files.isDirectory(file) ? "a directory" : "not a regular file"))
                    + "; set " + SshSettings.KNOWN_HOSTS + " to a known_hosts file");
        }
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

    /** Whether the user's file hashes its host names (OpenSSH's {@code HashKnownHosts}): any line in the hashed form. */
    private boolean hashed() throws IOException {
        if (!Files.isRegularFile(file)) {
            return false;
        }
        try (var lines = Files.lines(file, StandardCharsets.ISO_8859_1)) {
            return lines.anyMatch(l -> l.startsWith(HASH_MAGIC));
        }
    }

    /** OpenSSH's hashed host: {@code |1|} base64(salt) {@code |} base64(HMAC-SHA1 of the name, keyed by the salt). */
    static String hashedHost(String host) {
        try {
            byte[] salt = new byte[20];
            RANDOM.nextBytes(salt);
            Mac mac = Mac.getInstance("HmacSHA1");
            mac.init(new SecretKeySpec(salt, "HmacSHA1"));
            byte[] hash = mac.doFinal(host.getBytes(StandardCharsets.UTF_8));
            return HASH_MAGIC + Base64.getEncoder().encodeToString(salt) + "|" + Base64.getEncoder().encodeToString(hash);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JVM has no HMAC-SHA1", e);
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

    /** The user's and the system's keys (JSch orders its host key algorithms by the keys it knows). */
    @Override
    public HostKey[] getHostKey() {
        return all(delegate.getHostKey(), HostKeyRepository::getHostKey);
    }

    @Override
    public HostKey[] getHostKey(String host, String type) {
        return all(delegate.getHostKey(host, type), r -> r.getHostKey(host, type));
    }

    private HostKey[] all(HostKey[] own, java.util.function.Function<HostKeyRepository, HostKey[]> of) {
        List<HostKey> keys = new ArrayList<>();
        if (own != null) {
            keys.addAll(List.of(own));
        }
        for (KnownHostsFile g : global) {
            HostKey[] more = of.apply(g.keys());
            if (more != null) {
                keys.addAll(List.of(more));
            }
        }
        return keys.toArray(new HostKey[0]);
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
