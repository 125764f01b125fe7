package dev.airlock.shell;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The kinds {@link SpecialFiles} refuses, named from st_mode's type bits (permission bits never count). */
class SpecialFilesRuleTest {
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', nullValues = "none", value = {
        "0020666 | a character device",
        "0060660 | a block device",
        "0010644 | a FIFO",
        "0140777 | a socket",
        "0100644 | none",
        "0040755 | none",
        "0120777 | none",
        "0107777 | none",
    })
    void kindsAreNamedByTheTypeBitsOnly(String octal, String kind) {
        assertEquals(Optional.ofNullable(kind), SpecialFiles.kind(Integer.parseInt(octal, 8)));
    }

    @Test
    void theMessageIsOneLineNamingThePathItsKindAndWhatToDo() {
        assertEquals("write to /dev/urandom refused: it is a character device, which Airlock never replaces or removes;"
                + " name a regular file (run a command, under the guard, if you mean to change it)",
                SpecialFiles.message("write to", "/dev/urandom", "a character device"));
    }
}
