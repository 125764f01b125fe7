package dev.airlock;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The core's rooms and the one-way flow between them (API -> exec -> spi -> backend): the low
 * rooms (shell scripts, internals, events) know neither the exec core nor the SPI, and the SPI
 * reaches the exec core only where a provider hands its backend over ({@code OpenContext}). That
 * plugins use no internals is checked from the plugin's side, by every backend's kit run (the
 * kit's Layering group).
 */
class LayeringTest {
    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("dev.airlock");

    @Test
    void lowRoomsDoNotReachUpIntoTheSpiOrTheExecCore() {
        noClasses().that().resideInAnyPackage("dev.airlock.shell..", "dev.airlock.internal..", "dev.airlock.event..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.airlock.spi..", "dev.airlock.exec..")
                .check(CORE);
    }

    @Test
    void theSpiReachesTheExecCoreOnlyWhereABackendIsHandedOver() {
        noClasses().that().resideInAPackage("dev.airlock.spi..")
                .and().doNotHaveFullyQualifiedName("dev.airlock.spi.OpenContext")
                .should().dependOnClassesThat().resideInAPackage("dev.airlock.exec..")
                .check(CORE);
    }

    @Test
    void theUsersApiDoesNotReachIntoTheExecCore() {
        noClasses().that().resideInAPackage("dev.airlock")
                .should().dependOnClassesThat().resideInAPackage("dev.airlock.exec..")
                .check(CORE);
    }
}
