package dev.airlock.cli;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code ./airlock} starts the jar by class name ({@code -cp JAR MAIN}), so that name must stay this CLI's. */
class LauncherScriptTest {
    @Test
    void theLauncherNamesTheCliMainClass() throws IOException {
        String script = Files.readString(ReadmeTest.ROOT.resolve("airlock"));
        Matcher m = Pattern.compile("(?m)^main=(\\S+)$").matcher(script);
        assertTrue(m.find(), "./airlock sets main=");
        assertEquals(AirlockCli.class.getName(), m.group(1));
    }
}
