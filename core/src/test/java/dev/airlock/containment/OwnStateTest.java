package dev.airlock.containment;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which files count as Airlock's own program, the ones a sandbox binds read-only. */
class OwnStateTest {

    /**
     * A backend module's classes run from a checkout while the core comes from a jar elsewhere (a
     * build of one module, its dependencies from the local repository): the checkout is Airlock's
     * program all the same, its launcher and sources included.
     */
    @Test
    void aCheckoutHoldingAnyAirlockClassIsProgramNotOnlyTheCoresOwn(@TempDir Path dir) throws Exception {
        Path checkout = dir.resolve("airlock-checkout");
        for (String f : List.of("airlock", "mvnw", "pom.xml", "backend-x/pom.xml")) {
            Files.createDirectories(checkout.resolve(f).getParent());
            Files.writeString(checkout.resolve(f), "x");
        }
        Files.createDirectories(checkout.resolve("backend-x/target/classes/dev/airlock/x"));
        Files.createDirectories(checkout.resolve("backend-x/src/main/java"));
        ClassLoader before = Thread.currentThread().getContextClassLoader();
        try (URLClassLoader plugin = new URLClassLoader(new URL[] {checkout.resolve("backend-x/target/classes").toUri().toURL()}, null)) {
            Thread.currentThread().setContextClassLoader(plugin);
            List<Path> program = OwnState.programFiles();
            Path real = checkout.toRealPath();
            for (String f : List.of("airlock", "mvnw", "pom.xml", "backend-x/pom.xml", "backend-x/src/main", "backend-x/target")) {
                assertTrue(program.contains(real.resolve(f)), f + " is not among " + program);
            }
            assertTrue(program.contains(real.resolve("backend-x/target/classes")), "the class dir itself");
        } finally {
            Thread.currentThread().setContextClassLoader(before);
        }
        assertFalse(OwnState.programFiles().contains(checkout.toRealPath().resolve("airlock")),
                "a loader no longer in use still counted");
    }

    @Test
    void theRootOfAJarOrAClassDirIsFoundAndOtherUrlsAreNot() throws Exception {
        assertEquals(Optional.of(Path.of("/opt/air lock/lib/airlock-core.jar")),
                OwnState.rootOf(new URL("jar:file:/opt/air%20lock/lib/airlock-core.jar!/dev/airlock"), "dev/airlock"));
        assertEquals(Optional.of(Path.of("/w/core/target/classes")),
                OwnState.rootOf(new URL("file:/w/core/target/classes/dev/airlock"), "dev/airlock"));
        assertEquals(Optional.empty(), OwnState.rootOf(new URL("file:/w/core/target/classes/dev/other"), "dev/airlock"));
        assertEquals(Optional.empty(), OwnState.rootOf(new URL("jar:http://example.invalid/a.jar!/dev/airlock"), "dev/airlock"));
        assertEquals(Optional.empty(), OwnState.rootOf(new URL("http://example.invalid/dev/airlock"), "dev/airlock"));
    }
}
