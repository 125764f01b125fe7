package dev.airlock.ssh;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts an {@link SshdServer} before a test class and stops it after everything else in the class,
 * the inherited {@code @AfterAll} methods included (which close environments still logged in),
 * and once for all its {@code @Nested} classes.
 */
final class SshdExtension implements BeforeAllCallback, AfterAllCallback {
    private SshdServer server;

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        if (isTopLevel(context)) {
            server = SshdServer.start();
        }
    }

    /** Nested classes inherit the extension and get their own callbacks: one server serves them all. */
    private static boolean isTopLevel(ExtensionContext context) {
        return context.getRequiredTestClass().getEnclosingClass() == null;
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (server != null && isTopLevel(context)) {
            server.close();
            server = null;
        }
    }

    SshdServer server() {
        if (server == null) {
            throw new IllegalStateException("sshd is not running");
        }
        return server;
    }
}
