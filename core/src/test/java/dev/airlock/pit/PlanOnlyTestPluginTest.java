package dev.airlock.pit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.pitest.testapi.Configuration;
import org.pitest.testapi.Description;
import org.pitest.testapi.ResultCollector;
import org.pitest.testapi.TestGroupConfig;
import org.pitest.testapi.TestUnit;
import org.pitest.testapi.TestUnitExecutionListener;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The PIT plugin finds tests without running them and tells PIT what each run did. The sample
 * classes below are not named like tests, so only this test runs them (through the plugin).
 */
class PlanOnlyTestPluginTest {

    @BeforeEach
    @AfterEach
    void noSampleHasRun() {
        Samples.RUNS.set(0);
    }

    @Test
    void testsAreFoundWithoutRunningOne() {
        List<TestUnit> units = find(Samples.class);

        assertEquals(0, Samples.RUNS.get(), "finding the tests ran some");
        assertEquals(List.of("failing()", "passing()", "skipped()", "tagged()"), methods(units));
    }

    @Test
    void eachTestRunsAloneAndTellsPitHowItEnded() {
        List<TestUnit> units = find(Samples.class);

        Recorder passing = run(unit(units, "passing()"));
        Recorder failing = run(unit(units, "failing()"));
        Recorder skipped = run(unit(units, "skipped()"));

        assertEquals(3, Samples.RUNS.get(), "one run per test");
        assertEquals(List.of("start passing()", "pass passing()"), passing.events);
        assertEquals(List.of("start failing()", "fail failing(): sample failure"), failing.events);
        // an assumption that fails is not a failure (a skipped test must not kill a mutant)
        assertEquals(List.of("start skipped()", "pass skipped()"), skipped.events);
    }

    @Test
    void aClassWhoseSetUpFailsFailsItsTests() {
        List<TestUnit> units = find(FailingSetUp.class);

        assertEquals(1, units.size());
        Recorder r = run(units.get(0));
        assertTrue(r.events.stream().anyMatch(e -> e.startsWith("fail ") && e.endsWith("set-up failed")), r.events.toString());
    }

    @Test
    void aParameterizedMethodIsOneUnitThatRunsEveryCase() {
        List<TestUnit> units = find(Parameterized.class);

        assertEquals(1, units.size());
        assertEquals(0, Samples.RUNS.get());
        Recorder r = run(units.get(0));
        assertEquals(3, Samples.RUNS.get());
        assertEquals(1, r.events.stream().filter(e -> e.startsWith("fail ")).count(), r.events.toString());
    }

    @Test
    void nestedTestsAreFoundThroughTheirOuterClassOnly() {
        assertEquals(List.of("inner()", "outer()"), methods(find(WithNested.class)));
        assertEquals(List.of(), find(WithNested.Inner.class));
    }

    @Test
    void excludedGroupsAreNotFound() {
        Configuration config = new PlanOnlyTestPlugin().createTestFrameworkConfiguration(
                new TestGroupConfig(List.of("slow"), List.of()), null, List.of(), List.of());

        List<TestUnit> units = config.testUnitFinder().findTestUnits(Samples.class, IGNORE);

        assertEquals(List.of("failing()", "passing()", "skipped()"), methods(units));
    }

    @Test
    void itRanksBeforeTheJunit5Plugin() {
        Configuration config = new PlanOnlyTestPlugin().createTestFrameworkConfiguration(
                TestGroupConfig.emptyConfig(), null, List.of(), List.of());

        assertTrue(config.priority() < Configuration.DEFAULT_PRIORITY);
    }

    private static List<TestUnit> find(Class<?> c) {
        Configuration config = new PlanOnlyTestPlugin().createTestFrameworkConfiguration(
                TestGroupConfig.emptyConfig(), null, List.of(), List.of());
        return config.testUnitFinder().findTestUnits(c, IGNORE);
    }

    private static TestUnit unit(List<TestUnit> units, String method) {
        return units.stream().filter(u -> method(u.getDescription()).equals(method)).findFirst().orElseThrow();
    }

    private static List<String> methods(List<TestUnit> units) {
        return units.stream().map(u -> method(u.getDescription())).sorted().toList();
    }

    /** {@code ...[method:passing()]} to {@code passing()}. */
    private static String method(Description d) {
        String id = d.getName();
        int at = id.lastIndexOf(":");
        return id.substring(at + 1, id.length() - 1);
    }

    private static Recorder run(TestUnit unit) {
        Recorder r = new Recorder();
        unit.execute(r);
        return r;
    }

    private static final TestUnitExecutionListener IGNORE = new TestUnitExecutionListener() {
        @Override
        public void executionStarted(Description description) {
            throw new AssertionError("a test ran while it was being found: " + description);
        }

        @Override
        public void executionFinished(Description description, boolean passed, Throwable error) {
            throw new AssertionError("a test ran while it was being found: " + description);
        }
    };

    private static final class Recorder implements ResultCollector {
        final List<String> events = new ArrayList<>();

        @Override
        public void notifyEnd(Description d, Throwable t) {
            events.add("fail " + method(d) + ": " + t.getMessage());
        }

        @Override
        public void notifyEnd(Description d) {
            events.add("pass " + method(d));
        }

        @Override
        public void notifyStart(Description d) {
            events.add("start " + method(d));
        }

        @Override
        public void notifySkipped(Description d) {
            events.add("skip " + method(d));
        }

        @Override
        public boolean shouldExit() {
            return false;
        }
    }
}

/** Tests PIT would mutate against; run here only through the plugin. */
class Samples {
    static final AtomicInteger RUNS = new AtomicInteger();

    @Test
    void passing() {
        RUNS.incrementAndGet();
    }

    @Test
    void failing() {
        RUNS.incrementAndGet();
        throw new AssertionError("sample failure");
    }

    @Test
    void skipped() {
        RUNS.incrementAndGet();
        assumeTrue(false, "not here");
    }

    @Test
    @Tag("slow")
    void tagged() {
        RUNS.incrementAndGet();
    }
}

class FailingSetUp {
    @BeforeAll
    static void setUp() {
        throw new IllegalStateException("set-up failed");
    }

    @Test
    void neverRuns() {
        Samples.RUNS.incrementAndGet();
    }
}

class Parameterized {
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3})
    void eachCase(int n) {
        Samples.RUNS.incrementAndGet();
        if (n == 2) {
            throw new AssertionError("case 2");
        }
    }
}

class WithNested {
    @Test
    void outer() {
    }

    @Nested
    class Inner {
        @Test
        void inner() {
        }
    }
}
