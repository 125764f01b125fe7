package dev.airlock.tck;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherConfig;
import org.junit.platform.launcher.core.LauncherFactory;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder.request;

/** A kit case that hangs fails at its own deadline naming its promise, and the rest of the run fails at once; a failure names it too. */
class KitDeadlineTest {
    /** Counted down by the hung case when the deadline interrupts it: that happens on the case's own thread, after the failure is reported. */
    static final CountDownLatch interrupted = new CountDownLatch(1);

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS) // the guard if the deadline did not work
    void aHangFailsAtItsDeadlineNamingThePromiseAndStopsTheRun() throws InterruptedException {
        Map<String, String> failures = new TreeMap<>();
        String before = System.getProperty(KitDeadline.PROPERTY);
        System.setProperty(KitDeadline.PROPERTY, "1");
        try {
            LauncherFactory.create(LauncherConfig.builder().enableTestExecutionListenerAutoRegistration(false).build())
                    .execute(request().selectors(selectClass(BrokenKit.class)).build(), new TestExecutionListener() {
                        @Override
                        public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                            if (id.isTest() && result.getStatus() == TestExecutionResult.Status.FAILED) {
                                failures.put(id.getDisplayName(), result.getThrowable().orElseThrow().getMessage());
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
        assertEquals(2, failures.size(), failures.toString());
        String hang = failures.get("aKillThatNeverEnds()");
        assertTrue(hang.contains("TimeoutsAndCancel > aKillThatNeverEnds() did not finish within 1s: the backend broke the"
                + " promise 'a kill ends the tree (start it under setsid)'"), hang);
        // well short of the case's 60 s sleep: only an interrupt ends it this soon
        assertTrue(interrupted.await(10, TimeUnit.SECONDS), "the hung case was interrupted");
        assertTrue(failures.get("zLater()").contains("not run: TimeoutsAndCancel > aKillThatNeverEnds() did not finish"),
                failures.toString());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aFailureThatDoesNotHangNamesThePromiseToo() {
        Map<String, String> failures = new TreeMap<>();
        Map<String, String> skipped = new TreeMap<>();
        LauncherFactory.create(LauncherConfig.builder().enableTestExecutionListenerAutoRegistration(false).build())
                .execute(request().selectors(selectClass(FailingKit.class)).build(), new TestExecutionListener() {
                    @Override
                    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                        if (id.isTest() && result.getStatus() == TestExecutionResult.Status.FAILED) {
                            failures.put(id.getDisplayName(), result.getThrowable().orElseThrow().getMessage());
                        }
                        if (id.isTest() && result.getStatus() == TestExecutionResult.Status.ABORTED) {
                            skipped.put(id.getDisplayName(), result.getThrowable().orElseThrow().getMessage());
                        }
                    }
                });
        assertEquals(java.util.Set.of("aWrongExitCode()", "aCaseWithoutItsOwnPromise()"), failures.keySet(), failures.toString());
        assertEquals("[airlock-tck] Exec > aWrongExitCode(): the backend broke the promise 'the exit code is the command's"
                + " own (exit N gives N)': exit 1 ==> expected: <0> but was: <1>", failures.get("aWrongExitCode()"));
        assertEquals("[airlock-tck] Exec > aCaseWithoutItsOwnPromise(): the backend broke the promise 'commands run and end"
                + " with their own exit code': exit 2", failures.get("aCaseWithoutItsOwnPromise()"), "the group's, as a fallback");
        assertEquals(Map.of("aSkip()", "not this backend's"), skipped, "a skip stays a skip");
    }

    @ExtendWith(KitDeadline.class)
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    static class FailingKit {
        @Nested
        class Exec {
            @Test
            @Promise("the exit code is the command's own (exit N gives N)")
            void aWrongExitCode() {
                assertEquals(0, 1, "exit 1");
            }

            @Test
            void aCaseWithoutItsOwnPromise() {
                org.junit.jupiter.api.Assertions.fail("exit 2");
            }

            @Test
            void aSkip() {
                org.junit.jupiter.api.Assumptions.abort("not this backend's");
            }
        }
    }

    /** Run by the launcher above only (a static nested class is not picked up by surefire). */
    @ExtendWith(KitDeadline.class)
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    static class BrokenKit {
        @Nested
        @TestInstance(TestInstance.Lifecycle.PER_CLASS)
        @TestMethodOrder(MethodOrderer.MethodName.class)
        class TimeoutsAndCancel {
            @Test
            @Promise("a kill ends the tree (start it under setsid)")
            void aKillThatNeverEnds() {
                try {
                    Thread.sleep(60_000);
                } catch (InterruptedException e) {
                    interrupted.countDown();
                }
            }

            @Test
            void zLater() {
            }
        }
    }
}
