package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.Services;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Under bubblewrap {@code /proc/sys} is read-only for every command. Bwrap covers it only where it
 * could write it itself, and the kernel lets a process whose uid is root of the user namespace that
 * owns a network namespace write that namespace's {@code net.*} sysctls: with the network on that is
 * the host's network, so a command run as root could retune it. The attempt writes back the value it
 * read, so the host is unchanged even where the write would get through.
 */
class ProcSysReadOnlyTest {

    @Test
    void aRootCommandCannotWriteTheNetworksSysctls() {
        BubblewrapRequirement.require();
        Services.require(Bubblewrap.runsAsRoot(), "the net sysctls are writable only by a uid mapped to root; this JVM is not root");
        try (Environment env = new LocalProvider().open(OpenContext.of(Settings.of("airlock.container", "no",
                "airlock.local.isolation", "bwrap", "airlock.local.workdir", "none", "airlock.network", "on")))) {
            ExecResult r = env.exec(ExecRequest.of("f=/proc/sys/net/ipv4/conf/all/route_localnet; v=$(cat $f) && echo \"$v\" >$f && echo written"));
            String said = r.stdout().text() + r.stderr().text();
            assertTrue(r.exitCode() != 0 && !said.contains("written") && said.contains("Read-only file system"),
                    "a root command wrote the host's net sysctls: " + said);
        }
    }
}
