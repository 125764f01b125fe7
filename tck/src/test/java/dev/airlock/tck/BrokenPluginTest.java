package dev.airlock.tck;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherConfig;
import org.junit.platform.launcher.core.LauncherFactory;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectNestedClass;
import static org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder.request;

/**
 * The kit judges a real plugin (issue 13): {@link HostPlugin} run through the kit's process-tree
 * group twice, once as written right and once without {@code setsid}. The right one passes; the
 * broken one fails (no case hangs the run) and every failure names the promise it broke.
 */
class BrokenPluginTest {
    @BeforeAll
    static void makeBase() throws IOException {
        HostPluginKits.start("airlock-kit-plugin-");
    }

    @AfterAll
    static void cleanUp() throws IOException {
        HostPluginKits.finish(); // what the broken plugin's kill cases left running, and the base
    }

    /** Group > case -> failure message, for some nested groups of a kit subclass. */
    private static Map<String, String> runGroups(Class<?> kit, Map<String, String> passed, String... groups) {
        return runGroups(kit, passed, new TreeMap<>(), groups);
    }

    /** As above, and each failed case's own promise (its {@link Promise}) into {@code promises}, by the same key. */
    private static Map<String, String> runGroups(Class<?> kit, Map<String, String> passed, Map<String, String> promises,
                                                 String... groups) {
        Map<String, String> failed = new TreeMap<>();
        String before = System.getProperty(KitDeadline.PROPERTY);
        System.setProperty(KitDeadline.PROPERTY, "60");
        try {
            LauncherFactory.create(LauncherConfig.builder().enableTestExecutionListenerAutoRegistration(false).build())
                    .execute(request().selectors(Stream.of(groups).map(g -> selectNestedClass(java.util.List.of(kit), nested(g))).toList())
                            .build(),
                            new TestExecutionListener() {
                                private TestPlan plan;

                                @Override
                                public void testPlanExecutionStarted(TestPlan testPlan) {
                                    plan = testPlan;
                                }

                                @Override
                                public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                                    if (!id.isTest()) {
                                        return;
                                    }
                                    String name = plan.getParent(id).map(TestIdentifier::getDisplayName).orElse("?")
                                            + " > " + id.getDisplayName();
                                    if (result.getStatus() == TestExecutionResult.Status.SUCCESSFUL) {
                                        passed.put(name, "");
                                    } else if (result.getStatus() == TestExecutionResult.Status.FAILED) {
                                        failed.put(name, result.getThrowable().map(Throwable::getMessage).orElse("(no message)"));
                                        id.getSource().filter(MethodSource.class::isInstance)
                                                .map(src -> ((MethodSource) src).getJavaMethod().getAnnotation(Promise.class))
                                                .ifPresent(p -> promises.put(name, p.value()));
                                    }
                                }
                            });
        } finally {
            if (before == null) {
                System.clearProperty(KitDeadline.PROPERTY);
            } else {
                System.setProperty(KitDeadline.PROPERTY, before);
            }
        }
        return failed;
    }

    private static Class<?> nested(String group) {
        for (Class<?> c : EnvironmentCompatibilityKit.class.getDeclaredClasses()) {
            if (c.getSimpleName().equals(group)) {
                return c;
            }
        }
        throw new AssertionError("the kit has no group " + group);
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES) // the guard, should a case hang after all
    void aPluginWithoutSetsidFailsTheKitNamingTheBrokenPromise() {
        Map<String, String> passed = new TreeMap<>();
        Map<String, String> promises = new TreeMap<>();
        long began = System.nanoTime();
        // The groups whose promises lean on setsid: the whole kit found its failures in these two only,
        // and took 70 s where these take a third of it.
        Map<String, String> failed = runGroups(HostPluginKits.WithoutSetsid.class, passed, promises, "TimeoutsAndCancel", "Stdin");
        System.out.println("[BrokenPluginTest] a plugin without setsid: " + failed.size() + " failed, " + passed.size() + " passed, in "
                + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - began) + " s");
        failed.values().forEach(m -> System.out.println("  " + m.lines().findFirst().orElse("")));
        for (String kill : new String[] {"timeoutKillsTheCommandAndEverythingItStarted()", "noProcessOfATimedOutExecOutlivesItsResult()",
                "cancelKillsTheCommandAndEverythingItStarted()", "interruptingTheCallerCancels()"}) {
            String why = failed.get("TimeoutsAndCancel > " + kill);
            assertTrue(why != null, kill + " passed for a plugin whose kill cannot reach the tree; failed: " + failed.keySet());
            assertTrue(why.startsWith("[airlock-tck] TimeoutsAndCancel > " + kill + ": the backend broke the promise '"
                    + promises.get("TimeoutsAndCancel > " + kill) + "': "), why);
            assertTrue(promises.get("TimeoutsAndCancel > " + kill).contains("setsid"), "a kill case's promise says what to fix: " + why);
        }
        // A payload that breaks is killed through the group too: without setsid its first part runs as if whole.
        assertTrue(failed.values().stream().anyMatch(m -> m.startsWith("[airlock-tck] Stdin > ")), "no Stdin case failed: " + failed.keySet());
        // Each failure quotes the promise of its own case (not its group's): a cancel and a timeout say different things.
        for (Map.Entry<String, String> f : failed.entrySet()) {
            String own = promises.get(f.getKey());
            assertTrue(own != null && !own.isBlank(), "a failed case without its own promise: " + f);
            assertTrue(f.getValue().contains(": the backend broke the promise '" + own + "': "),
                    "a failure that does not quote its case's own promise '" + own + "': " + f);
            assertFalse(f.getValue().contains("did not finish within"), "a case hung instead of failing: " + f);
        }
        assertTrue(new java.util.HashSet<>(promises.values()).size() >= 4,
                "the failed cases quote one promise between them: " + promises);
        // The kill cases failed, so the plugin left their TERM-ignoring trees running: the kit reaped them.
        assertEquals(List.of(), HostPluginKits.running("sleep\0" + "600\0"), "the kit left the failed cases' process trees running");
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void theSamePluginWithSetsidPassesTheGroups() {
        Map<String, String> passed = new TreeMap<>();
        Map<String, String> failed = runGroups(HostPluginKits.WithSetsid.class, passed, "TimeoutsAndCancel", "StagedStdin", "LauncherRecord",
                "NetworkPolicy", "Snapshots");
        assertEquals(Map.of(), failed, "the plugin written right failed the kit");
        assertTrue(passed.keySet().containsAll(java.util.List.of("StagedStdin > aFailedRedirectIsAStagingException()",
                "TimeoutsAndCancel > cancelWhileHeldInNewNeverStagesOrRuns()",
                "LauncherRecord > outputBeforeTheRecordIsNotTheCommands()",
                // a plugin that declares no networkModes is refused off (and allowlist) at open by the core
                "NetworkPolicy > anUndeclaredModeIsRefusedAtOpen()",
                // a plugin that says nothing of snapshots has snapshot() refused by the core in one line
                "Snapshots > anUnsupportedSnapshotIsOneLine()")), "the groups ran: " + passed.keySet());
    }
}
