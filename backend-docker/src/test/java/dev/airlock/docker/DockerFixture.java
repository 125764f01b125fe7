package dev.airlock.docker;

import dev.airlock.settings.Settings;
import dev.airlock.tck.Services;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A real Docker daemon and a tiny test image built offline: a rootfs holding Debian's static
 * busybox and a symlink per applet, imported with {@code docker import} (nothing is pulled).
 * Skips when no daemon answers, and fails instead under {@code AIRLOCK_REQUIRE_SERVICES=1}.
 * After each test class, no Airlock-labelled container may remain that was not there before.
 */
public class DockerFixture implements BeforeAllCallback, BeforeEachCallback, AfterAllCallback {
    /** Bump the tag whenever the rootfs below changes: a daemon keeps an image of the old tag. */
    public static final String IMAGE = "airlock-test/busybox:2";
    private static final Path BUSYBOX = Path.of("/bin/busybox");
    /**
     * This test JVM's own label: every container the tests make carries it, and the leak check
     * looks only at those, so two checkouts testing on one daemon never judge (or remove) each
     * other's containers.
     */
    static final String RUN_LABEL = "airlock-test-run";
    static final String RUN = java.util.UUID.randomUUID().toString();
    private static final String LABEL_FILTER = "label=" + RUN_LABEL + "=" + RUN;

