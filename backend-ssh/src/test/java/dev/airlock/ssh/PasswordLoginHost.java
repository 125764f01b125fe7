package dev.airlock.ssh;

/**
 * A throwaway host user and an sshd that lets it in by password (PAM), started and closed
 * together: the server first, then the user (whose close ends what it still runs).
 */
final class PasswordLoginHost implements AutoCloseable {
    final TestUser user;
    final SshdServer server;

    private PasswordLoginHost(TestUser user, SshdServer server) {
        this.user = user;
        this.server = server;
    }

    static PasswordLoginHost start() throws Exception {
        TestUser user = TestUser.create();
        try {
            return new PasswordLoginHost(user, SshdServer.startForPasswordLogin());
        } catch (Exception | Error e) {
            user.close();
            throw e;
        }
    }

    @Override
    public void close() throws Exception {
        try {
            server.close();
        } finally {
            user.close();
        }
    }
}
