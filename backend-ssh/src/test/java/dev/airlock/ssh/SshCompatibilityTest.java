package dev.airlock.ssh;

import dev.airlock.Environment;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.EnvironmentCompatibilityKit;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * The SSH backend against the compatibility kit, on a real OpenSSH server with its default
 * MaxSessions, logged in with a passphrase-protected key (the passphrase must never reach argv).
 */
class SshCompatibilityTest extends EnvironmentCompatibilityKit {
    @RegisterExtension
    static final SshdExtension SSHD = new SshdExtension();

    @Override
    protected Settings settings() {
        SshdServer s = SSHD.server();
        return s.settings(SshSettings.IDENTITY, s.encryptedKey.toString(), SshSettings.PASSPHRASE, SshdServer.PASSPHRASE);
    }

    @Override
    protected Environment openEnvironment(OpenContext context) {
        return new SshProvider().open(context);
    }

    /** The test's sshd runs on this machine, so its commands share the host's network and loopback. */
    @Override
    protected boolean sharesHostLoopback() {
        return true;
    }

    /** The command's parent is sshd's own session process; {@link SshExecTest} checks what an attack on it gives. */
    @Override
    protected Optional<String> parentWithinReach(ParentAttack attack) {
        return Optional.of("the command's parent is sshd's session process, which runs as the login user (as OpenSSH's"
                + " own commands do): a command that kills, stops or (as root) rewrites it loses its connection, reported"
                + " as lost, never as another exit code (SshExecTest)");
    }

    @Override
    protected Collection<String> secrets() {
        return List.of(SshdServer.PASSPHRASE);
    }
}
