package dev.airlock.ssh;

import dev.airlock.spi.ResourceLabels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What gc picks from a real listing ({@link SshLeftovers#listScript} run by this machine's sh, as
 * the host runs it) when a command planted a labelled dir whose name holds a newline: the name
 * {@code airlock-\n.ssh\t9999} lists as a line of its own saying {@code .ssh} is silent for 9999
 * seconds, which gc would {@code rm -rf} from the login directory (the host's ~/.ssh, with its
 * authorized_keys). Nothing is removed here: only the choice is checked.
 */
class SshLeftoversTest {
    @TempDir
    Path base;

    private Path leftover(String name) throws Exception {
        Path d = Files.createDirectories(base.resolve(name));
        StringBuilder sb = new StringBuilder();
        new ResourceLabels(ResourceLabels.currentOwner(), Instant.now().minus(Duration.ofHours(2)), "test", false)
                .asMap("airlock.").forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
        Files.writeString(d.resolve(SshLeftovers.LABELS), sb);
        Path alive = Files.createFile(d.resolve(SshLeftovers.ALIVE));
        Files.setLastModifiedTime(alive, FileTime.from(Instant.now().minus(Duration.ofMinutes(30))));
        return d;
    }

    @Test
    void aDirNameWithANewlineNamesNoPathOutsideTheBase() throws Exception {
        Path dead = leftover("airlock-deadAAAAAA");
        leftover("airlock-\n.ssh\t9999");
        Process p = new ProcessBuilder("sh", "-c", SshLeftovers.listScript(base.toString())).redirectErrorStream(true).start();
        byte[] listing = p.getInputStream().readAllBytes();
        assertEquals(0, p.waitFor(), new String(listing));

        List<String> chosen = SshLeftovers.toCollect(listing, base.toString(), base.resolve("airlock-ownAAAAAAA").toString(),
                ResourceLabels.currentOwner(), Instant.now(), Duration.ofHours(1), false).stream()
                .map(SshLeftovers.Found::dir).toList();

        assertEquals(List.of(dead.toString()), chosen, "gc would remove these (listing: " + new String(listing) + ")");
    }
}
