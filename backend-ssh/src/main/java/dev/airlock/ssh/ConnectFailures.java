package dev.airlock.ssh;

import com.jcraft.jsch.JSchAlgoNegoFailException;
import com.jcraft.jsch.JSchChangedHostKeyException;
import com.jcraft.jsch.JSchException;
import com.jcraft.jsch.JSchRevokedHostKeyException;
import com.jcraft.jsch.JSchUnknownHostKeyException;
import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.BackendUnavailableException;
import dev.airlock.ConfigurationException;
import dev.airlock.shell.Shell;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.file.Path;

/** Turns a failed SSH login into one line that says what is wrong and what to do. */
final class ConnectFailures {
    private ConnectFailures() {
    }

    static AirlockException map(JSchException e, SshSettings s, HostKeys keys) {
        String name = s.knownHostsName();
        Path file = keys.file();
        HostKeys.Offered offered = keys.lastOffered();
        String key = offered == null ? "its key" : offered.type() + " key " + offered.fingerprint();
        if (e instanceof JSchRevokedHostKeyException) {
            return new BackendException("the SSH host key of " + name + " (" + key + ") is marked @revoked in "
                    + file + "; refusing to connect");
        }
        if (e instanceof JSchChangedHostKeyException) {
            Path listing = keys.mismatchIn();
            return new BackendException("the SSH host key of " + name + " does not match " + listing
                    + ": the server offered " + key + " (possible man-in-the-middle); if the host was re-keyed,"
                    + " confirm that fingerprint with its administrator, remove the old entry with `ssh-keygen -f "
                    + Shell.quote(listing.toString()) + " -R " + Shell.quote(name) + "` and connect once with "
                    + SshSettings.STRICT + "=accept-new");
        }
        if (e instanceof JSchUnknownHostKeyException) {
            return new ConfigurationException("the SSH host " + name + " is not in " + file + " (the server offered "
                    + key + "); verify that fingerprint, then add it with `ssh-keyscan -p " + s.port() + " "
                    + Shell.quote(s.host()) + " >> " + Shell.quote(file.toString()) + "`, or set "
                    + SshSettings.STRICT + "=accept-new");
        }
        if (e instanceof JSchAlgoNegoFailException) {
            return new BackendException("the SSH server at " + s.host() + ":" + s.port()
                    + " shares no algorithm with this client: " + oneLine(e.getMessage()));
        }
        String m = String.valueOf(e.getMessage());
        if ((m.startsWith("Auth fail") || m.startsWith("Auth cancel")) && s.password().isPresent()
                && s.identities().isEmpty() && s.agentSocket().isEmpty()) {
            return new ConfigurationException("SSH authentication as " + s.display() + " with the password in "
                    + SshSettings.PASSWORD + " failed (no keys offered): check " + SshSettings.USER + " and the password,"
                    + " and that the server takes passwords (PasswordAuthentication or KbdInteractiveAuthentication)");
        }
        if (m.startsWith("Auth fail") || m.startsWith("Auth cancel")) {
            String password = s.password().isPresent()
                    ? " and the password in " + SshSettings.PASSWORD
                    : "; a server that asks for a password takes it from " + SshSettings.PASSWORD;
            return new ConfigurationException("SSH authentication as " + s.display() + " failed (" + offeredKeys(s)
                    + password + "): check " + SshSettings.USER + " and " + SshSettings.IDENTITY
                    + ", and that the public key is in the server's authorized_keys");
        }
        Throwable unreachable = unreachableCause(e);
        if (unreachable != null || m.startsWith("timeout: socket is not established")) {
            String why = unreachable == null ? "connection timed out" : describe(unreachable);
            return new BackendUnavailableException("cannot reach the SSH server at " + s.host() + ":" + s.port()
                    + " (" + why + "); check " + SshSettings.HOST + " and " + SshSettings.PORT
                    + ", and that sshd is running and reachable");
        }
        if (m.contains("closed by foreign host") || m.contains("session is down")) {
            return new BackendUnavailableException("the SSH server at " + s.host() + ":" + s.port()
                    + " closed the connection during login (too many connections, MaxStartups, or a firewall); try again later");
        }
        return new BackendException("SSH login to " + s.display() + " failed: " + oneLine(m));
    }

    private static String offeredKeys(SshSettings s) {
        StringBuilder sb = new StringBuilder();
        if (!s.identities().isEmpty()) {
            sb.append("keys ");
            for (int i = 0; i < s.identities().size(); i++) {
                sb.append(i == 0 ? "" : ", ").append(s.identities().get(i));
            }
        }
        if (s.agentSocket().isPresent()) {
            sb.append(sb.length() == 0 ? "" : " and ").append("the ssh-agent's keys");
        }
        return sb.length() == 0 ? "no keys" : "offered " + sb;
    }

    private static Throwable unreachableCause(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ConnectException || t instanceof SocketTimeoutException
                    || t instanceof UnknownHostException || t instanceof NoRouteToHostException) {
                return t;
            }
        }
        return null;
    }

    private static String describe(Throwable t) {
        if (t instanceof UnknownHostException) {
            return "unknown host name " + t.getMessage();
        }
        if (t instanceof SocketTimeoutException) {
            return "connection timed out";
        }
        return t.getMessage() == null ? t.getClass().getSimpleName() : oneLine(t.getMessage());
    }

    static String oneLine(String s) {
        return s == null ? "" : s.replaceAll("\\s+", " ").trim();
    }
}
