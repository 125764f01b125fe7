package dev.airlock.ssh;

import com.jcraft.jsch.ConfigRepository;
import com.jcraft.jsch.OpenSSHConfig;
import dev.airlock.ConfigurationException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The user's OpenSSH client config ({@code ~/.ssh/config}), read with JSch's parser: a Host alias
 * gives HostName, User, Port, IdentityFile, CertificateFile, ProxyJump and ProxyCommand, first
 * match winning as in OpenSSH. Airlock's own settings win over it, as {@code ssh -p} does.
 */
final class SshConfigFile {
    /** What the config says about one host name or alias; every field may be absent. */
    record Entry(Optional<String> hostName, int port, Optional<String> user, List<String> identityFiles,
                 List<String> certificateFiles, Optional<String> proxyJump, Optional<String> proxyCommand) {
        static final Entry NONE = new Entry(Optional.empty(), -1, Optional.empty(), List.of(), List.of(),
                Optional.empty(), Optional.empty());
    }

    private final ConfigRepository repository;

    private SshConfigFile(ConfigRepository repository) {
        this.repository = repository;
    }

    /** The file, or an empty config when it does not exist; an unreadable file is a one-line error. */
    static SshConfigFile read(Optional<Path> file) {
        if (file.isEmpty() || !Files.exists(file.get())) {
            return new SshConfigFile(null);
        }
        try {
            return new SshConfigFile(OpenSSHConfig.parseFile(file.get().toString()));
        } catch (IOException | RuntimeException e) {
            throw new ConfigurationException("cannot read the SSH config " + file.get() + " (" + SshSettings.CONFIG + "): "
                    + ConnectFailures.oneLine(e.getMessage()) + "; fix it, or set " + SshSettings.CONFIG + "=none");
        }
    }

    Entry entry(String host) {
        if (repository == null) {
            return Entry.NONE;
        }
        ConfigRepository.Config c = repository.getConfig(host);
        return new Entry(Optional.ofNullable(c.getHostname()), c.getPort(), Optional.ofNullable(c.getUser()),
                values(c, "IdentityFile"), values(c, "CertificateFile"), value(c, "ProxyJump", true), value(c, "ProxyCommand", false));
    }

    private static Optional<String> value(ConfigRepository.Config c, String key, boolean unquote) {
        String v = c.getValue(key);
        if (v == null || v.isBlank() || v.trim().equalsIgnoreCase("none")) {
            return Optional.empty();
        }
        return Optional.of(unquote ? unquote(v.trim()) : v.trim());
    }

    private static List<String> values(ConfigRepository.Config c, String key) {
        String[] v = c.getValues(key);
        List<String> out = new ArrayList<>();
        if (v != null) {
            for (String s : v) {
                if (s != null && !s.isBlank()) {
                    out.add(unquote(s.trim()));
                }
            }
        }
        return out;
    }

    /** OpenSSH allows a value in double quotes ({@code IdentityFile "~/my keys/id"}). */
    private static String unquote(String v) {
        return v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"") ? v.substring(1, v.length() - 1) : v;
    }
}
