package dev.airlock.tck;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherConfig;
import org.junit.platform.launcher.core.LauncherFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder.request;

/**
 * A plugin author runs one group or one case of the kit by a system property, a name the kit does
 * not have fails instead of running nothing, and fail-fast stops at the first failure.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class KitSelectionTest {
    @BeforeAll
    static void makeBase() throws IOException {
        HostPluginKits.start("airlock-kit-select-");
    }

    @AfterAll
    static void cleanUp() throws IOException {
        HostPluginKits.finish(); // what the broken plugin's kill cases left running, and the base
    }

    /** What one kit run did: passed and failed cases ("Group#case"), skip reasons, and containers that failed. */
    private record Run(List<String> passed, Map<String, String> failed, List<String> skipped, List<String> brokenContainers) {
    }

    private static Run run(Class<?> kit, String selection, boolean failFast) {
        Run r = new Run(new ArrayList<>(), new TreeMap<>(), new ArrayList<>(), new ArrayList<>());
        Map<String, String> props = Map.of(KitSelection.PROPERTY, selection, KitSelection.FAIL_FAST, Boolean.toString(failFast),
                KitDeadline.PROPERTY, "60");
        Map<String, String> before = new TreeMap<>();
        props.forEach((k, v) -> {
            before.put(k, System.getProperty(k));
            System.setProperty(k, v);
        });
        try {
            LauncherFactory.create(LauncherConfig.builder().enableTestExecutionListenerAutoRegistration(false).build())
                    .execute(request().selectors(selectClass(kit)).build(), new TestExecutionListener() {
                        /** "Group#method" for a case (every invocation of a parameterized one alike), else the display name. */
                        private String name(TestIdentifier id) {
                            return id.getSource().filter(MethodSource.class::isInstance).map(MethodSource.class::cast)
                                    .map(m -> m.getClassName().substring(m.getClassName().lastIndexOf('$') + 1) + "#" + m.getMethodName())
                                    .orElse(id.getDisplayName());
                        }

                        @Override
                        public void executionSkipped(TestIdentifier id, String reason) {
                            r.skipped().add(name(id) + ": " + reason);
                        }

                        @Override
                        public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                            boolean ok = result.getStatus() == TestExecutionResult.Status.SUCCESSFUL;
                            String why = result.getThrowable().map(Throwable::getMessage).orElse("(no message)");
                            if (id.isTest()) {
                                if (ok) {
                                    r.passed().add(name(id));
                                } else {
                                    r.failed().put(name(id), why);
                                }
                            } else if (!ok) {
                                r.brokenContainers().add(id.getDisplayName() + ": " + why);
                            }
                        }
                    });
        } finally {
            before.forEach((k, v) -> {
                if (v == null) {
                    System.clearProperty(k);
                } else {
                    System.setProperty(k, v);
                }
            });
        }
        return r;
    }

    @Test
    void aGroupAndACaseOfAnotherRunAndNothingElse() {
        Run r = run(HostPluginKits.WithSetsid.class, "Errors, Exec#exitCodeIsTheCommands", false);
        assertEquals(Map.of(), r.failed(), "cases failed");
        assertEquals(List.of(), r.brokenContainers());
        assertTrue(r.passed().containsAll(List.of("Errors#nulInTheCommandIsRejected", "Errors#invalidEnvNamesAreRejected",
                "Exec#exitCodeIsTheCommands")), "the selection did not run: " + r.passed());
        for (String p : r.passed()) {
            assertTrue(p.startsWith("Errors#") || p.equals("Exec#exitCodeIsTheCommands"), "ran a case not selected: " + p);
        }
        assertTrue(r.skipped().contains("Files: not selected by airlock.kit=Errors, Exec#exitCodeIsTheCommands"),
                "the Files group was not skipped as unselected: " + r.skipped());
        assertTrue(r.skipped().stream().anyMatch(s -> s.startsWith("Exec#") && s.contains(": not selected by airlock.kit=")),
                "the Exec group's other cases were not skipped as unselected: " + r.skipped());
    }

    @Test
    void aNameTheKitDoesNotHaveFailsTheRunNamingWhatItHas() {
        Run r = run(HostPluginKits.WithSetsid.class, "Fils,Exec#noSuchCase", false);
        assertEquals(List.of(), r.passed(), "a misspelt selection ran cases");
        String broken = String.join("\n", r.brokenContainers());
        assertTrue(broken.contains("no group 'Fils' (groups: ") && broken.contains("Files"), broken);
        assertTrue(broken.contains("no case 'noSuchCase' in Exec (cases: ") && broken.contains("exitCodeIsTheCommands"), broken);
    }

    @Test
    void failFastSkipsEveryCaseAfterTheFirstFailure() {
        // Without setsid both kill cases fail; fail-fast runs the first and skips the second.
        Run r = run(HostPluginKits.WithoutSetsid.class, "TimeoutsAndCancel#timeoutKillsTheCommandAndEverythingItStarted,"
                + "TimeoutsAndCancel#cancelKillsTheCommandAndEverythingItStarted", true);
        assertEquals(1, r.failed().size(), "fail-fast ran past the first failure: " + r.failed().keySet());
        String first = r.failed().keySet().iterator().next();
        assertTrue(r.skipped().stream().anyMatch(s -> s.contains("skipped after the first failure, " + first)),
                "no case was skipped naming the first failure " + first + ": " + r.skipped());
    }
}
