package dev.airlock;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The core's rooms and the one-way flow between them: the low rooms (shell scripts, internals,
 * events) know nothing of the SPI. That plugins use no internals is checked from the plugin's side,
 * by every backend's kit run (the kit's Layering group).
 */
class LayeringTest {
    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("dev.airlock");

    @Test
    void lowRoomsDoNotReachUpIntoTheSpi() {
        noClasses().that().resideInAnyPackage("dev.airlock.shell..", "dev.airlock.internal..", "dev.airlock.event..")
                .should().dependOnClassesThat().resideInAPackage("dev.airlock.spi..")
                .check(CORE);
    }
}
