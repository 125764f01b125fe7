package dev.airlock.cli;

import org.junit.jupiter.api.extension.AnnotatedElementContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDirFactory;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Every {@code @TempDir} of these tests is made inside the directory {@code ./airlock} runs in
 * ({@link Airlock#workRoot()}): under bubblewrap, the local backend's default, that working
 * directory is the one host dir commands and the file API share with the test, so the files a
 * test prepares or checks are the ones the command sees.
 */
public final class WorkdirTempDirs implements TempDirFactory {
    @Override
    public Path createTempDirectory(AnnotatedElementContext elementContext, ExtensionContext extensionContext) throws Exception {
        return Files.createTempDirectory(Airlock.workRoot(), "junit-");
    }
}
