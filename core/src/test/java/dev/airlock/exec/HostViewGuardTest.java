package dev.airlock.exec;

import dev.airlock.Capabilities;
import dev.airlock.DeniedException;
import dev.airlock.StdinMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A backend whose scripts see this host's files ({@link dev.airlock.spi.Backend#hostView}): the
 * guard resolves a file operation's path in-process, so no resolution script runs before it, and
 * it still judges the place a link leads to.
 */
class HostViewGuardTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();

    private HostBackend open(boolean hostView) {
        Capabilities caps = Capabilities.pipe().withStdinMode(StdinMode.PIPE).withNativeEnv(true);
        var settings = HostBackend.settings(dir, "airlock.home", dir.resolve("airlock-home").toString());
        HostBackend b = hostView
                ? new HostBackend(settings, caps, List.of()) {
                    @Override
                    public Optional<Path> hostView() {
                        return Optional.of(Path.of("").toAbsolutePath()); // where this backend's scripts start
                    }
                }
                : new HostBackend(settings, caps, List.of());
        opened.add(b);
        return b;
    }

    /** The guard's resolution scripts among the core's own scripts this backend ran. */
    private static long resolutionScripts(HostBackend b) {
        return b.scriptTexts.stream().filter(s -> s.contains("canon() {")).count();
    }

    @Test
    void aWriteIsJudgedWithoutAResolutionScript() throws Exception {
        HostBackend b = open(true);
        b.env.files().write(dir + "/a.txt", "judged here".getBytes(StandardCharsets.UTF_8));
        b.env.files().mkdirs(dir + "/made/deeper");
        assertEquals("judged here", Files.readString(dir.resolve("a.txt")));
        assertTrue(Files.isDirectory(dir.resolve("made/deeper")));
        assertEquals(0, resolutionScripts(b), "a resolution script ran: " + b.scriptTexts);

        // the count sees them: without the host view, the same write runs the rules' and the path's scripts
        HostBackend scripted = open(false);
        scripted.env.files().write(dir + "/b.txt", "judged there".getBytes(StandardCharsets.UTF_8));
        assertTrue(resolutionScripts(scripted) >= 1, "no resolution script counted without the host view");
    }

    @Test
    void aLinkToAirlocksOwnStateIsStillDeniedWhereItLeads() throws Exception {
        Path state = Files.createDirectories(dir.resolve("airlock-home"));
        Files.createSymbolicLink(dir.resolve("state-link"), state);
        HostBackend b = open(true);
        DeniedException e = assertThrows(DeniedException.class,
                () -> b.env.files().write(dir + "/state-link/airlock.properties", "x".getBytes(StandardCharsets.UTF_8)));
        assertTrue(e.getMessage().contains(state + "/airlock.properties"), e.getMessage());
        assertFalse(Files.exists(state.resolve("airlock.properties")));
        assertEquals(0, resolutionScripts(b), "a resolution script ran: " + b.scriptTexts);
    }
}
