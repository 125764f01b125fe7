package dev.airlock.tck;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Collects why tests were skipped (an aborted assumption, a disabled test), one line per group
 * and reason, and appends them to the file named by the system property {@value #FILE_PROPERTY}.
 * The build prints that file after the tests: surefire sends test output to files and reports
 * skips as bare counts, so without this a missing service would pass unexplained. Registered
 * through {@code META-INF/services}, so every module with the kit on its test class path has it.
 */
public final class SkipReport implements TestExecutionListener {
    /** The file the reasons are appended to; without it they are only printed to the test's stdout. */
    public static final String FILE_PROPERTY = "dev.airlock.tck.skipReport";

    private final Map<String, Integer> skipped = Collections.synchronizedMap(new LinkedHashMap<>());
    private volatile TestPlan plan;

    @Override
    public void testPlanExecutionStarted(TestPlan testPlan) {
        plan = testPlan;
    }

    @Override
    public void executionSkipped(TestIdentifier id, String reason) {
        record(id, reason);
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
            record(id, result.getThrowable().map(Throwable::getMessage).orElse("aborted without a reason"));
        }
    }

    private void record(TestIdentifier id, String reason) {
        String line = group(id) + ": " + (reason == null || reason.isBlank() ? "no reason given" : reason.strip());
        skipped.merge(line, 1, Integer::sum);
    }

    /** The test's class and nested groups, e.g. {@code LocalCompatibilityTest > StagedStdin}. */
    private String group(TestIdentifier id) {
        List<String> names = new ArrayList<>();
        TestPlan p = plan;
        Optional<TestIdentifier> at = Optional.of(id);
        while (at.isPresent()) {
            TestIdentifier t = at.get();
            if (t.getSource().filter(ClassSource.class::isInstance).isPresent()) {
                names.add(0, t.getDisplayName());
            }
            at = p == null ? Optional.empty() : p.getParent(t);
        }
        return names.isEmpty() ? id.getDisplayName() : String.join(" > ", names);
    }

    @Override
    public void testPlanExecutionFinished(TestPlan testPlan) {
        List<String> lines = lines();
        if (lines.isEmpty()) {
            return;
        }
        lines.forEach(l -> System.out.println("[airlock] " + l));
        String file = System.getProperty(FILE_PROPERTY);
        if (file == null || file.isBlank()) {
            return;
        }
        StringBuilder text = new StringBuilder();
        lines.forEach(l -> text.append(l).append('\n'));
        try {
            Path path = Path.of(file);
            Files.createDirectories(path.toAbsolutePath().getParent());
            Files.writeString(path, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append the skip report to " + file, e);
        }
    }

    /** One line per group and reason: {@code skipped N: GROUP: REASON}. */
    List<String> lines() {
        List<String> out = new ArrayList<>();
        synchronized (skipped) {
            skipped.forEach((line, n) -> out.add("skipped " + n + ": " + line));
        }
        return out;
    }
}
