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

    /** One line a reviewer reads in the build log: how many spellings the guard misses, how many ordinary commands it stops. */
    @Test
    void missesAndFalsePositivesAreCounted() {
        List<Arguments> adv = adversarial().toList();
        List<String> misses = new java.util.ArrayList<>();
        for (Arguments a : adv) {
            String expected = (String) a.get()[0];
            String command = (String) a.get()[1];
            String got = GuardTables.verdict(command);
            if (!expected.equals(got)) {
                misses.add(expected + " -> " + got + ": " + (command.length() > 80 ? command.substring(0, 80) + "..." : command));
            }
        }
        List<String> ordinary = ordinary().toList();
        List<String> falsePositives = ordinary.stream().filter(c -> !GuardTables.verdict(c).equals("allow")).toList();
        System.out.println("command guard: " + adv.size() + " adversarial spellings, " + misses.size() + " misses; "
                + ordinary.size() + " ordinary commands, " + falsePositives.size() + " false positives");
        misses.forEach(m -> System.out.println("  miss: " + m.replace('\n', ' ')));
        falsePositives.forEach(f -> System.out.println("  false positive: " + f));
        assertEquals(List.of(), misses, "adversarial spellings with the wrong verdict");
        assertEquals(List.of(), falsePositives, "ordinary commands the guard stops");
    }
}
