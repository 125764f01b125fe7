package dev.airlock.ssh;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A host where the probe takes longer than a kill step's 2 s answer bound (here its private dir's
 * base is a shell expression that sleeps 3 s). The probe runs once, through the control shell,
 * within the open's deadline: one private dir is made, and close leaves none. It once gave up on
 * the control shell after 2 s and ran the probe again through a login of its own: two dirs, and
 * the first, never labelled, stayed on the host where gc does not look.
 */
class SshSlowProbeTest {

    private static List<String> privateDirs(Path base) throws Exception {
        try (Stream<Path> s = Files.list(base)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("airlock-")).sorted().collect(Collectors.toList());
        }
    }

    @Test
    void aProbeSlowerThanAKillStepRunsOnceAndLeavesNothingAtClose() throws Exception {
        try (SshdServer server = SshdServer.start()) {
            Path base = Files.createDirectories(server.dir.resolve("slow-base"));
            String slowBase = "$(sleep 3; echo " + base + ")";
            try (Environment env = Environments.open(server.settings("airlock.private-dir.base", slowBase))) {
                assertEquals(0, env.exec(ExecRequest.of("true")).exitCode());
                assertEquals(1, privateDirs(base).size(), "private dirs after open: " + privateDirs(base));
            }
            assertEquals(List.of(), privateDirs(base), "left on the host after close");
        }
    }
}
