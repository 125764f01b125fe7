package dev.airlock.ssh;

import dev.airlock.settings.Settings;
import dev.airlock.tck.Services;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real OpenSSH server for tests: {@code sshd -D -e -f <generated config>} on a free loopback
 * port, with generated host and user keys, the default MaxSessions, and authorized_keys pointing at
 * the generated keys. Skips when sshd is missing, unless AIRLOCK_REQUIRE_SERVICES=1 (CI), where
 * that is a failure.
 */
public final class SshdServer implements AutoCloseable {
    public static final String PASSPHRASE = "correct horse battery staple";

    public final Path dir;
    public final int port;
    public final Path hostKey;
    public final Path userKey;      // ed25519, authorized
    public final Path ecdsaKey;     // authorized
    public final Path rsaKey;       // authorized (rsa-sha2)
    public final Path encryptedKey; // ed25519 with PASSPHRASE, authorized
    public final Path strangerKey;  // not authorized
    public final Path knownHosts;   // holds the host key
    private final Process process;
    private final Path log;

    private SshdServer(Path dir, int port, Process process, Path log) {
        this.dir = dir;
        this.port = port;
        this.process = process;
        this.log = log;
        this.hostKey = dir.resolve("ssh_host_ed25519_key");
        this.userKey = dir.resolve("id_ed25519");
        this.ecdsaKey = dir.resolve("id_ecdsa");
        this.rsaKey = dir.resolve("id_rsa");
        this.encryptedKey = dir.resolve("id_encrypted");
        this.strangerKey = dir.resolve("id_stranger");
        this.knownHosts = dir.resolve("known_hosts");
    }

    public static SshdServer start() throws Exception {
        return start(null);
    }

    /**
     * With {@code loginShell} as this user's login shell, in sshd's eyes only: sshd runs in a
     * private mount namespace where a copy of {@code /etc/passwd} with that shell is mounted over
     * the real one (needs root and util-linux's unshare; the real file is never touched).
     */
    public static SshdServer start(Path loginShell) throws Exception {
        return start(loginShell, null);
    }

    /**
     * With {@code password} as this user's password, in sshd's eyes only, and keyboard-interactive
     * login through PAM on (password login off, keys still on): sshd runs in a private mount
     * namespace where a copy of {@code /etc/shadow} holding that password's hash is mounted over the
     * real one (needs root, unshare and openssl; the real file is never touched).
     */
    public static SshdServer startWithPassword(String password) throws Exception {
        return start(null, password);
    }

    /**
     * For a throwaway {@link TestUser}: password and keyboard-interactive login through PAM, with
     * the user's real password (set by chpasswd), as a server that takes passwords is set up.
     */
    public static SshdServer startForPasswordLogin() throws Exception {
        return start(null, null, true);
    }

    private static SshdServer start(Path loginShell, String password) throws Exception {
        return start(loginShell, password, false);
    }

