package dev.airlock.safety;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The command guard against a table of adversarial spellings and a table of ordinary commands. */
class CommandGuardTableTest {

    static Stream<Arguments> adversarial() {
        return GuardTables.lines("adversarial-commands.tsv").stream().map(line -> {
            int tab = line.indexOf('\t');
            return Arguments.of(line.substring(0, tab), GuardTables.decode(line.substring(tab + 1)));
        });
    }

    static Stream<String> ordinary() {
        return GuardTables.lines("ordinary-commands.txt").stream().map(GuardTables::decode);
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("adversarial")
    void adversarialSpellingGetsItsVerdict(String expected, String command) {
        assertEquals(expected, GuardTables.verdict(command), () -> "command: " + command);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("ordinary")
    void ordinaryCommandPasses(String command) {
        assertEquals("allow", GuardTables.verdict(command), () -> "command: " + command);
    }

    @Test
    void tablesAreBigEnough() {
        List<String> adv = GuardTables.lines("adversarial-commands.tsv");
        assertTrue(adv.size() >= 60, "at least 60 adversarial spellings, got " + adv.size());
        assertTrue(adv.stream().filter(l -> !l.startsWith("allow")).count() >= 60);
        assertTrue(GuardTables.lines("ordinary-commands.txt").size() >= 30);
    }
}
