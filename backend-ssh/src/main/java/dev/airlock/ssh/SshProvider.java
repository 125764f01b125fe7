package dev.airlock.ssh;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.settings.SettingKey;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Availability;
import dev.airlock.spi.EnvironmentProvider;
import dev.airlock.spi.LeftoverCollector;
import dev.airlock.spi.OpenContext;

/** The {@code ssh} backend: commands on a remote host over SSH (JSch). */
public final class SshProvider implements EnvironmentProvider, LeftoverCollector {

    @Override
    public String name() {
        return "ssh";
    }

    /** Cheap: validates the settings, connects to nothing. */
    @Override
    public java.util.List<SettingKey> settingKeys() {
        return java.util.List.of(
                SettingKey.of(SshSettings.HOST, "host or IP", "required", "the target host"),
                SettingKey.of(SshSettings.PORT, "int", "22", "its port"),
                SettingKey.of(SshSettings.USER, "string", "the JVM's user.name", "the login user"),
                SettingKey.of(SshSettings.IDENTITY, "list of private key files", "~/.ssh/id_ed25519, id_ecdsa, id_rsa that exist",
                        "keys offered"),
                SettingKey.secret(SshSettings.PASSPHRASE, "secret", "decrypts encrypted keys"),
                SettingKey.secret(SshSettings.PASSWORD, "secret",
                        "the login password, answered to keyboard-interactive prompts that do not echo and to the password method"),
                SettingKey.secret(SshSettings.PASSPHRASE + SettingKey.NAME, "secret", "decrypts the key airlock.ssh.identity.NAME"),
                SettingKey.of(SshSettings.AGENT, "auto | no | socket path", "auto", "the ssh-agent"),
                SettingKey.of(SshSettings.KNOWN_HOSTS, "path", "~/.ssh/known_hosts", "host keys"),
                SettingKey.of(SshSettings.GLOBAL_KNOWN_HOSTS, "list of paths | none", "/etc/ssh/ssh_known_hosts{,2} that exist",
                        "the system's host keys, checked after known-hosts; never written"),
                SettingKey.of(SshSettings.STRICT, "yes | accept-new", "yes", "unknown host keys"),
                SettingKey.of(SshSettings.CONNECT_TIMEOUT, "duration", "15s", "bound on connecting"),
                SettingKey.of(SshSettings.KEEPALIVE, "duration, 0 = off", "15s", "keepalive interval"),
                SettingKey.of(SshSettings.KEEPALIVE_COUNT, "int", "3", "unanswered keepalives before the connection is dropped"),
                SettingKey.of(SshSettings.CHANNELS, "1..10", "8", "channels per connection"),
                SettingKey.of(SshSettings.OUTPUT_BUFFER, "bytes", "64m",
                        "unread output held per stream (memory, then a temp file) so a slow reader stalls no other command"),
                SettingKey.of(SshSettings.CONFIG, "path | none", "~/.ssh/config",
                        "OpenSSH client config: Host aliases, HostName, User, Port, IdentityFile, CertificateFile, ProxyJump, ProxyCommand"));
    }

    /** The key passphrase's variable ({@code airlock.ssh.passphrase}); no command needs it. */
    @Override
    public java.util.Set<String> secretVariables() {
        return java.util.Set.of(Settings.envName(SshSettings.PASSPHRASE), Settings.envName(SshSettings.PASSWORD));
    }

    @Override
    public Availability check(Settings settings) {
        if (settings.get(SshSettings.HOST).filter(h -> !h.isBlank()).isEmpty()) {
            return Availability.unavailable("set " + SshSettings.HOST + " (and " + SshSettings.USER
                    + ", " + SshSettings.IDENTITY + ") to use the ssh backend");
        }
        try {
            SshSettings s = SshSettings.from(settings);
            return Availability.ok("ssh to " + s.display());
        } catch (ConfigurationException e) {
            return Availability.unavailable(e.getMessage());
        }
    }

    @Override
    public Environment open(OpenContext context) {
        return SshBackend.open(context);
    }

    /** Private dirs and process trees left on the host by JVMs that died before closing (see {@link SshLeftovers}). */
    @Override
    public java.util.List<String> gc(Settings settings, java.time.Duration olderThan, boolean includeKept) {
        return SshLeftovers.gc(settings, olderThan, includeKept);
    }
}
