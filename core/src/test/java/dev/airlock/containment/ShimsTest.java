package dev.airlock.containment;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ShimsTest {
    @Test
    void installedScriptsCarryTheMarkerAndTheQuotedRunDir() {
        for (String name : Shims.SCRIPTS) {
            String s = new String(Shims.script(name, "/runs/it's here"), StandardCharsets.UTF_8);
            String[] lines = s.split("\n", 4);
            assertEquals("#!/bin/sh", lines[0]);
            assertEquals(Shims.MARKER + ": " + name + " (eval profile)", lines[1]);
            assertEquals("AIRLOCK_RUN_DIR='/runs/it'\\''s here'", lines[2]);
        }
    }

    @Test
    void thePrepareScriptMakesTheLayoutAndTheLinks() {
        String s = Shims.prepareScript("/r 1");
        assertTrue(s.startsWith("umask 077\n"), s);
        assertTrue(s.contains("mkdir -p -- '/r 1'/home '/r 1'/airlock '/r 1'/tmp '/r 1'/bin"), s);
        assertTrue(s.contains("ln -sf at '/r 1'/bin/atq"), s);
    }
}
