package dev.airlock.bench;

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
 * The services both sides share, started once: a Docker container (the offline busybox test
 * image, imported when missing) and an OpenSSH server on a loopback port with its own keys, plus
 * an OpenSSH master connection for the fair ssh reference.
 */
final class Services {
    static final String IMAGE = "airlock-test/busybox:2";

    private Services() {
    }

    /** Why a service is missing, for a "not measured" row; null when it is there. */
    static String whyNoDocker() {
        try {
            return run(List.of("docker", "version", "--format", "{{.Server.Version}}"), 30).exit == 0 ? null
                    : "the Docker daemon does not answer (start dockerd)";
        } catch (IOException e) {
            return "no docker client (apt-get install docker.io)";
        }
    }

    /** Starts a container of the test image that sleeps; returns its id. */
    static String startContainer() throws IOException {
        if (run(List.of("docker", "image", "inspect", IMAGE), 30).exit != 0) {
            importImage();
        }
        Result r = run(List.of("docker", "run", "-d", "--rm", "--init", "--label", "airlock.bench=true", IMAGE, "sleep", "86400"), 120);
        if (r.exit != 0) {
            throw new IOException("docker run failed: " + r.out.strip());
        }
        return r.out.strip();
    }

    static void stopContainer(String id) {
        try {
            run(List.of("docker", "rm", "-f", id), 60);
        } catch (IOException e) {
            System.err.println("bench: could not remove container " + id + ": " + e.getMessage());
        }
    }

