package dev.airlock.ssh;

import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.BackendUnavailableException;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Host keys, authentication and reachability: what a user sees when a login cannot happen. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SshLoginTest {
    private SshdServer server;
    private String hostFingerprint;

    @BeforeAll
    void start() throws Exception {
        server = SshdServer.start();
        byte[] blob = java.util.Base64.getDecoder().decode(
                Files.readString(server.dir.resolve("ssh_host_ed25519_key.pub")).trim().split(" ")[1]);
        hostFingerprint = HostKeys.fingerprint(blob);
        // Cross-check our fingerprint against OpenSSH's own rendering of it.
        Process p = new ProcessBuilder(SshdServer.find("ssh-keygen").toString(), "-l", "-E", "sha256", "-f",
                server.dir.resolve("ssh_host_ed25519_key.pub").toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        assertTrue(out.contains(hostFingerprint), out + " vs " + hostFingerprint);
    }

    @AfterAll
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private static void oneLine(Throwable e) {
        assertFalse(e.getMessage().contains("\n"), "not one line: " + e.getMessage());
    }

    private String execEcho(Settings s) {
        try (Environment env = Environments.open(s)) {
            return env.exec(ExecRequest.of("echo ok")).stdout().text();
        }
    }

    @Test
    void unknownHostIsRefusedUnderStrictChecking() throws Exception {
        Path empty = Files.createTempFile(server.dir, "known", "");
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> Environments.open(server.settings(SshSettings.KNOWN_HOSTS, empty.toString())));
        oneLine(e);
        assertTrue(e.getMessage().contains(hostFingerprint), e.getMessage());
        assertTrue(e.getMessage().contains("[127.0.0.1]:" + server.port), e.getMessage());
        assertTrue(e.getMessage().contains("accept-new"), e.getMessage());
        assertEquals(0, Files.size(empty), "a refused key must not be recorded");
    }

    @Test
    void changedHostKeyIsRefusedWithItsFingerprintAndTheFix() throws Exception {
        Path wrong = server.dir.resolve("known_hosts_wrong");
        String stranger = Files.readString(server.dir.resolve("id_stranger.pub")).trim();
        Files.writeString(wrong, "[127.0.0.1]:" + server.port + " " + stranger + "\n");
        for (String mode : List.of("yes", "accept-new")) {
            BackendException e = assertThrows(BackendException.class, () -> Environments.open(server.settings(
                    SshSettings.KNOWN_HOSTS, wrong.toString(), SshSettings.STRICT, mode)));
            oneLine(e);
            assertTrue(e.getMessage().contains(hostFingerprint), e.getMessage());
            assertTrue(e.getMessage().contains("does not match"), e.getMessage());
            assertTrue(e.getMessage().contains("ssh-keygen -f"), e.getMessage());
            assertTrue(e.getMessage().contains("-R '[127.0.0.1]:" + server.port + "'"), e.getMessage());
        }
        assertEquals("[127.0.0.1]:" + server.port + " " + stranger + "\n", Files.readString(wrong));
    }

    /** The system's file (OpenSSH's GlobalKnownHostsFile) vouches for a host the user's file does not list; it is never written. */
    @Test
    void theSystemKnownHostsFileIsConsultedAfterTheUsersAndNeverWritten() throws Exception {
        Path empty = Files.createTempFile(server.dir, "known-empty", "");
        Path system = server.dir.resolve("ssh_known_hosts_system");
        Files.copy(server.knownHosts, system, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        String before = Files.readString(system);
        assertEquals("ok\n", execEcho(server.settings(SshSettings.KNOWN_HOSTS, empty.toString(),
                SshSettings.GLOBAL_KNOWN_HOSTS, system.toString())));
        assertEquals(0, Files.size(empty), "a key the system file vouches for is not copied to the user's");
        assertEquals(before, Files.readString(system));
        ConfigurationException unknown = assertThrows(ConfigurationException.class, () -> Environments.open(server.settings(
                SshSettings.KNOWN_HOSTS, empty.toString(), SshSettings.GLOBAL_KNOWN_HOSTS, "none")));
        oneLine(unknown);
    }

    /** A host the system file lists with another key is refused, even under accept-new, naming that file. */
    @Test
    void aMismatchInTheSystemFileIsRefusedAndNamed() throws Exception {
        Path empty = Files.createTempFile(server.dir, "known-empty", "");
        Path system = server.dir.resolve("ssh_known_hosts_wrong");
        String stranger = Files.readString(server.dir.resolve("id_stranger.pub")).trim();
        Files.writeString(system, "[127.0.0.1]:" + server.port + " " + stranger + "\n");
        BackendException e = assertThrows(BackendException.class, () -> Environments.open(server.settings(
                SshSettings.KNOWN_HOSTS, empty.toString(), SshSettings.GLOBAL_KNOWN_HOSTS, system.toString(),
                SshSettings.STRICT, "accept-new")));
        oneLine(e);
        assertTrue(e.getMessage().contains("does not match " + system), e.getMessage());
        assertEquals(0, Files.size(empty), "a refused key must not be recorded");
    }

    @Test
    void aMissingSystemFileNamedExplicitlyIsAConfigurationError() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> Environments.open(server.settings(
                SshSettings.GLOBAL_KNOWN_HOSTS, server.dir.resolve("no-such-file").toString())));
        oneLine(e);
        assertTrue(e.getMessage().contains(SshSettings.GLOBAL_KNOWN_HOSTS), e.getMessage());
    }

    /**
     * When the user's file is hashed, accept-new appends a hashed entry, in the form OpenSSH
     * itself finds ({@code ssh-keygen -F}); the next strict login accepts it.
     */
    @Test
    void aHashedFileGetsAHashedEntryThatOpenSshFinds() throws Exception {
        Path file = server.dir.resolve("hashed/known_hosts");
        Files.createDirectories(file.getParent());
        String stranger = Files.readString(server.dir.resolve("id_stranger.pub")).trim();
        String other = HostKeys.hashedHost("other.example") + " " + stranger;
        Files.writeString(file, other + "\n");
        assertEquals("ok\n", execEcho(server.settings(SshSettings.KNOWN_HOSTS, file.toString(), SshSettings.STRICT, "accept-new")));
        List<String> lines = Files.readAllLines(file);
        assertEquals(2, lines.size(), lines.toString());
        assertTrue(lines.get(1).startsWith("|1|") && !lines.get(1).contains("127.0.0.1"), lines.get(1));
        String name = "[127.0.0.1]:" + server.port;
        Process p = new ProcessBuilder(SshdServer.find("ssh-keygen").toString(), "-F", name, "-f", file.toString())
                .redirectErrorStream(true).start();
        String found = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), found);
        assertTrue(found.contains(lines.get(1)), found);
        assertEquals("ok\n", execEcho(server.settings(SshSettings.KNOWN_HOSTS, file.toString())));
        assertEquals(2, Files.readAllLines(file).size());
    }

    @Test
    void acceptNewRecordsAnUnknownKeyThenStrictCheckingAcceptsIt() throws Exception {
        Path file = server.dir.resolve("fresh/.ssh/known_hosts"); // neither the file nor its dirs exist
        assertEquals("ok\n", execEcho(server.settings(SshSettings.KNOWN_HOSTS, file.toString(), SshSettings.STRICT, "accept-new")));
        String recorded = Files.readString(file);
        String hostPub = Files.readString(server.dir.resolve("ssh_host_ed25519_key.pub")).trim();
        String[] parts = hostPub.split(" ");
        assertEquals("[127.0.0.1]:" + server.port + " " + parts[0] + " " + parts[1] + "\n", recorded);
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        assertEquals("ok\n", execEcho(server.settings(SshSettings.KNOWN_HOSTS, file.toString())));
        assertEquals(recorded, Files.readString(file));
    }

    @Test
    void ed25519EcdsaAndRsaKeysAllLogIn() {
        for (Path key : List.of(server.userKey, server.ecdsaKey, server.rsaKey)) {
            assertEquals("ok\n", execEcho(server.settings(SshSettings.IDENTITY, key.toString())), key.toString());
        }
        // Several keys: the first the server does not know is skipped.
        assertEquals("ok\n", execEcho(server.settings(SshSettings.IDENTITY, server.strangerKey + "," + server.rsaKey)));
    }

    @Test
    void anEncryptedKeyNeedsItsPassphraseWhichNeverShows() {
        Settings noPass = server.settings(SshSettings.IDENTITY, server.encryptedKey.toString());
        ConfigurationException missing = assertThrows(ConfigurationException.class, () -> Environments.open(noPass));
        oneLine(missing);
        assertTrue(missing.getMessage().contains(SshSettings.PASSPHRASE), missing.getMessage());

        String wrongPass = "not-the-passphrase-xyzzy";
        ConfigurationException wrong = assertThrows(ConfigurationException.class, () -> Environments.open(
                server.settings(SshSettings.IDENTITY, server.encryptedKey.toString(), SshSettings.PASSPHRASE, wrongPass)));
        oneLine(wrong);
        assertFalse(wrong.getMessage().contains(wrongPass), wrong.getMessage());
        assertTrue(wrong.getMessage().contains("does not decrypt"), wrong.getMessage());

        assertEquals("ok\n", execEcho(server.settings(SshSettings.IDENTITY, server.encryptedKey.toString(),
                SshSettings.PASSPHRASE, SshdServer.PASSPHRASE)));
    }

    /** Each named key may have its own passphrase (airlock.ssh.passphrase.NAME for airlock.ssh.identity.NAME). */
    @Test
    void eachNamedKeyMayHaveItsOwnPassphrase() throws Exception {
        // Another encrypted key with another passphrase, not authorized: both must decrypt for the open to succeed.
        Path other = server.dir.resolve("id_other_encrypted");
        Process keygen = new ProcessBuilder(SshdServer.find("ssh-keygen").toString(), "-q", "-t", "ed25519", "-N", "second secret",
                "-f", other.toString()).redirectErrorStream(true).start();
        keygen.getInputStream().readAllBytes();
        assertEquals(0, keygen.waitFor());
        String[] keys = {SshSettings.IDENTITY, "", SshSettings.IDENTITY + ".work", server.encryptedKey.toString(),
                SshSettings.IDENTITY + ".other", other.toString()};
        assertEquals("ok\n", execEcho(server.settings(concat(keys, SshSettings.PASSPHRASE + ".work", SshdServer.PASSPHRASE,
                SshSettings.PASSPHRASE + ".other", "second secret"))));
        // The common passphrase serves a key without its own.
        assertEquals("ok\n", execEcho(server.settings(concat(keys, SshSettings.PASSPHRASE, SshdServer.PASSPHRASE,
                SshSettings.PASSPHRASE + ".other", "second secret"))));

        ConfigurationException wrong = assertThrows(ConfigurationException.class, () -> Environments.open(server.settings(
                concat(keys, SshSettings.PASSPHRASE + ".work", SshdServer.PASSPHRASE, SshSettings.PASSPHRASE + ".other", "xyzzy-wrong"))));
        oneLine(wrong);
        assertTrue(wrong.getMessage().contains(SshSettings.PASSPHRASE + ".other") && wrong.getMessage().contains(other.toString())
                && !wrong.getMessage().contains("xyzzy"), wrong.getMessage());

        ConfigurationException orphan = assertThrows(ConfigurationException.class, () -> Environments.open(server.settings(
                concat(keys, SshSettings.PASSPHRASE + ".typo", "x"))));
        oneLine(orphan);
        assertTrue(orphan.getMessage().contains(SshSettings.PASSPHRASE + ".typo")
                && orphan.getMessage().contains(SshSettings.IDENTITY + ".typo"), orphan.getMessage());
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void authenticationFailureSaysWhichKeysWereTried() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> Environments.open(server.settings(SshSettings.IDENTITY, server.strangerKey.toString())));
        oneLine(e);
        assertTrue(e.getMessage().startsWith("SSH authentication as " + System.getProperty("user.name") + "@127.0.0.1:" + server.port + " failed"), e.getMessage());
        assertTrue(e.getMessage().contains(server.strangerKey.toString()), e.getMessage());
    }

    @Test
    void anUnreachableHostIsUnavailable() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
                () -> Environments.open(server.settings(SshSettings.PORT, Integer.toString(closedPort))));
        oneLine(e);
        assertTrue(e.getMessage().contains("cannot reach the SSH server at 127.0.0.1:" + closedPort), e.getMessage());
        assertEquals("unavailable", ((AirlockException) e).kind());
    }

    @Test
    void missingHostIsAConfigurationErrorAndCheckSaysWhy() {
        Settings s = Settings.of("airlock.backend", "ssh");
        assertFalse(new SshProvider().check(s).available());
        assertTrue(new SshProvider().check(s).reason().contains(SshSettings.HOST));
        AirlockException e = assertThrows(AirlockException.class, () -> Environments.open(s));
        oneLine(e);
        assertInstanceOf(ConfigurationException.class, e, e.getMessage());
    }

    @Test
    void aMissingKeyFileIsNamed() {
        Path none = server.dir.resolve("no-such-key");
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> Environments.open(server.settings(SshSettings.IDENTITY, none.toString())));
        oneLine(e);
        assertTrue(e.getMessage().contains(none.toString()), e.getMessage());
    }
}
