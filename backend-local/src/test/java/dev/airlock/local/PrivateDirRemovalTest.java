package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * What a command leaves in the environment's private dir goes with it at close, whatever modes it
 * set: a user who is not root cannot empty a directory without write or search permission, so
 * {@code chmod 500}, {@code 300} or {@code 000} on a directory there would keep the private dir in
 * the host's temp dir for good. (As root nothing is refused; {@code .ci/as-user} runs this as a user.)
 */
class PrivateDirRemovalTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"none", "bwrap"})
    void directoriesACommandLockedAreRemovedAtClose(String isolation) throws Exception {
        if (isolation.equals("bwrap")) {
            BubblewrapRequirement.require();
        }
        Path work = Files.createDirectories(dir.resolve("work")).toRealPath();
        Path priv;
        try (Environment env = new LocalProvider().open(OpenContext.of(Settings.of("airlock.container", "no",
                "airlock.local.isolation", isolation, "airlock.local.workdir", work.toString())))) {
            priv = Path.of(env.target().privateDir());
            ExecResult r = env.exec("p='" + priv + "' && mkdir -p \"$p/a/b\" \"$p/none\" \"$p/wx\" \"$p/deep/x/y\""
                    + " && touch \"$p/a/b/f\" \"$p/none/f\" \"$p/wx/f\" \"$p/deep/x/y/f\""
                    + " && chmod 500 \"$p/a/b\" && chmod 000 \"$p/none\" && chmod 300 \"$p/wx\" && chmod 000 \"$p/deep/x\" \"$p/deep\""
                    + " && echo locked");
            assertEquals("locked\n", r.stdout().text(), r.stderr().text());
        }
        assertFalse(Files.exists(priv, LinkOption.NOFOLLOW_LINKS), "the private dir " + priv + " outlived close");
    }
}