    /** Settings that open the docker backend on the test image, plus {@code extra} key-value pairs. */
    public static Settings settings(String... extra) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("airlock.backend", "docker");
        m.put(DockerSettings.IMAGE, IMAGE);
        m.put(DockerSettings.PULL, "never");
        m.put(DockerSettings.LABELS + "." + RUN_LABEL, RUN);
        for (int i = 0; i + 1 < extra.length; i += 2) {
            m.put(extra[i], extra[i + 1]);
        }
        return Settings.of(m);
    }

    /** @Nested classes inherit the extension: only the outermost class takes the snapshot and checks it. */
    private static boolean outermost(ExtensionContext context) {
        return context.getRequiredTestClass().getEnclosingClass() == null;
    }

    private ExtensionContext.Store store(ExtensionContext context) {
        return context.getStore(ExtensionContext.Namespace.create(getClass()));
    }

    /** The CLI that imports the image and checks for leftovers from outside: {@code docker} here. */
    protected String cli() {
        return "docker";
    }

    /** Readies the daemon and its image: why the tests cannot run here, or null when they can. */
    protected String prepare() throws Exception {
        String why = whyNoDaemon();
        if (why != null) {
            return why + "; start dockerd to run the docker tests (see .ci/run)";
        }
        ensureImage(cli());
        return null;
    }

    /** After the leak check of the outermost class: nothing to stop for dockerd. */
    protected void finish() throws Exception {
    }

    /**
     * Without a daemon, each test is skipped with the reason (surefire shows skipped tests, not an
     * aborted class); test classes open environments lazily, in the tests, for that.
     */
    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        if (!outermost(context)) {
            return;
        }
        String why = prepare();
        if (why != null) {
            // Checked again before each test, so each is reported as skipped (or failed in CI) with the reason.
            store(context).put("skip", why);
            return;
        }
        store(context).put("before", managedContainers(cli()));
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        String skip = store(context).get("skip", String.class);
        Services.require(skip == null, skip);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (!outermost(context)) {
            return;
        }
        @SuppressWarnings("unchecked")
        Set<String> before = (Set<String>) store(context).get("before");
        try {
            if (before == null) {
                return; // skipped
            }
            Set<String> left = managedContainers(cli());
            left.removeAll(before);
            if (!left.isEmpty()) {
                for (String id : left) {
                    run(List.of(cli(), "rm", "-f", "-v", id), null, 60);
                }
                fail("containers left behind by " + context.getDisplayName() + ": " + left);
            }
        } finally {
            finish();
        }
    }

    /** Why the docker tests cannot run here, or null when they can. */
    static String whyNoDaemon() throws InterruptedException {
        if (!BUSYBOX.toFile().isFile()) {
            return "no " + BUSYBOX + " to build the test image (apt-get install busybox-static)";
        }
        try {
            Result r = docker(null, 30, "version", "--format", "{{.Server.Version}}");
            return r.exit == 0 ? null : "the Docker daemon does not answer: " + r.err.strip();
        } catch (IOException e) {
            return "no docker client: " + e.getMessage() + " (apt-get install docker.io)";
        }
    }

    /**
     * Imports the busybox image with {@code cli} ({@code docker} or {@code podman}, whose
     * {@code import} and {@code image inspect} take the same arguments) unless its store has it.
     */
    static synchronized void ensureImage(String cli) throws Exception {
        if (run(List.of(cli, "image", "inspect", IMAGE), null, 30).exit == 0) {
            return;
        }
        Path root = Files.createTempDirectory("airlock-rootfs-");
        try {
            Path bin = Files.createDirectories(root.resolve("bin"));
            Files.copy(BUSYBOX, bin.resolve("busybox"));
            Result list = run(List.of(BUSYBOX.toString(), "--list"), null, 30);
            for (String applet : list.out.split("\n")) {
                applet = applet.strip();
                if (!applet.isEmpty() && !applet.equals("busybox") && !applet.contains("/")) {
                    Files.createSymbolicLink(bin.resolve(applet), Path.of("busybox"));
                }
            }
            // Debian's busybox has no cksum applet; the kit only compares checksums with one another.
            Path cksum = bin.resolve("cksum");
            Files.writeString(cksum, "#!/bin/sh\nexec md5sum \"$@\"\n");
            Files.setPosixFilePermissions(cksum, PosixFilePermissions.fromString("rwxr-xr-x"));
            Files.createDirectories(root.resolve("usr"));
            Files.createSymbolicLink(root.resolve("usr/bin"), Path.of("../bin"));
            Files.createSymbolicLink(root.resolve("sbin"), Path.of("bin"));
            for (String d : List.of("etc", "root", "proc", "sys", "dev", "home")) {
                Files.createDirectories(root.resolve(d));
            }
            Path tmp = Files.createDirectories(root.resolve("tmp"));
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxrwxrwx"));
            Files.writeString(root.resolve("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n"
                    + "nobody:x:65534:65534:nobody:/home:/bin/sh\n");
            Files.writeString(root.resolve("etc/group"), "root:x:0:\nnogroup:x:65534:\n");
            Result tar = run(List.of("sh", "-c", "tar -C \"$1\" --numeric-owner --owner=0 --group=0 -cf - . | \"$3\" import"
                    + " --change 'ENV PATH=/bin' - \"$2\"", "sh", root.toString(), IMAGE, cli), null, 300);
            if (tar.exit != 0) {
                fail("could not import the test image with " + cli + ": " + tar.err.strip());
            }
        } finally {
            try (Stream<Path> s = Files.walk(root)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        Files.deleteIfExists(root);
    }

    /** Ids of the containers this test JVM made (its run label), as {@code cli} lists them. */
    static Set<String> managedContainers(String cli) throws Exception {
        Result r = run(List.of(cli, "ps", "-a", "-q", "--no-trunc", "--filter", LABEL_FILTER), null, 60);
        assertEquals(0, r.exit, r.err);
        return new TreeSet<>(Arrays.stream(r.out.split("\n")).map(String::strip).filter(s -> !s.isEmpty()).toList());
    }

    /** What a docker CLI call gave. */
    public record Result(int exit, String out, String err) {
    }

    /** Runs the docker CLI (for checks from outside the container). */
    public static Result docker(byte[] stdin, int timeoutSeconds, String... args) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>();
        argv.add("docker");
        argv.addAll(List.of(args));
        return run(argv, stdin, timeoutSeconds);
    }

    static Result run(List<String> argv, byte[] stdin, int timeoutSeconds) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(argv).start();
        CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> readAll(p.getInputStream()));
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
        try (OutputStream in = p.getOutputStream()) {
            if (stdin != null) {
                in.write(stdin);
            }
        }
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(String.join(" ", argv) + " did not finish in " + timeoutSeconds + "s");
        }
        return new Result(p.exitValue(), new String(out.join(), StandardCharsets.UTF_8), new String(err.join(), StandardCharsets.UTF_8));
    }

    private static byte[] readAll(InputStream in) {
        try (in) {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            in.transferTo(b);
            return b.toByteArray();
        } catch (IOException e) {
            return new byte[0];
        }
    }
}
