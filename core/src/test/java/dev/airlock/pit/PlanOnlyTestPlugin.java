package dev.airlock.pit;

import org.junit.platform.engine.Filter;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.TagFilter;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.pitest.classinfo.ClassByteArraySource;
import org.pitest.help.PitHelpError;
import org.pitest.testapi.Configuration;
import org.pitest.testapi.Description;
import org.pitest.testapi.ResultCollector;
import org.pitest.testapi.TestGroupConfig;
import org.pitest.testapi.TestPluginFactory;
import org.pitest.testapi.TestSuiteFinder;
import org.pitest.testapi.TestUnit;
import org.pitest.testapi.TestUnitExecutionListener;
import org.pitest.testapi.TestUnitFinder;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * A PIT test plugin for the JUnit Platform that finds a class's tests from the launcher's test plan,
 * without running them, and runs a test only when PIT runs it.
 *
 * <p>Why: pitest-junit5-plugin finds a class's tests by executing the class (JUnit Platform runs
 * what it discovers, and PIT's coverage phase saves a run that way). A mutation minion finds its
 * tests the same way whenever it starts, so each minion first runs every test class its mutants
 * need: for the exec core about 40 s, nearly the whole suite, paid again after every mutant that
 * times out (PIT replaces a timed-out minion). That, not the mutants, was most of PIT's time.
 *
 * <p>Ranked before the junit5 plugin, which stays on PIT's class path (PIT checks that JUnit 5 tests
 * have a plugin by that plugin's class name). Found by PIT's minions through {@code ServiceLoader}
 * on the test class path; nothing else loads it.
 */
public final class PlanOnlyTestPlugin implements TestPluginFactory {

    @Override
    public Configuration createTestFrameworkConfiguration(TestGroupConfig groups, ClassByteArraySource source,
                                                          Collection<String> excludedRunners,
                                                          Collection<String> includedTestMethods) {
        // As the junit5 plugin does: PIT runs one test at a time and maps coverage to it.
        System.setProperty("junit.jupiter.execution.parallel.enabled", "false");
        return new PlanOnly(groups, includedTestMethods);
    }

    @Override
    public String name() {
        return "junit-platform-plan";
    }

    @Override
    public String description() {
        return "JUnit Platform tests found from the test plan, run only when PIT runs them";
    }

    private static final class PlanOnly implements Configuration {
        private final TestGroupConfig groups;
        private final Collection<String> includedTestMethods;

        PlanOnly(TestGroupConfig groups, Collection<String> includedTestMethods) {
            this.groups = groups;
            this.includedTestMethods = includedTestMethods;
        }

        @Override
        public int priority() {
            return DEFAULT_PRIORITY - 1; // before the junit5 plugin
        }

        @Override
        public TestUnitFinder testUnitFinder() {
            return new PlanFinder(LauncherFactory.create(), filters(groups), includedTestMethods);
        }

        @Override
        public TestSuiteFinder testSuiteFinder() {
            return c -> List.of();
        }

        @Override
        public Optional<PitHelpError> verifyEnvironment() {
            return Optional.empty();
        }
    }

    private static Filter<?>[] filters(TestGroupConfig groups) {
        List<Filter<?>> filters = new ArrayList<>();
        List<String> excluded = nonEmpty(groups.getExcludedGroups());
        if (!excluded.isEmpty()) {
            filters.add(TagFilter.excludeTags(excluded));
        }
        List<String> included = nonEmpty(groups.getIncludedGroups());
        if (!included.isEmpty()) {
            filters.add(TagFilter.includeTags(included));
        }
        return filters.toArray(Filter<?>[]::new);
    }

    private static List<String> nonEmpty(List<String> names) {
        return names.stream().filter(n -> !n.isEmpty()).toList();
    }

    /** A class's tests from the test plan: one unit per test, nothing run. */
    static final class PlanFinder implements TestUnitFinder {
        private final Launcher launcher;
        private final Filter<?>[] filters;
        private final Collection<String> includedTestMethods;

