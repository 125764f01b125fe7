package dev.airlock.containment;

import dev.airlock.BackendException;
import dev.airlock.shell.Shell;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one POSIX {@code sh} script that learns a target at open, and creates the environment's
 * private 0700 dir ({@code run/} for staging, {@code tmp/} for the children's TMPDIR) in the
 * same round trip. Output is {@code key=value} records separated by NUL, so any value survives.
 */
public final class TargetProbe {
    private TargetProbe() {
    }

    /**
     * @param privateBase a shell expression for the directory the private dir is made in
     *                    ({@code "${TMPDIR:-/tmp}"} by default), or a path
     */
    public static String script(String privateBase, boolean quoteBase) {
        String base = quoteBase ? Shell.quote(privateBase) : "\"" + privateBase + "\"";
        return String.join("\n",
                "umask 077",
                "p() { printf '%s=%s\\0' \"$1\" \"$2\"; }",
                "b=" + base,
                "[ -d \"$b\" ] || mkdir -p -- \"$b\" 2>/dev/null",
                "d=$(mktemp -d \"$b/airlock-XXXXXXXXXX\") || { echo \"cannot create a private dir in $b\" >&2; exit 90; }",
                "mkdir -- \"$d/run\" \"$d/tmp\" || exit 91",
                "p private \"$d\"",
                // One process per answer at most: each one is a fork and exec on the target at every open.
                // uname prints the system's name (never with a space) before the node name.
                "n=$(uname -sn 2>/dev/null)",
                "p os \"${n%% *}\"",
                "case $n in *' '*) p hostname \"${n#* }\" ;; *) p hostname '' ;; esac",
                "nl='", "'", // a newline
                "uid=$(id -u)",
                "p uid \"$uid\"",
                // As $(id -un || id -u) did: a uid without a name gets what id -un printed (coreutils: the
                // number), a newline and the number.
                "if u=$(id -un 2>/dev/null); then p user \"$u\"; else p user \"${u:+$u$nl}$uid\"; fi",
                // The passwd entry's sixth field, of its first line (as head -n 1 | cut -d: -f6).
                "w=$(getent passwd \"$uid\" 2>/dev/null || grep \"^$u:\" /etc/passwd 2>/dev/null)",
                "w=${w%%\"$nl\"*}",
                "case $w in *:*) for _ in 1 2 3 4 5; do case $w in *:*) w=${w#*:} ;; *) w= ;; esac; done; w=${w%%:*} ;; esac",
                "p passwd_home \"$w\"",
                "p home \"$HOME\"",
                "p tmpdir \"${TMPDIR:-}\"",
                "p airlock_home \"${AIRLOCK_HOME:-}\"",
                "p bash \"$(command -v bash 2>/dev/null)\"",
                "p path \"$PATH\"",
                "[ -e /.dockerenv ] && p dockerenv 1",
                "[ -e /run/.containerenv ] && p containerenv 1",
                "[ -n \"${KUBERNETES_SERVICE_HOST:-}\" ] && p k8s 1",
                "p cgroup1 \"$(head -c 4096 /proc/1/cgroup 2>/dev/null)\"",
                // The first mount on / (as awk '$5 == \"/\" { print; exit }'), read by the shell itself.
                "r=",
                "set -f",
                "if [ -r /proc/self/mountinfo ]; then",
                "  while IFS= read -r l || [ -n \"$l\" ]; do",
                "    set -- $l",
                "    if [ \"${5-}\" = / ]; then r=$l; break; fi",
                "  done </proc/self/mountinfo",
                "fi",
                "p rootmount \"$r\"",
                "exit 0",
                "");
    }

    /** Parses the probe's NUL-separated records. */
    public static Map<String, String> parse(byte[] out) {
        Map<String, String> facts = new LinkedHashMap<>();
        String s = new String(out, StandardCharsets.UTF_8);
        for (String rec : s.split("\0")) {
            int eq = rec.indexOf('=');
            if (eq > 0) {
                facts.put(rec.substring(0, eq), rec.substring(eq + 1));
            }
        }
        if (!facts.containsKey("private") || !facts.containsKey("uid")) {
            throw new BackendException("the target probe returned no usable facts; is POSIX sh available on the target?");
        }
        return facts;
    }
}
