package dev.airlock.ssh;

import dev.airlock.BackendException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.settings.Settings;
import dev.airlock.shell.Shell;
import dev.airlock.spi.RawResult;
import dev.airlock.spi.ResourceLabels;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What an ssh environment leaves on its host when the JVM that opened it dies before closing it
 * (a private dir, and commands still running), and how {@code airlock gc} finds and removes it.
 *
 * <p>At open, the private dir gets a labels file (owner, creation time, version: the common
 * {@link ResourceLabels}) and a heartbeat file the environment touches every minute while it is
 * open. gc lists the private dirs next to its own, keeps those of this owner, created longer ago
 * than asked, whose heartbeat stopped more than {@link #DEAD_AFTER} ago; then kills the process
 * groups of the processes whose {@code TMPDIR} is that dir's scratch dir (what every command of
 * the environment was started with; a command that dropped it from its children's environment
 * hides those children) and removes the dir. A live environment's dir, another owner's, or a dir
 * without labels is never touched.
 */
final class SshLeftovers {
    static final String LABELS = ".airlock-labels";
    static final String ALIVE = ".airlock-alive";
    static final Duration HEARTBEAT = Duration.ofMinutes(1);
    /** A heartbeat this old means the environment's JVM is gone (five missed beats). */
    static final Duration DEAD_AFTER = Duration.ofMinutes(5);
    private static final String LABEL_PREFIX = "airlock.";
    /** A private dir's name in its base, as {@code mktemp -d airlock-XXXXXXXXXX} makes it. */
    private static final Pattern PRIVATE_DIR = Pattern.compile("airlock-[A-Za-z0-9]{10}");