        PlanFinder(Launcher launcher, Filter<?>[] filters, Collection<String> includedTestMethods) {
            this.launcher = launcher;
            this.filters = filters;
            this.includedTestMethods = includedTestMethods;
        }

        @Override
        public List<TestUnit> findTestUnits(Class<?> testClass, TestUnitExecutionListener ignored) {
            if (testClass.getEnclosingClass() != null) {
                return List.of(); // nested classes are found through the class enclosing them
            }
            TestPlan plan = launcher.discover(LauncherDiscoveryRequestBuilder.request()
                    .selectors(DiscoverySelectors.selectClass(testClass.getName()))
                    .filters(filters)
                    .build());
            List<TestUnit> units = new ArrayList<>();
            for (TestIdentifier root : plan.getRoots()) {
                collect(plan, root, testClass, units);
            }
            return units;
        }

        private void collect(TestPlan plan, TestIdentifier node, Class<?> testClass, List<TestUnit> units) {
            var children = plan.getChildren(node);
            // A test, or a method whose tests exist only once it runs (parameterized, factories, templates)
            boolean runnable = node.isTest() || (children.isEmpty() && node.getSource().orElse(null) instanceof MethodSource);
            if (runnable) {
                if (included(node)) {
                    units.add(new PlannedTest(launcher, testClass, node.getUniqueId()));
                }
                return;
            }
            for (TestIdentifier child : children) {
                collect(plan, child, testClass, units);
            }
        }

        private boolean included(TestIdentifier node) {
            return includedTestMethods == null || includedTestMethods.isEmpty()
                    || node.getSource().orElse(null) instanceof MethodSource m
                    && includedTestMethods.contains(m.getMethodName());
        }
    }

    /** One test (or one method's tests), run by its unique id when PIT runs it. */
    static final class PlannedTest implements TestUnit {
        private final Launcher launcher;
        private final Class<?> testClass;
        private final String uniqueId;

        PlannedTest(Launcher launcher, Class<?> testClass, String uniqueId) {
            this.launcher = launcher;
            this.testClass = testClass;
            this.uniqueId = uniqueId;
        }

        @Override
        public Description getDescription() {
            return new Description(uniqueId, testClass);
        }

        @Override
        public void execute(ResultCollector results) {
            launcher.execute(LauncherDiscoveryRequestBuilder.request()
                    .selectors(DiscoverySelectors.selectUniqueId(uniqueId))
                    .build(), new Reporter(results, testClass));
        }

        @Override
        public String toString() {
            return "PlannedTest[" + uniqueId + "]";
        }
    }

    /** What the platform says of each test, told to PIT; a failing container fails its unit. */
    private record Reporter(ResultCollector results, Class<?> testClass) implements TestExecutionListener {
        @Override
        public void executionSkipped(TestIdentifier id, String reason) {
            if (id.isTest()) {
                results.notifySkipped(describe(id));
            }
        }

        @Override
        public void executionStarted(TestIdentifier id) {
            if (id.isTest()) {
                results.notifyStart(describe(id));
            }
        }

        @Override
        public void executionFinished(TestIdentifier id, TestExecutionResult result) {
            Optional<Throwable> failure = result.getStatus() == TestExecutionResult.Status.FAILED
                    ? Optional.of(result.getThrowable().orElseGet(() -> new AssertionError(id.getUniqueId() + " failed")))
                    : Optional.empty();
            if (failure.isPresent()) {
                // a test, or a container whose set-up or tear-down failed (its tests never ran)
                results.notifyEnd(describe(id), failure.get());
            } else if (id.isTest()) {
                results.notifyEnd(describe(id)); // passed, or aborted by an assumption
            }
        }

        private Description describe(TestIdentifier id) {
            return new Description(id.getUniqueId(), testClass);
        }
    }
}
