package dev.airlock.safety;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One table per class of spelling that got past the guard (issue 31), each with adversarial rows
 * (expected {@code ask}, {@code deny}, or {@code ask|deny}: either, never allow) and ordinary rows
 * ({@code allow}), plus a table of ordinary work in the workdir that must all be allowed.
 */
class GuardClassesTableTest {
    static final List<String> CLASSES = List.of("unknown-writers", "swallowed-options", "command-text",
            "renamed-commands", "computed-paths", "links-mounts-proc");

    record Row(String table, String expected, String command) {
        boolean passes(String verdict) {
            return Arrays.asList(expected.split("\\|")).contains(verdict);
        }

        boolean adversarial() {
            return !expected.equals("allow");
        }
    }

    static List<Row> rows(String table) {
        List<Row> out = new ArrayList<>();
        for (String line : GuardTables.lines("classes/" + table + ".tsv")) {
            int tab = line.indexOf('\t');
            out.add(new Row(table, line.substring(0, tab), GuardTables.decode(line.substring(tab + 1))));
        }
        return out;
    }

    static Stream<Arguments> allRows() {
        return CLASSES.stream().flatMap(c -> rows(c).stream()).map(r -> Arguments.of(r.table, r.expected, r.command));
    }

    static Stream<String> ordinaryWork() {
        return GuardTables.lines("classes/ordinary-workdir.txt").stream().map(GuardTables::decode);
    }

    @ParameterizedTest(name = "{0}: {1}: {2}")
    @MethodSource("allRows")
    void rowGetsItsVerdict(String table, String expected, String command) {
        Row r = new Row(table, expected, command);
        String got = GuardTables.verdict(command);
        assertTrue(r.passes(got), () -> table + ": expected " + expected + ", got " + got + " for: " + command);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("ordinaryWork")
    void ordinaryWorkIsAllowed(String command) {
        assertEquals("allow", GuardTables.verdict(command), () -> "command: " + command);
    }

    @Test
    void tablesHaveBothKindsOfRow() {
        for (String c : CLASSES) {
            List<Row> rs = rows(c);
            assertTrue(rs.stream().filter(Row::adversarial).count() >= 10, c + ": at least 10 adversarial rows");
            assertTrue(rs.stream().filter(r -> !r.adversarial()).count() >= 5, c + ": at least 5 ordinary rows");
        }
        long ordinary = CLASSES.stream().flatMap(c -> rows(c).stream()).filter(r -> !r.adversarial()).count()
                + ordinaryWork().count();
        assertTrue(ordinary >= 80, "at least 80 ordinary commands, got " + ordinary);
    }

    /** One line per class in the build log: adversarial rows missed, ordinary rows stopped. */
    @Test
    void countsPerClass() {
        List<String> bad = new ArrayList<>();
        for (String c : CLASSES) {
            int adv = 0;
            int missed = 0;
            int ord = 0;
            int stopped = 0;
            for (Row r : rows(c)) {
                String got = GuardTables.verdict(r.command);
                if (r.adversarial()) {
                    adv++;
                } else {
                    ord++;
                }
                if (!r.passes(got)) {
                    if (r.adversarial()) {
                        missed++;
                    } else {
                        stopped++;
                    }
                    bad.add(c + ": expected " + r.expected + ", got " + got + ": " + r.command.replace('\n', ' '));
                }
            }
            System.out.println("guard class " + c + ": adversarial " + (adv - missed) + "/" + adv + " green, ordinary "
                    + (ord - stopped) + "/" + ord + " allowed");
        }
        List<String> work = ordinaryWork().toList();
        List<String> stopped = work.stream().filter(w -> !GuardTables.verdict(w).equals("allow")).toList();
        System.out.println("guard ordinary workdir: " + (work.size() - stopped.size()) + "/" + work.size() + " allowed");
        stopped.forEach(s -> bad.add("ordinary-workdir: got " + GuardTables.verdict(s) + ": " + s));
        bad.forEach(b -> System.out.println("  red: " + b));
        assertEquals(List.of(), bad);
    }
}
