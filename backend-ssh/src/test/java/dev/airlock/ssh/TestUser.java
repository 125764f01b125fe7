package dev.airlock.ssh;

import dev.airlock.tck.Services;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.security.SecureRandom;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A throwaway local user for ssh logins by password: {@code useradd} with a name unique to this run
 * (two checkouts testing at once do not collide), a HOME of its own under /tmp holding no keys, a
 * random password set through {@code chpasswd}'s stdin (never argv). {@link #close} ends the
 * user's processes (the only ones are what the test started as it), removes the user and its HOME.
 * Needs root and the shadow tools; skips otherwise (fails under AIRLOCK_REQUIRE_SERVICES=1).
 */
final class TestUser implements AutoCloseable {
    final String name;
    final String password;
    final Path home;

    private TestUser(String name, String password, Path home) {
        this.name = name;
        this.password = password;
        this.home = home;
    }

    static TestUser create() throws Exception {
        Path useradd = SshdServer.find("useradd");
        Path chpasswd = SshdServer.find("chpasswd");
        Services.require(useradd != null && chpasswd != null && SshdServer.find("userdel") != null
                        && "root".equals(System.getProperty("user.name")),
                "a throwaway ssh user needs root and useradd, chpasswd, userdel (apt-get install passwd)");
        SecureRandom random = new SecureRandom();
        byte[] id = new byte[5];
        random.nextBytes(id);
        String name = "airlock-t" + HexFormat.of().formatHex(id);
        byte[] secret = new byte[12];
        random.nextBytes(secret);
        String password = "pw " + HexFormat.of().formatHex(secret) + "!";
        Path base = Files.createTempDirectory("airlock-user-",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        Path home = base.resolve(name);
        run(List.of(useradd.toString(), "--no-create-home", "--home-dir", home.toString(), "--shell", "/bin/bash",
                "--user-group", name), null);
        TestUser user = new TestUser(name, password, home);
        try {
            Files.createDirectories(home);
            UserPrincipal owner = home.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(name);
            Files.setOwner(home, owner);
            Files.setPosixFilePermissions(home, PosixFilePermissions.fromString("rwx------"));
            run(List.of(chpasswd.toString()), name + ":" + password + "\n");
        } catch (Exception e) {
            user.close();
            throw e;
        }
        return user;
    }

    /** Writes a file in the user's HOME, owned by the user. */
    void write(String relative, String content) throws IOException {
        Path f = home.resolve(relative);
        Files.writeString(f, content);
        Files.setOwner(f, home.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(name));
    }

    /** Settings that log in to {@code server} as this user with its password only: no key, no agent. */
    java.util.Map<String, String> settingsMap(SshdServer server) {
        java.util.Map<String, String> m = server.settingsMap();
        m.put(SshSettings.USER, name);
        m.remove(SshSettings.IDENTITY);
        m.put(SshSettings.PASSWORD, password);
        m.put(SshSettings.CONFIG, "none");
        return m;
    }

    private static void run(List<String> argv, String stdin) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        try (OutputStream in = p.getOutputStream()) {
            if (stdin != null) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(argv.get(0) + " failed: " + out.strip());
        }
    }

    @Override
    public void close() throws Exception {
        // Only this run's user: its processes are the ones the test started as it.
        ProcessHandle.allProcesses().filter(h -> h.info().user().filter(name::equals).isPresent())
                .forEach(ProcessHandle::destroyForcibly);
        Thread.sleep(100);
        run(List.of(SshdServer.find("userdel").toString(), name), null);
        try (Stream<Path> s = Files.walk(home.getParent())) {
            s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }
}