    private static SshdServer start(Path loginShell, String password, boolean passwordLogin) throws Exception {
        Path sshd = find("sshd");
        Path keygen = find("ssh-keygen");
        Services.require(sshd != null && keygen != null, "OpenSSH's sshd and ssh-keygen are needed (apt-get install openssh-server)");
        // As root, sshd insists on its privilege separation dir.
        Path privsep = Path.of("/run/sshd");
        if ("root".equals(System.getProperty("user.name")) && !Files.isDirectory(privsep)) {
            Files.createDirectories(privsep, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        }
        Path dir = Files.createTempDirectory("airlock-sshd-", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        keygen(keygen, dir.resolve("ssh_host_ed25519_key"), "ed25519", "");
        keygen(keygen, dir.resolve("id_ed25519"), "ed25519", "");
        keygen(keygen, dir.resolve("id_ecdsa"), "ecdsa", "");
        keygen(keygen, dir.resolve("id_rsa"), "rsa", "");
        keygen(keygen, dir.resolve("id_encrypted"), "ed25519", PASSPHRASE);
        keygen(keygen, dir.resolve("id_stranger"), "ed25519", "");
        // A user CA the server trusts, and a key it signed: that key logs in by its certificate only.
        keygen(keygen, dir.resolve("user_ca"), "ed25519", "");
        keygen(keygen, dir.resolve("id_certified"), "ed25519", "");
        sign(keygen, dir.resolve("user_ca"), dir.resolve("id_certified.pub"), System.getProperty("user.name"));
        StringBuilder auth = new StringBuilder();
        for (String k : List.of("id_ed25519", "id_ecdsa", "id_rsa", "id_encrypted")) {
            auth.append(Files.readString(dir.resolve(k + ".pub")));
        }
        Files.writeString(dir.resolve("authorized_keys"), auth);
        Exception last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            int port = freePort();
            Path config = dir.resolve("sshd_config");
            Files.writeString(config, String.join("\n",
                    "Port " + port,
                    "ListenAddress 127.0.0.1",
                    "HostKey " + dir.resolve("ssh_host_ed25519_key"),
                    "PidFile " + dir.resolve("sshd.pid"),
                    "AuthorizedKeysFile " + dir.resolve("authorized_keys"),
                    "TrustedUserCAKeys " + dir.resolve("user_ca.pub"),
                    "PubkeyAuthentication yes",
                    "PasswordAuthentication " + (passwordLogin ? "yes" : "no"),
                    "KbdInteractiveAuthentication " + (password == null && !passwordLogin ? "no" : "yes"),
                    "PermitRootLogin " + (password == null ? "prohibit-password" : "yes"),
                    // The keys live in a temp dir under /tmp (world-writable parent): StrictModes would refuse them.
                    "StrictModes no",
                    "UsePAM " + (password == null && !passwordLogin ? "no" : "yes"),
                    "PrintMotd no",
                    "LogLevel VERBOSE",
                    ""));
            Path log = dir.resolve("sshd-" + port + ".log");
            List<String> argv = new ArrayList<>(List.of(sshd.toString(), "-D", "-e", "-f", config.toString()));
            Map<String, Path> mounts = new LinkedHashMap<>();
            if (loginShell != null) {
                mounts.put("/etc/passwd", withLoginShell(dir, loginShell));
            }
            if (password != null) {
                mounts.put("/etc/shadow", withPassword(dir, password));
            }
            if (!mounts.isEmpty()) {
                argv.addAll(0, privateMounts(mounts));
            }
            Process p = new ProcessBuilder(argv)
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            try {
                awaitListening(p, log, port);
            } catch (IOException e) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                last = e;
                continue;
            }
            String hostPub = Files.readString(dir.resolve("ssh_host_ed25519_key.pub")).trim();
            String[] parts = hostPub.split(" ");
            Files.writeString(dir.resolve("known_hosts"), "[127.0.0.1]:" + port + " " + parts[0] + " " + parts[1] + "\n");
            return new SshdServer(dir, port, p, log);
        }
        throw new IllegalStateException("sshd did not start: " + last.getMessage(), last);
    }

    /** A copy of /etc/passwd where this user's login shell is {@code shell}. */
    private static Path withLoginShell(Path dir, Path shell) throws IOException {
        return copyWithOwnField(Path.of("/etc/passwd"), dir.resolve("passwd"), 6, shell.toString(), "rw-r--r--");
    }

    /** A copy of /etc/shadow where this user's password is {@code password} (SHA-512 crypt, from openssl). */
    private static Path withPassword(Path dir, String password) throws IOException, InterruptedException {
        Path openssl = find("openssl");
        Services.require(openssl != null && Files.isReadable(Path.of("/etc/shadow")),
                "a test password needs openssl and a readable /etc/shadow (root)");
        Process p = new ProcessBuilder(openssl.toString(), "passwd", "-6", "-stdin").start();
        try (var in = p.getOutputStream()) {
            in.write(password.getBytes(StandardCharsets.UTF_8));
        }
        String hash = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (p.waitFor() != 0 || !hash.startsWith("$6$")) {
            throw new IOException("openssl passwd -6 failed");
        }
        return copyWithOwnField(Path.of("/etc/shadow"), dir.resolve("shadow"), 1, hash, "rw-------");
    }

