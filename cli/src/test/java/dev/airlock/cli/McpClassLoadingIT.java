package dev.airlock.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static dev.airlock.cli.Airlock.airlock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The MCP SDK (and reactor, Jackson 3) is in the jar but loads only for {@code airlock mcp}: other commands start as fast as before. */
class McpClassLoadingIT {

    @Test
    void otherCommandsLoadNoMcpClass(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("classes.log");
        Airlock.Result r = airlock("backends").env("AIRLOCK_JAVA_OPTS", "-Xlog:class+load=info:file=" + log).run();

        assertEquals(0, r.exit(), r::toString);
        String loaded = Files.readString(log);
        assertTrue(loaded.contains(" dev.airlock.cli.BackendsCommand "), "the log lists the classes loaded");
        for (String pkg : new String[] {"io.modelcontextprotocol.", "reactor.core.", "tools.jackson.", "dev.airlock.tools."}) {
            assertTrue(loaded.lines().noneMatch(l -> l.contains(" " + pkg)), () -> "backends loaded " + pkg + "* classes");
        }
    }
}
