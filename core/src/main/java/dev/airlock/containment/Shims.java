package dev.airlock.containment;

import dev.airlock.shell.Shell;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The eval profile's stand-ins for the programs that reach outside a run: {@code crontab},
 * {@code systemctl} and {@code at} (with {@code batch}, {@code atq}, {@code atrm} as links to it).
 * They are POSIX {@code sh} scripts kept as resources; installing bakes the run dir into each.
 */
public final class Shims {
    /** The scripts, by file name in the bin dir. */
    public static final List<String> SCRIPTS = List.of("crontab", "systemctl", "at");
    /** Names served by another script: name -> script. */
    public static final Map<String, String> LINKS = new TreeMap<>(Map.of("batch", "at", "atq", "at", "atrm", "at"));
    /** The line every installed shim carries, so {@code doctor} can tell it from the real program. */
    public static final String MARKER = "# airlock-shim";

    private Shims() {
    }

    /** The script {@code name} ready to install for {@code runDir}. */
    public static byte[] script(String name, String runDir) {
        if (!SCRIPTS.contains(name)) {
            throw new IllegalArgumentException("no shim named " + name);
        }
        String text;
        try (InputStream in = Shims.class.getResourceAsStream("shims/" + name)) {
            if (in == null) {
                throw new IllegalStateException("the " + name + " shim is missing from airlock-core's resources");
            }
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("reading the " + name + " shim", e);
        }
        int nl = text.indexOf('\n');
        String header = MARKER + ": " + name + " (eval profile)\nAIRLOCK_RUN_DIR=" + Shell.quote(runDir) + "\n";
        return (text.substring(0, nl + 1) + header + text.substring(nl + 1)).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The {@code sh} script that makes the eval run's directories (0700) and the shims' links.
     * The scripts themselves are written through the environment's files afterwards.
     */
    public static String prepareScript(String runDir) {
        String dir = Shell.quotePath(runDir);
        StringBuilder sb = new StringBuilder("umask 077\n")
                .append("mkdir -p -- ").append(dir).append("/home ").append(dir).append("/airlock ")
                .append(dir).append("/tmp ").append(dir).append("/bin || exit 1\n");
        for (Map.Entry<String, String> e : LINKS.entrySet()) {
            sb.append("ln -sf ").append(e.getValue()).append(' ').append(dir).append("/bin/").append(e.getKey())
                    .append(" || exit 1\n");
        }
        return sb.toString();
    }
}
