package dev.airlock.exec;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.ArrayList;
import java.util.List;

/**
 * The host backends a test opened, closed after each test (stalled hooks released, every launched
 * process killed by its handle): a test class holds one as a {@code @RegisterExtension} field.
 */
final class HostBackends implements AfterEachCallback {
    private final List<HostBackend> opened = new ArrayList<>();

    /** Keeps {@code b} for closing after the test; returns it. */
    <T extends HostBackend> T add(T b) {
        opened.add(b);
        return b;
    }

    @Override
    public void afterEach(ExtensionContext context) {
        try {
            HostBackend.closeAll(opened);
        } finally {
            opened.clear();
        }
    }
}
