package dev.airlock.local.containment;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Runs the sandbox-undoing attempts from {@link BubblewrapEscapeTest} in a JVM of its own, so the
 * test can start it as an unprivileged user; prints {@code name exit stdout-bytes} per attempt.
 */
public final class EscapeAttemptsMain {
    private EscapeAttemptsMain() {
    }

    /** Each attempt exits 0 only when the escape worked. */
    static Map<String, String> attempts(String marker) {
        String jvm = Long.toString(ProcessHandle.current().pid());
        Map<String, String> a = new LinkedHashMap<>();
        a.put("caps", "grep -E '^Cap(Eff|Prm|Amb)' /proc/self/status | grep -qv '0000000000000000$' && exit 0; exit 1");
        a.put("umount-run", "umount /run && test -S /run/docker.sock");
        a.put("remount-root", "mount -o remount,rw / && printf x > /etc/airlock-escape-" + marker);
        a.put("umount-ssh", "umount ~/.ssh && { mkdir -p ~/.ssh; printf key > ~/.ssh/id_rsa; }");
        a.put("umount-proc", "umount -l /proc && grep -q PATH= /proc/" + jvm + "/environ");
        a.put("mount-proc", "mount -t proc proc /mnt && test -r /mnt/" + jvm + "/environ");
        // a controlling terminal would let TIOCSTI type into the caller's shell
        a.put("terminal", "exec 3</dev/tty");
        return a;
    }

    public static void main(String[] args) {
        Settings s = Settings.of("airlock.container", "no", "airlock.local.isolation", "bwrap", "airlock.local.workdir", "none",
                "airlock.guard", "off");
        try (Environment env = Environments.open(s)) {
            System.out.println("home " + env.target().home());
            for (Map.Entry<String, String> e : attempts(args[0]).entrySet()) {
                ExecResult r = env.exec(ExecRequest.of(e.getValue()));
                System.out.println(e.getKey() + " " + r.exitCode());
            }
        }
    }
}
