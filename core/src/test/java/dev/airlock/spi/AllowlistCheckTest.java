package dev.airlock.spi;

import dev.airlock.BackendException;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The check from outside, run with no namespace to enter (this machine's own network, where
 * nothing filters): the connection arrives, and that is a leak; a port the list names is never
 * taken for the check.
 */
class AllowlistCheckTest {

    @Test
    void aConnectionThatArrivesIsALeakNamedInOneLine() {
        BackendException e = assertThrows(BackendException.class, () -> AllowlistCheck.unlistedUnreachable(
                InetAddress.getLoopbackAddress(), "127.0.0.1", List.of(), port -> false, "this machine's network"));
        assertTrue(e.getMessage().matches("airlock.network=allowlist: from inside this machine's network a connection to"
                + " 127.0.0.1:\\d+, which the list does not name, got through"), e.getMessage());
    }

    @Test
    void aPortTheListNamesIsNoCheck() {
        assertEquals(Optional.empty(), AllowlistCheck.unlistedUnreachable(InetAddress.getLoopbackAddress(), "127.0.0.1",
                List.of(), port -> true, "this machine's network"));
    }

    @Test
    void nothingListeningWhereTheNamespaceConnectsIsReportedUnreachable() {
        // 127.0.0.2 is this machine too, but the listener holds only 127.0.0.1: the attempt is refused.
        Optional<String> line = AllowlistCheck.unlistedUnreachable(InetAddress.getLoopbackAddress(), "127.0.0.2", List.of(),
                port -> false, "this machine's network");
        assertTrue(line.orElseThrow().matches("127\\.0\\.0\\.2:\\d+ \\(not on the list; this machine listened there\\) was"
                + " unreachable from inside this machine's network: .*"), line.toString());
    }
}
