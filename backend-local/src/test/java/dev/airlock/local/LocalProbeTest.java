package dev.airlock.local;

import dev.airlock.containment.TargetProbe;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The probe answered in Java gives, on this host, the very facts the probe script gives, or none. */
class LocalProbeTest {
    private static final String DEFAULT_BASE = "${TMPDIR:-/tmp}";

    @TempDir
    Path dir;

    @Test
    void theJavaAnswerIsTheScriptsAnswer() throws Exception {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("TMPDIR", dir.toString());
        same(DEFAULT_BASE, env);
        env.put("TMPDIR", dir + "/"); // mktemp keeps the doubled slash
        same(DEFAULT_BASE, env);
        env.remove("HOME");
        env.put("AIRLOCK_HOME", "/some where");
        env.put("KUBERNETES_SERVICE_HOST", "10.0.0.1");
        same(DEFAULT_BASE, env);
        Path literal = Files.createDirectory(dir.resolve("base"));
        env.remove("TMPDIR");
        same(literal.toString(), env);
    }

    @Test
    void whereTheAnswerCouldDifferTheScriptAnswers() {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("TMPDIR", dir.resolve("not-yet").toString()); // mkdir -p's modes: the script's business
        assertTrue(LocalProbe.answer(DEFAULT_BASE, env).isEmpty());
        env.put("TMPDIR", dir.toString());
        assertTrue(LocalProbe.answer("$HOME/tmp", env).isEmpty()); // an expression only a shell evaluates
        env.put("PATH", "bin:" + env.get("PATH")); // relative to where the script starts
        assertTrue(LocalProbe.answer(DEFAULT_BASE, env).isEmpty());
        env.put("PATH", System.getenv("PATH"));
        env.put("HOME", "/h\u00e9"); // the script passes bytes, Java decoded them
        assertTrue(LocalProbe.answer(DEFAULT_BASE, env).isEmpty());
    }

    /** Lines glibc reads otherwise than a split (a comment, a leading blank, NIS, 007) make the script answer. */
    @org.junit.jupiter.api.Test
    void onlyPlainPasswdLinesAreReadInJava() {
        org.junit.jupiter.api.Assertions.assertTrue(LocalProbe.plainPasswdLine("root:x:0:0:root:/root:/bin/bash"));
        org.junit.jupiter.api.Assertions.assertTrue(LocalProbe.plainPasswdLine("app:x:1000:1000::/home/app:"));
        for (String odd : java.util.List.of("#fake:x:0:0::/fakehome:/bin/sh", " root:x:0:0:root:/root:/bin/bash",
                "+nis::::::", "-bad::::::", "zero:x:007:0::/z:/bin/sh", "short:x:0:0", ":x:0:0::/h:/bin/sh")) {
            org.junit.jupiter.api.Assertions.assertFalse(LocalProbe.plainPasswdLine(odd), odd);
        }
    }

    private static void same(String base, Map<String, String> env) throws Exception {
        Map<String, String> java = TargetProbe.parse(LocalProbe.answer(base, env).orElseThrow(
                () -> new AssertionError("no Java answer for " + base + " with TMPDIR=" + env.get("TMPDIR"))));
        Map<String, String> script = script(base, env);
        String javaDir = java.remove("private");
        String scriptDir = script.remove("private");
        assertEquals(script, java, "the facts for base " + base);
        String expectedBase = base.equals(DEFAULT_BASE) ? env.get("TMPDIR") : base;
        assertEquals(scriptDir.substring(0, scriptDir.lastIndexOf('/') + 1), javaDir.substring(0, javaDir.lastIndexOf('/') + 1));
        assertTrue(javaDir.startsWith(expectedBase + "/airlock-") && javaDir.length() == scriptDir.length(), javaDir + " " + scriptDir);
        for (String d : List.of(javaDir, javaDir + "/run", javaDir + "/tmp")) {
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(Path.of(d))), d);
        }
        assertTrue(java.get("uid").matches("\\d+") && !java.get("rootmount").isEmpty() && !java.get("user").isEmpty(), java.toString());
    }

    /** The probe script as the local backend runs it: sh -c, this environment exactly. */
    private static Map<String, String> script(String base, Map<String, String> env) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", TargetProbe.script(base, !base.contains("$")))
                .redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue());
        return TargetProbe.parse(out);
    }
}
