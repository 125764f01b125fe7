package dev.airlock.tck;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.launcher.core.LauncherConfig;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder.request;

/** The one skip-or-fail rule, and the report that carries skip reasons to the build's console. */
class ServicesTest {
    private static final String REASON = "frobnicator is not installed (apt-get install frobnicator)";

    @Test
    void aMissingServiceSkipsWithItsReason() {
        TestAbortedException e = assertThrows(TestAbortedException.class, () -> Services.require(false, REASON, false));
        assertTrue(e.getMessage().contains(REASON), e.getMessage());
    }

    @Test
    void aMissingServiceFailsWhenServicesAreRequired() {
        AssertionFailedError e = assertThrows(AssertionFailedError.class, () -> Services.require(false, REASON, true));
        assertTrue(e.getMessage().contains(REASON) && e.getMessage().contains("AIRLOCK_REQUIRE_SERVICES=1"), e.getMessage());
    }

    @Test
    void aPresentServiceCarriesOn() {
        assertDoesNotThrow(() -> Services.require(true, REASON, true));
        assertDoesNotThrow(() -> Services.require(true, REASON, false));
    }

    @Test
    void findLooksOnThePathAndInSbin() {
        assertTrue(Services.find("sh").isPresent(), "sh is on every PATH");
        assertTrue(Services.find("no-such-program-" + System.nanoTime()).isEmpty());
    }

    @Test
    void skipReasonsReachTheReportFileOneLinePerGroup(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("skipped.txt");
        String before = System.getProperty(SkipReport.FILE_PROPERTY);
        System.setProperty(SkipReport.FILE_PROPERTY, file.toString());
        try {
            SkipReport report = new SkipReport();
            SummaryGeneratingListener summary = new SummaryGeneratingListener();
            // Only this report instance: the one registered through META-INF/services would write the file twice.
            LauncherFactory.create(LauncherConfig.builder().enableTestExecutionListenerAutoRegistration(false).build()).execute(request().selectors(selectClass(Sample.class)).build(), report, summary);
            assertEquals(2, summary.getSummary().getTestsAbortedCount(), "both tests of the sample skipped");
        } finally {
            if (before == null) {
                System.clearProperty(SkipReport.FILE_PROPERTY);
            } else {
                System.setProperty(SkipReport.FILE_PROPERTY, before);
            }
        }
        List<String> lines = Files.readAllLines(file);
        assertEquals(List.of(
                "skipped 2: ServicesTest$Sample: " + REASON,
                "skipped 1: ServicesTest$Sample > Group: the group's own reason"), lines);
    }

    /** Run by the launcher above, not by surefire (it is not a top-level test class). */
    static class Sample {
        @BeforeEach
        void needsFrobnicator() {
            Services.require(false, REASON, false);
        }

        @Test
        void one() {
        }

        @Test
        void two() {
        }

        @Nested
        class Group {
            @BeforeAll
            static void needsGroupThing() {
                Services.require(false, "the group's own reason", false);
            }

            @Test
            void three() {
            }
        }
    }
}
