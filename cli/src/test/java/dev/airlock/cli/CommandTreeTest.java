package dev.airlock.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Only the command a line names is built; a line naming none, help, or something unclear gets them all. */
class CommandTreeTest {
    private static final List<String> ALL = List.of("exec", "write", "read", "backends", "up", "url", "down", "gc", "snapshot", "doctor",
            "emulator", "mcp", "session", "help");

    @Test
    void aLineNamingACommandBuildsThatOneAlone() {
        assertEquals(Set.of("exec"), built("exec", "-n", "true"));
        assertEquals(Set.of("exec"), built("--backend", "local", "--config", "/dev/null", "exec", "true"));
        assertEquals(Set.of("read"), built("--set", "exec=1", "--set=read=2", "--debug", "read", "/etc/hostname"));
        assertEquals(Set.of("gc"), built("--backend=docker", "gc"));
    }

    @Test
    void aLineNamingNoneHelpOrSomethingUnclearBuildsEveryCommandInHelpsOrder() {
        for (List<String> line : List.of(List.<String>of(), List.of("--help"), List.of("help", "exec"), List.of("--", "exec"),
                List.of("bogus"), List.of("-hV", "exec"), List.of("--unknown", "exec"), List.of("--backend"))) {
            assertEquals(ALL, List.copyOf(tree(line.toArray(String[]::new)).getSubcommands().keySet()), line.toString());
        }
    }

    @Test
    void theScanFindsTheCommandPicocliParses() {
        CommandLine top = tree();
        assertEquals(Optional.of("exec"), CommandTree.invoked(top.getCommandSpec(), "--set", "a=b", "exec", "--set", "c"));
        assertEquals(Optional.empty(), CommandTree.invoked(top.getCommandSpec(), "--debug"));
    }

    private static Set<String> built(String... args) {
        return tree(args).getSubcommands().keySet();
    }

    private static CommandLine tree(String... args) {
        return CommandTree.of(new AirlockCli(), AirlockCli.COMMANDS, args);
    }
}
