package dev.airlock.modal;

import dev.airlock.emulator.Emulators;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * A Modal emulator for one test class, closed after the class's own {@code @AfterAll} methods (so
 * environments close against a live server). Clients get its URL and the token pair through
 * {@link #settings()}.
 */
final class ModalFixture implements BeforeAllCallback, AfterAllCallback {
    static final String TOKEN_ID = "ak-fixture-4f1d";
    static final String TOKEN_SECRET = "as-fixture-secret-93be";
    private final String faults;
    private final Map<String, String> extra;
    Emulators.Served served;

    ModalFixture() {
        this("", Map.of());
    }

    ModalFixture(String faults, Map<String, String> extra) {
        this.faults = faults;
        this.extra = extra;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        if (served == null) { // once per top-level class, not again for each @Nested class
            start();
        }
    }

    void start() {
        try {
            Settings s = Settings.of(Map.of("airlock.emulator.faults", faults));
            // The pair the emulator accepts, by the service's own variables in its environment.
            served = Emulators.start("modal", "127.0.0.1:0", s.with(extra),
                    Map.of("MODAL_TOKEN_ID", TOKEN_ID, "MODAL_TOKEN_SECRET", TOKEN_SECRET), getClass().getClassLoader());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (served != null && context.getRequiredTestClass().getEnclosingClass() == null) {
            served.close();
            served = null;
        }
    }

    Settings settings() {
        return Settings.of(Map.of(ModalSettings.SERVER_URL, served.emulator().url().toString(),
                ModalSettings.TOKEN_ID, TOKEN_ID, ModalSettings.TOKEN_SECRET, TOKEN_SECRET,
                "airlock.modal.retry.initial-backoff", "20ms", "airlock.modal.retry.max-backoff", "200ms"));
    }
}
