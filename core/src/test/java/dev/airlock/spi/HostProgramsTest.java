package dev.airlock.spi;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HostProgramsTest {

    @Test
    void findsAProgramInTheSystemDirectories() {
        Path sh = HostPrograms.find("sh").orElseThrow();
        assertTrue(sh.isAbsolute() && Files.isRegularFile(sh), sh.toString());
        assertEquals(Optional.empty(), HostPrograms.find("no-such-program-airlock-zzz"));
    }

    @Test
    void aDirectoryOfThatNameIsSkippedAndAnEmptyEntryIsNeverTheWorkingDirectory(@TempDir Path dir) throws Exception {
        Path first = Files.createDirectories(dir.resolve("first/tool")).getParent(); // a directory named tool
        Path second = Files.createDirectories(dir.resolve("second"));
        Path tool = Files.writeString(second.resolve("tool"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(tool, PosixFilePermissions.fromString("rwxr-xr-x"));
        assertEquals(Optional.of(tool.toAbsolutePath()), HostPrograms.first("tool", List.of("", first.toString(), second.toString())));
        assertEquals(Optional.empty(), HostPrograms.first("tool", List.of("", first.toString())));
    }
}