    /** The same offline image the docker tests build: Debian's static busybox and its applets. */
    private static void importImage() throws IOException {
        Path busybox = Path.of("/bin/busybox");
        if (!Files.isRegularFile(busybox)) {
            throw new IOException("no /bin/busybox to build the test image (apt-get install busybox-static)");
        }
        Path root = Files.createTempDirectory("airlock-bench-rootfs-");
        try {
            Path bin = Files.createDirectories(root.resolve("bin"));
            Files.copy(busybox, bin.resolve("busybox"));
            for (String applet : run(List.of(busybox.toString(), "--list"), 30).out.split("\n")) {
                applet = applet.strip();
                if (!applet.isEmpty() && !applet.equals("busybox") && !applet.contains("/")) {
                    Files.createSymbolicLink(bin.resolve(applet), Path.of("busybox"));
                }
            }
            Path cksum = bin.resolve("cksum");
            Files.writeString(cksum, "#!/bin/sh\nexec md5sum \"$@\"\n");
            Files.setPosixFilePermissions(cksum, PosixFilePermissions.fromString("rwxr-xr-x"));
            Files.createDirectories(root.resolve("usr"));
            Files.createSymbolicLink(root.resolve("usr/bin"), Path.of("../bin"));
            Files.createSymbolicLink(root.resolve("sbin"), Path.of("bin"));
            for (String d : List.of("etc", "root", "proc", "sys", "dev", "home")) {
                Files.createDirectories(root.resolve(d));
            }
            Files.setPosixFilePermissions(Files.createDirectories(root.resolve("tmp")), PosixFilePermissions.fromString("rwxrwxrwx"));
            Files.writeString(root.resolve("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/sh\n");
            Files.writeString(root.resolve("etc/group"), "root:x:0:\nnogroup:x:65534:\n");
            Result r = run(List.of("sh", "-c", "tar -C \"$1\" --numeric-owner --owner=0 --group=0 -cf - . | docker import"
                    + " --change 'ENV PATH=/bin' - \"$2\"", "sh", root.toString(), IMAGE), 300);
            if (r.exit != 0) {
                throw new IOException("could not import the test image: " + r.out.strip());
            }
        } finally {
            deleteTree(root);
        }
    }

    /** An OpenSSH server on a free loopback port, and the client options that reach it. */
    static final class Sshd implements AutoCloseable {
        final Path dir;
        final int port;
        private final Process process;
        private boolean master;

        private Sshd(Path dir, int port, Process process) {
            this.dir = dir;
            this.port = port;
            this.process = process;
        }

        static String whyNot() {
            return find("sshd") == null || find("ssh-keygen") == null || find("ssh") == null
                    ? "OpenSSH's sshd, ssh and ssh-keygen are needed (apt-get install openssh-server openssh-client)" : null;
        }

        static Sshd start() throws IOException, InterruptedException {
            Path privsep = Path.of("/run/sshd");
            if ("root".equals(System.getProperty("user.name")) && !Files.isDirectory(privsep)) {
                Files.createDirectories(privsep);
            }
            Path dir = Files.createTempDirectory("airlock-bench-sshd-", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            for (String k : List.of("host", "user")) {
                Result r = run(List.of("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dir.resolve(k).toString()), 60);
                if (r.exit != 0) {
                    throw new IOException("ssh-keygen failed: " + r.out);
                }
            }
            Files.copy(dir.resolve("user.pub"), dir.resolve("authorized_keys"));
            int port;
            try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            }
            Files.writeString(dir.resolve("sshd_config"), String.join("\n", "Port " + port, "ListenAddress 127.0.0.1",
                    "HostKey " + dir.resolve("host"), "PidFile " + dir.resolve("sshd.pid"),
                    "AuthorizedKeysFile " + dir.resolve("authorized_keys"), "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no", "PermitRootLogin prohibit-password", "StrictModes no", "UsePAM no",
                    "PrintMotd no",
                    // 64 concurrent commands over one OpenSSH master need as many sessions per connection.
                    "MaxSessions 128", "MaxStartups 200", ""));
            Path log = dir.resolve("sshd.log");
            Process p = new ProcessBuilder(find("sshd").toString(), "-D", "-e", "-f", dir.resolve("sshd_config").toString())
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!Files.readString(log).contains("Server listening")) {
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    p.destroyForcibly();
                    throw new IOException("sshd did not start: " + Files.readString(log).strip());
                }
                Thread.sleep(20);
            }
            String[] host = Files.readString(dir.resolve("host.pub")).trim().split(" ");
            Files.writeString(dir.resolve("known_hosts"), "[127.0.0.1]:" + port + " " + host[0] + " " + host[1] + "\n");
            return new Sshd(dir, port, p);
        }

        Map<String, String> settings() {
            Map<String, String> m = new LinkedHashMap<>();
            m.put("airlock.backend", "ssh");
            m.put("airlock.ssh.host", "127.0.0.1");
            m.put("airlock.ssh.port", Integer.toString(port));
            m.put("airlock.ssh.user", System.getProperty("user.name"));
            m.put("airlock.ssh.identity", dir.resolve("user").toString());
            m.put("airlock.ssh.known-hosts", dir.resolve("known_hosts").toString());
            m.put("airlock.ssh.agent", "no");
            m.put("airlock.container", "no");
            return m;
        }

        /** {@code ssh} with this server's key and host key; {@code shared} goes through the master connection. */
        List<String> ssh(boolean shared, String command) {
            List<String> a = new ArrayList<>(List.of("ssh", "-T", "-i", dir.resolve("user").toString(), "-o", "IdentitiesOnly=yes",
                    "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=" + dir.resolve("known_hosts"),
                    "-p", Integer.toString(port)));
            if (shared) {
                a.addAll(List.of("-o", "ControlMaster=no", "-o", "ControlPath=" + dir.resolve("cm")));
            }
            a.add(System.getProperty("user.name") + "@127.0.0.1");
            a.add(command);
            return a;
        }

        /** Opens the OpenSSH master connection ({@code ControlMaster}, {@code ControlPersist}). */
        void startMaster() throws IOException {
            List<String> a = ssh(false, "true");
            a.remove(a.size() - 1);
            a.addAll(1, List.of("-M", "-N", "-f", "-o", "ControlPersist=yes", "-o", "ControlPath=" + dir.resolve("cm")));
            Result r = run(a, 60);
            if (r.exit != 0) {
                throw new IOException("the OpenSSH master connection did not start: " + r.out.strip());
            }
            master = true;
        }

        @Override
        public void close() throws IOException {
            if (master) {
                List<String> a = ssh(true, "true");
                a.remove(a.size() - 1);
                a.addAll(1, List.of("-O", "exit"));
                run(a, 30);
            }
            process.descendants().forEach(ProcessHandle::destroy);
            process.destroy();
            deleteTree(dir);
        }
    }

    record Result(int exit, String out) {
    }

    static Result run(List<String> argv, int timeoutSeconds) throws IOException {
        // Output to a file, not a pipe: ssh -f leaves a master behind that would hold a pipe open.
        Path out = Files.createTempFile("airlock-bench-out", ".txt");
        try {
            Process p = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(out.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", argv) + " did not finish in " + timeoutSeconds + " s");
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        } finally {
            Files.deleteIfExists(out);
        }
    }

    static Path find(String name) {
        for (String d : (System.getenv().getOrDefault("PATH", "/usr/bin:/bin") + ":/usr/sbin:/sbin").split(":")) {
            Path c = Path.of(d.isEmpty() ? "." : d, name);
            if (Files.isExecutable(c)) {
                return c;
            }
        }
        return null;
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> s = Files.walk(root)) {
            s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }
}
