package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The environment's own temp dir, which bubblewrap binds at {@code /tmp} at every launch, lies in
 * the private dir commands can write. A command that renames it away and leaves a link to a host
 * directory in its place must not get that directory as the next command's writable {@code /tmp}.
 */
class OwnTmpPinnedTest {
    @TempDir
    Path dir;

    @Test
    void aCommandCannotSwapTheSourceOfTmpForAHostDirectory() throws IOException {
        BubblewrapRequirement.require();
        Path work = Files.createDirectories(dir.resolve("work")).toRealPath();
        Path hostDir = Files.createDirectories(dir.resolve("host-only")).toRealPath();
        try (Environment env = new LocalProvider().open(OpenContext.of(Settings.of("airlock.container", "no",
                "airlock.local.isolation", "bwrap", "airlock.local.workdir", work.toString())))) {
            String own = env.exec("d=${TMPDIR%/*}; [ -d \"$d/sandbox-tmp\" ] && printf %s \"$d\"").stdout().text();
            if (own.isEmpty()) {
                own = env.exec("for d in /tmp/airlock-*; do [ -d \"$d/sandbox-tmp\" ] && printf %s \"$d\"; done").stdout().text();
            }
            assertTrue(!own.isEmpty(), "the private dir was not found from inside the sandbox");
            ExecResult swap = env.exec("mv " + own + "/sandbox-tmp " + own + "/gone && ln -s " + hostDir + " "
                    + own + "/sandbox-tmp && echo swapped");
            assertFalse(swap.stdout().text().contains("swapped"), "the source of /tmp was renamed away: " + swap.stderr().text());
            env.exec("echo escaped > /tmp/probe");
            assertFalse(Files.exists(hostDir.resolve("probe")), "a command wrote into a host directory through /tmp");
            assertEquals("escaped\n", env.exec("cat /tmp/probe").stdout().text());
        }
    }
}
