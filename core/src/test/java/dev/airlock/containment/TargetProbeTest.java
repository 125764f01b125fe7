package dev.airlock.containment;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The probe reads its answers with fewer processes than it did at 44407ec (a frozen copy of that
 * script is a test resource); on this host, under each shell a target may have as {@code sh}, both
 * scripts give the same facts, for the usual user, a user whose uid has no passwd entry, and a
 * process without HOME or with AIRLOCK_HOME and a Kubernetes variable set.
 */
class TargetProbeTest {
    private static final String OLD = "probe-44407ec.sh";

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"sh", "bash", "busybox sh"})
    void theSameFactsAsTheProbeBefore(String shell) throws Exception {
        List<String> sh = List.of(shell.split(" "));
        Assumptions.assumeTrue(onPath(sh.get(0)), sh.get(0) + " is not installed");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x")); // other users reach shared/
        Path shared = Files.createDirectory(dir.resolve("shared"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
        same(sh, List.of(), Map.of("TMPDIR", shared.toString()));
        same(sh, List.of(), Map.of("TMPDIR", shared + "/not/yet", "AIRLOCK_HOME", "/a b", "KUBERNETES_SERVICE_HOST", "10.0.0.1"));
        same(sh, List.of("env", "-u", "HOME"), Map.of("TMPDIR", shared.toString()));
        if (isRoot() && onPath("setpriv")) {
            // 54321 has no passwd entry: id -un fails, and the passwd home is looked for by what it printed
            same(sh, List.of("setpriv", "--reuid", "54321", "--regid", "54321", "--clear-groups"), Map.of("TMPDIR", shared.toString()));
            same(sh, List.of("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"), Map.of("TMPDIR", shared.toString()));
        }
    }

    private static void same(List<String> shell, List<String> prefix, Map<String, String> env) throws Exception {
        String old;
        try (InputStream in = TargetProbeTest.class.getResourceAsStream(OLD)) {
            old = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        // The new script first: where TMPDIR does not exist yet, it is the one that makes it.
        Map<String, String> after = run(prefix, shell, TargetProbe.script("${TMPDIR:-/tmp}", false), env);
        Map<String, String> before = run(prefix, shell, old, env);
        String b = before.remove("private");
        String a = after.remove("private");
        assertEquals(before, after, "the facts under " + shell + " with " + prefix + " " + env);
        for (String p : List.of(b, a)) {
            Path priv = Path.of(p);
            assertEquals(Path.of(env.get("TMPDIR")), priv.getParent(), p);
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(priv)), p);
            assertTrue(Files.isDirectory(priv.resolve("run")) && Files.isDirectory(priv.resolve("tmp")), p);
        }
        assertTrue(before.get("uid").matches("\\d+") && !before.get("rootmount").isEmpty(), before.toString());
    }

    private static Map<String, String> run(List<String> prefix, List<String> shell, String script, Map<String, String> env)
            throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(prefix);
        argv.addAll(shell);
        argv.add("-c");
        argv.add(script);
        ProcessBuilder pb = new ProcessBuilder(argv).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), String.join(" ", argv.subList(0, argv.size() - 1)));
        return TargetProbe.parse(out);
    }

    private static boolean isRoot() throws IOException {
        return "0".equals(String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid")));
    }

    private static boolean onPath(String name) {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            if (Files.isExecutable(Path.of(d.isEmpty() ? "." : d, name))) {
                return true;
            }
        }
        return false;
    }
}
