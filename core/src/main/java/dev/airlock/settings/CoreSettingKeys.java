package dev.airlock.settings;

import java.util.List;

/** The keys the core itself reads, whatever the backend (the first settings table of docs/backends.md). */
public final class CoreSettingKeys {
    /** {@code true}: an unknown {@code airlock.*} key is an error instead of a warning. */
    public static final String STRICT = "airlock.settings.strict";

    public static final List<SettingKey> ALL = List.of(
            SettingKey.of("airlock.backend", "name", "local", "which backend opens environments"),
            SettingKey.of("airlock.network", "on | off | allowlist", "on",
                    "off: commands reach no network, not even the host's loopback; allowlist: only the airlock.network.allow destinations; a mode the backend cannot enforce is refused at open"),
            SettingKey.of("airlock.network.allow.NAME", "host or IPv4 CIDR, then :PORT", "",
                    "with airlock.network=allowlist, a destination commands may reach (10.0.0.0/8, 203.0.113.7:443, registry.npmjs.org); all others are out of reach"),
            SettingKey.of("airlock.ports", "list of ports", "",
                    "ports Environment.ports() may expose, declared at open: docker publishes these at create (other ports are refused there); local and ssh expose any port"),
            SettingKey.of("airlock.snapshot.timeout", "duration", "30m",
                    "how long Environment.snapshot() may take (a commit of gigabytes); past it the backend's call is interrupted and snapshot() fails"),
            SettingKey.of("airlock.cancel", "exec | sandbox", "exec", "a cancel kills this exec's process tree, or stops the sandbox"),
            SettingKey.of("airlock.output.max-bytes", "size", "16m", "capture cap per stream"),
            SettingKey.of("airlock.kill.grace", "duration", "1s", "SIGTERM to the process group, then SIGKILL after this"),
            SettingKey.of("airlock.kill.slack", "duration", "1s", "how long past the grace a stop waits on a backend that does not answer"),
            SettingKey.of("airlock.exec.output-grace", "duration", "2s", "how long a background process may hold the output open before it is killed"),
            SettingKey.of("airlock.stdin.max-staged-bytes", "size", "1g", "largest stdin of unknown length a staging backend accepts"),
            SettingKey.of("airlock.env.strip", "list", "", "more variable names never passed to children"),
            SettingKey.of("airlock.env.pass", "list", "", "secret-looking variables passed to children on purpose"),
            SettingKey.of("airlock.audit.file", "path", "", "append every exec, file change, denial and approval as a JSON line"),
            SettingKey.of("airlock.home", "path", "$AIRLOCK_HOME, else ~/.airlock", "Airlock's state on the target"),
            SettingKey.of("airlock.home-mode", "auto | real | profile", "auto", "the children's HOME"),
            SettingKey.of("airlock.container", "auto | yes | no", "auto", "override container detection on the target"),
            SettingKey.of("airlock.profile", "none | eval", "none", "eval: everything under airlock.run-dir"),
            SettingKey.of("airlock.run-dir", "absolute path", "", "the eval profile's directory"),
            SettingKey.of("airlock.guard", "auto | on | off", "auto", "the command guard"),
            SettingKey.of("airlock.yolo", "boolean", "false", "approve what needs approval; never unlocks hard-deny"),
            SettingKey.of("airlock.approvals.timeout", "duration", "60s", "how long a human channel may take"),
            SettingKey.of("airlock.context", "cron or unset", "", "cron: no human is there"),
            SettingKey.of("airlock.approvals.cron-mode", "deny | allow", "deny", "approvals in cron runs"),
            SettingKey.of("airlock.write.safe-roots", "list", "", "when set, writes outside these roots are denied"),
            SettingKey.of("airlock.private-dir.base", "path on the target", "$TMPDIR, else /tmp", "where each environment's private 0700 dir is made"),
            SettingKey.of("airlock.session.wait", "boolean", "true", "a second exec of a busy session waits; false: it fails at once"),
            SettingKey.of("airlock.session", "name", "", "CLI exec and mcp: run in the named session, kept across invocations"),
            SettingKey.of(STRICT, "boolean", "false", "an unknown airlock.* key is an error, not a warning"));

    private CoreSettingKeys() {
    }
}
