package dev.airlock.local;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.RemoteFiles;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The one-call forms: {@code exec(String)} and {@code files().readBytes(path)}, bounded. */
class ConveniencesTest {
    @TempDir
    Path dir;

    private Environment open() {
        return Environments.open(Settings.of("airlock.container", "no", "airlock.local.workdir", dir.toString()));
    }

    @Test
    void execTakesACommandString() {
        try (Environment env = open()) {
            assertEquals("hi\n", env.exec("echo hi").stdout().text());
        }
    }

    @Test
    void readBytesReturnsASmallFileWhole() throws Exception {
        byte[] content = {0, 1, (byte) 0xff, '\n', 'x'};
        Path file = Files.write(dir.resolve("small.bin"), content);
        try (Environment env = open()) {
            assertArrayEquals(content, env.files().readBytes(file.toString()));
        }
    }

    @Test
    void readBytesRefusesAFileOverItsLimitInOneLine() throws Exception {
        Path file = dir.resolve("big.bin");
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(RemoteFiles.MAX_READ_BYTES + 1L);
        }
        try (Environment env = open()) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> env.files().readBytes(file.toString()));
            assertEquals(file + " is over 64 MiB, more than readBytes returns: stream it with files().read(path)", e.getMessage());
        }
    }
}