    /** A copy of a colon-separated user database where this user's field {@code index} is {@code value}. */
    private static Path copyWithOwnField(Path source, Path copy, int index, String value, String mode) throws IOException {
        StringBuilder out = new StringBuilder();
        for (String line : Files.readAllLines(source)) {
            String[] f = line.split(":", -1);
            if (f.length > index && f[0].equals(System.getProperty("user.name"))) {
                f[index] = value;
                line = String.join(":", f);
            }
            out.append(line).append('\n');
        }
        Files.writeString(copy, out);
        Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString(mode));
        return copy;
    }

    /** A prefix that runs sshd in a private mount namespace with each copy mounted over its target. */
    private static List<String> privateMounts(Map<String, Path> mounts) {
        Path unshare = find("unshare");
        Services.require(unshare != null && "root".equals(System.getProperty("user.name")),
                "a login shell or password of the test's choosing needs root and unshare (util-linux): sshd reads them from private copies");
        StringBuilder script = new StringBuilder();
        List<String> args = new ArrayList<>();
        for (Map.Entry<String, Path> m : mounts.entrySet()) {
            args.add(m.getValue().toString());
            args.add(m.getKey());
            script.append("mount --bind \"$1\" \"$2\" && shift 2 && ");
        }
        List<String> argv = new ArrayList<>(List.of(unshare.toString(), "--mount", "sh", "-c", script + "exec \"$@\"", "sh"));
        argv.addAll(args);
        return argv;
    }

    private static void awaitListening(Process p, Path log, int port) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            String text = Files.exists(log) ? Files.readString(log) : "";
            if (text.contains("Server listening on 127.0.0.1 port " + port)) {
                return;
            }
            if (!p.isAlive()) {
                throw new IOException("sshd exited " + p.exitValue() + ": " + text.strip());
            }
            Thread.sleep(20);
        }
        throw new IOException("sshd did not report listening within 20s: " + Files.readString(log).strip());
    }

    /** {@code ssh-keygen -s CA}: a user certificate for {@code principal}, valid from five minutes ago for a day. */
    private static void sign(Path keygen, Path ca, Path publicKey, String principal) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(keygen.toString(), "-q", "-s", ca.toString(), "-I", "airlock-test", "-n", principal,
                "-V", "-5m:+1d", publicKey.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IOException("ssh-keygen -s failed: " + out);
        }
    }

    private static void keygen(Path keygen, Path file, String type, String passphrase) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(keygen.toString(), "-q", "-t", type, "-N", passphrase, "-C", "airlock-test", "-f", file.toString()));
        if (type.equals("rsa")) {
            cmd.addAll(List.of("-b", "3072"));
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IOException("ssh-keygen failed: " + out);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    public static Path find(String name) {
        return Services.find(name).orElse(null);
    }

    /** Settings for an environment on this server, logged in with the ed25519 key. */
    public Map<String, String> settingsMap() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("airlock.backend", "ssh");
        m.put(SshSettings.HOST, "127.0.0.1");
        m.put(SshSettings.PORT, Integer.toString(port));
        m.put(SshSettings.USER, System.getProperty("user.name"));
        m.put(SshSettings.IDENTITY, userKey.toString());
        m.put(SshSettings.KNOWN_HOSTS, knownHosts.toString());
        m.put(SshSettings.AGENT, "no");
        // This test machine may look like a container (/.dockerenv); the target is a real host here.
        m.put("airlock.container", "no");
        return m;
    }

    public Settings settings() {
        return Settings.of(settingsMap());
    }

    public Settings settings(String... overrides) {
        Map<String, String> m = settingsMap();
        for (int i = 0; i < overrides.length; i += 2) {
            m.put(overrides[i], overrides[i + 1]);
        }
        return Settings.of(m);
    }

    public String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void close() throws Exception {
        // Per-connection sshd children outlive the listener: end them first.
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }
}
