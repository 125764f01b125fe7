package dev.airlock.local.safety;

import dev.airlock.AirlockException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.safety.ApprovalChannel;
import dev.airlock.safety.TtyApprovalChannel;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What the CLI does, in a child JVM under a pseudo-terminal: stdin carries the payload, the
 * approval prompt uses /dev/tty. Writes ~/.ssh/config from stdin, then appends to it by command,
 * and records each outcome. Args: AIRLOCK_HOME, approval timeout, result file.
 */
public final class TtyApprovalMain {
    private TtyApprovalMain() {
    }

    public static void main(String[] args) throws Exception {
        byte[] payload = System.in.readAllBytes();
        ApprovalChannel tty = TtyApprovalChannel.ifAvailable()
                .orElseThrow(() -> new IllegalStateException("no controlling terminal"));
        Settings s = Settings.of("airlock.container", "no", "airlock.home-mode", "profile", "airlock.home", args[0],
                "airlock.approvals.timeout", args[1],
                // the guard's prompt, where it is the only net (bubblewrap keeps ~/.ssh read-only whatever it answers)
                "airlock.local.isolation", "none");
        List<String> out = new ArrayList<>();
        try (Environment env = Environments.open(OpenContext.of(s).withApprovalChannel(tty))) {
            try {
                env.files().write("~/.ssh/config", payload);
                out.add("write ok");
            } catch (AirlockException e) {
                out.add("write " + e.getClass().getSimpleName());
            }
            try {
                ExecResult r = env.exec(ExecRequest.builder("mkdir -p ~/.ssh && printf 'Host work\\n' >> ~/.ssh/config").build());
                out.add("exec " + r.exitCode());
            } catch (AirlockException e) {
                out.add("exec " + e.getClass().getSimpleName());
            }
        }
        Files.write(Path.of(args[2]), out);
    }
}