    /** Touches the heartbeats of every open ssh environment; one daemon thread for all. */
    static final ScheduledExecutorService BEATS = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "airlock-ssh-heartbeat");
        t.setDaemon(true);
        return t;
    });

    private SshLeftovers() {
    }

    /** Writes the labels and the first heartbeat into a new private dir. */
    static String markScript(String privateDir, ResourceLabels labels, String environmentId) {
        StringBuilder sb = new StringBuilder("umask 077\n{\n");
        for (Map.Entry<String, String> e : labels.asMap(LABEL_PREFIX).entrySet()) {
            sb.append("printf '%s=%s\\n' ").append(Shell.quote(e.getKey())).append(' ').append(Shell.quote(e.getValue())).append('\n');
        }
        sb.append("printf '%s=%s\\n' environment ").append(Shell.quote(environmentId)).append('\n');
        String d = Shell.quote(privateDir);
        sb.append("} > ").append(d).append("/").append(LABELS).append(" && : > ").append(d).append("/").append(ALIVE).append('\n');
        return sb.toString();
    }

    /** One heartbeat; {@code -c}: a dir already removed is not recreated. */
    static String beatScript(String privateDir) {
        return "touch -c -- " + Shell.quote(privateDir + "/" + ALIVE) + "\n";
    }

    /** One private dir gc may consider: its path, seconds since its heartbeat, and its labels. */
    record Found(String dir, long silentSeconds, Map<String, String> labels) {
    }

    /**
     * Lists this user's labelled private dirs in {@code base}: one line each,
     * {@code DIR TAB SECONDS-SINCE-HEARTBEAT TAB key=value TAB ...}.
     */
    static String listScript(String base) {
        return "b=" + Shell.quote(base) + "\n"
                + "now=$(date +%s)\n"
                + "for d in \"$b\"/airlock-??????????; do\n"
                + "  [ -d \"$d\" ] && [ -O \"$d\" ] && [ ! -L \"$d\" ] && [ -f \"$d/" + LABELS + "\" ] || continue\n"
                + "  m=$(stat -c %Y \"$d/" + ALIVE + "\" 2>/dev/null || stat -f %m \"$d/" + ALIVE + "\" 2>/dev/null || echo 0)\n"
                + "  printf '%s\\t%s' \"$d\" \"$((now - m))\"\n"
                + "  while IFS= read -r l; do printf '\\t%s' \"$l\"; done < \"$d/" + LABELS + "\"\n"
                + "  printf '\\n'\n"
                + "done\n";
    }

    static List<Found> parse(byte[] out) {
        List<Found> found = new ArrayList<>();
        for (String line : new String(out, StandardCharsets.UTF_8).split("\n")) {
            String[] f = line.split("\t");
            if (f.length < 3) {
                continue;
            }
            Map<String, String> labels = new LinkedHashMap<>();
            for (int i = 2; i < f.length; i++) {
                int eq = f[i].indexOf('=');
                if (eq > 0) {
                    labels.put(f[i].substring(0, eq), f[i].substring(eq + 1));
                }
            }
            try {
                found.add(new Found(f[0], Long.parseLong(f[1]), labels));
            } catch (NumberFormatException e) {
                // not a line of ours
            }
        }
        return found;
    }

    /**
     * Kills the process groups of the processes started in {@code dir}'s environment (found by
     * their {@code TMPDIR}, this user's only, never the script's own group), then removes the dir.
     */
    static String removeScript(String dir) {
        String d = Shell.quote(dir);
        return "d=" + d + "\n"
                + "own=$(sed 's/.*) //' /proc/$$/stat 2>/dev/null | cut -d' ' -f3)\n"
                + "for p in /proc/[0-9]*; do\n"
                + "  [ -O \"$p\" ] || continue\n"
                + "  if tr '\\000' '\\n' < \"$p/environ\" 2>/dev/null | grep -qxF \"TMPDIR=$d/tmp\"; then\n"
                + "    g=$(sed 's/.*) //' \"$p/stat\" 2>/dev/null | cut -d' ' -f3)\n"
                + "    [ -n \"$g\" ] && [ \"$g\" -gt 1 ] && [ \"$g\" != \"$own\" ] && kill -KILL \"-$g\" 2>/dev/null\n" // the one spelling dash and busybox share (Shell.signalGroup)
                + "  fi\n"
                + "done\n"
                + "rm -rf -- \"$d\"\n"
                + "[ ! -e \"$d\" ]\n";
    }

    /** Whether gc removes this dir: labelled by this owner, old enough, kept only when asked, and silent (its JVM gone). */
    static boolean collectable(Found f, String owner, Instant now, Duration olderThan, boolean includeKept) {
        return f.silentSeconds() >= DEAD_AFTER.toSeconds()
                && ResourceLabels.parse(f.labels(), LABEL_PREFIX)
                .map(l -> l.collectable(owner, now, olderThan, includeKept)).orElse(false);
    }

    /**
     * The dirs of {@code listing} (the output of {@link #listScript}) that gc removes: each one a
     * private dir's own name right in {@code base} ({@code airlock-} and ten letters or digits, as
     * mktemp makes it), never {@code own}, and {@link #collectable}. A name holding a newline or a
     * tab (which the glob matches) would otherwise start a line of its own naming any path.
     */
    static List<Found> toCollect(byte[] listing, String base, String own, String owner, Instant now, Duration olderThan,
                                 boolean includeKept) {
        List<Found> out = new ArrayList<>();
        for (Found f : parse(listing)) {
            if (f.dir().startsWith(base + "/") && PRIVATE_DIR.matcher(f.dir().substring(base.length() + 1)).matches()
                    && !f.dir().equals(own) && collectable(f, owner, now, olderThan, includeKept)) {
                out.add(f);
            }
        }
        return out;
    }

    /** The CLI's gc: logs in with {@code settings}, removes what dead environments of this owner left next to its own private dir. */
    static List<String> gc(Settings settings, Duration olderThan, boolean includeKept) {
        try (Environment env = Environments.open(settings)) {
            SshBackend ssh = SshBackend.of(env);
            String own = ssh.privateDir();
            String base = own.substring(0, own.lastIndexOf('/'));
            List<String> removed = new ArrayList<>();
            Instant now = Instant.now();
            String owner = ResourceLabels.currentOwner();
            for (Found f : toCollect(ssh.raw(listScript(base)).stdout(), base, own, owner, now, olderThan, includeKept)) {
                RawResult r = ssh.raw(removeScript(f.dir()));
                if (r.exit() != 0) {
                    throw new BackendException("gc could not remove " + f.dir() + " on " + ssh.destination() + ": " + r.stderrLine());
                }
                removed.add(ssh.destination() + ":" + f.dir());
            }
            return removed;
        } catch (IOException e) {
            throw new BackendException("gc on the ssh host failed: " + e.getMessage());
        }
    }
}
