package dev.airlock.cli;

import dev.airlock.ConfigurationException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.math.BigDecimal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code exec --timeout}: plain seconds, or a duration as every duration setting takes it. */
class ExecCommandTest {

    @ParameterizedTest
    @CsvSource({"30, 30", "1.5, 1.5", "500ms, 0.5", "2s, 2", "1m, 60", "1h, 3600", "2S, 2", " 3 , 3", ".25, 0.25"})
    void timeoutsInSecondsOrWithAUnit(String given, String seconds) {
        assertEquals(0, new BigDecimal(seconds).compareTo(ExecCommand.parseSeconds(given)), given);
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "0ms", "-1", "soon", "2x", "1e3", "", "ms"})
    void anythingElseIsOneClearError(String given) {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> ExecCommand.parseSeconds(given));
        assertTrue(e.getMessage().contains("500ms") && e.getMessage().contains("'" + given + "'"), e.getMessage());
    }
}
