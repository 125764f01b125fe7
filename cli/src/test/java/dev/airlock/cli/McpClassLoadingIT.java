package dev.airlock.cli;

import org.junit.jupiter.api.Test;

import static dev.airlock.cli.Airlock.airlock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The MCP SDK (and reactor, Jackson 3) is in the jar but loads only for {@code airlock mcp}: other commands start as fast as before. */
class McpClassLoadingIT {

    @Test
    void otherCommandsLoadNoMcpClass() {
        Airlock.Result r = airlock("backends").env("AIRLOCK_JAVA_OPTS", "-verbose:class").run();

        assertEquals(0, r.exit(), r::toString);
        String loaded = r.out();
        assertTrue(loaded.contains("dev.airlock.cli.BackendsCommand"), "-verbose:class lists the classes loaded");
        for (String pkg : new String[] {"io.modelcontextprotocol.", "reactor.core.", "tools.jackson.", "dev.airlock.tools."}) {
            assertTrue(loaded.lines().noneMatch(l -> l.contains("[class,load] " + pkg)), () -> "backends loaded " + pkg + "* classes");
        }
    }
}
