package dev.airlock.ssh;

import com.jcraft.jsch.AgentIdentityRepository;
import com.jcraft.jsch.AgentProxyException;
import com.jcraft.jsch.Identity;
import com.jcraft.jsch.IdentityRepository;
import com.jcraft.jsch.JSch;
import com.jcraft.jsch.JSchException;
import com.jcraft.jsch.KeyPair;
import com.jcraft.jsch.SSHAgentConnector;
import com.jcraft.jsch.UnixDomainSocketFactory;
import dev.airlock.ConfigurationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.Vector;

/**
 * The keys a connection offers: the identity files first (the user named them), then the agent's
 * keys when an agent socket is configured. None at all is an error unless a password is set. Encrypted files are decrypted once at open with the
 * passphrase secret; a missing or wrong passphrase is a one-line error naming the file only.
 */
final class Identities implements IdentityRepository {
    private static final Logger LOG = LoggerFactory.getLogger(Identities.class);
    private final IdentityRepository files;
    private final Optional<IdentityRepository> agent;

    private Identities(IdentityRepository files, Optional<IdentityRepository> agent) {
        this.files = files;
        this.agent = agent;
    }

    /** Loads the identity files into {@code jsch} and installs the combined repository on it. */
    static void install(JSch jsch, SshSettings s) {
        int loaded = 0;
        Path skipped = null;
        for (Path key : s.identities()) {
            if (addFile(jsch, key, s)) {
                loaded++;
            } else {
                skipped = key;
            }
        }
        Optional<IdentityRepository> agent = s.agentSocket().map(Identities::agent);
        // With a password set, no key at all is a password-only login, as `ssh` makes one.
        if (loaded == 0 && agent.isEmpty() && s.password().isEmpty()) {
            throw new ConfigurationException("no SSH key to log in to " + s.display() + " with"
                    + (skipped == null ? "" : " (" + skipped + " is encrypted and " + SshSettings.PASSPHRASE + " is not set)")
                    + ": set " + SshSettings.IDENTITY + "=PATH to a private key, run an ssh-agent (SSH_AUTH_SOCK),"
                    + " or set the login password in " + SshSettings.PASSWORD + " (e.g. export AIRLOCK_SSH_PASSWORD, never --set)");
        }
        jsch.setIdentityRepository(new Identities(jsch.getIdentityRepository(), agent));
    }

    /**
     * Loads one key file; false when it was skipped. An encrypted key found by default (not named
     * by the user) with no passphrase is skipped, as OpenSSH does when the agent holds it.
     */
    private static boolean addFile(JSch jsch, Path key, SshSettings s) {
        if (!Files.isReadable(key)) {
            throw new ConfigurationException("the SSH key " + key + " (" + SshSettings.IDENTITY
                    + ") does not exist or is not readable");
        }
        KeyPair pair;
        try {
            pair = KeyPair.load(jsch, key.toString());
        } catch (JSchException e) {
            throw new ConfigurationException("the SSH key " + key + " cannot be read (" + e.getMessage()
                    + "); use an OpenSSH ed25519, ecdsa or rsa private key");
        }
        boolean encrypted = pair.isEncrypted();
        pair.dispose();
        Optional<dev.airlock.settings.Secret> secret = s.passphraseFor(key);
        if (encrypted && secret.isEmpty() && !s.identitiesNamed()) {
            LOG.debug("skipping the encrypted default key {} (no {}); the ssh-agent may hold it", key, SshSettings.PASSPHRASE);
            return false;
        }
        if (encrypted && secret.isEmpty()) {
            throw new ConfigurationException("the SSH key " + key + " is encrypted: set " + SshSettings.PASSPHRASE
                    + " (e.g. export AIRLOCK_SSH_PASSPHRASE, never --set), or " + SshSettings.PASSPHRASE
                    + ".NAME for the key " + SshSettings.IDENTITY + ".NAME, or load the key into ssh-agent");
        }
        byte[] passphrase = encrypted ? secret.get().reveal().getBytes(StandardCharsets.UTF_8) : null;
        try {
            Path cert = s.certificates().get(key);
            if (cert != null) {
                jsch.addIdentity(key.toString(), cert.toString(), passphrase);
            } else {
                jsch.addIdentity(key.toString(), passphrase);
            }
            return true;
        } catch (JSchException e) {
            throw new ConfigurationException("the passphrase in " + s.passphraseSettingFor(key)
                    + " does not decrypt the SSH key " + key);
        } finally {
            if (passphrase != null) {
                Arrays.fill(passphrase, (byte) 0);
            }
        }
    }

    private static IdentityRepository agent(Path socket) {
        try {
            return new AgentIdentityRepository(new SSHAgentConnector(new UnixDomainSocketFactory(), socket));
        } catch (AgentProxyException e) {
            throw new ConfigurationException("cannot use the ssh-agent at " + socket + ": " + e.getMessage()
                    + "; set " + SshSettings.AGENT + "=no to log in with key files only");
        }
    }

    @Override
    public String getName() {
        return "airlock";
    }

    @Override
    public int getStatus() {
        return RUNNING;
    }

    @Override
    public Vector<Identity> getIdentities() {
        Vector<Identity> all = new Vector<>(files.getIdentities());
        agent.ifPresent(a -> all.addAll(a.getIdentities()));
        return all;
    }

    @Override
    public boolean add(byte[] identity) {
        return false; // Airlock never adds keys, least of all to the user's agent
    }

    @Override
    public boolean remove(byte[] blob) {
        return false;
    }

    @Override
    public void removeAll() {
        // as above: the user's keys and agent are left alone
    }
}
