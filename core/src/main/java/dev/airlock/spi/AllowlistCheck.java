package dev.airlock.spi;

import dev.airlock.BackendException;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;

/**
 * A check of {@code airlock.network=allowlist} made from outside the commands' reach, for a
 * backend whose filter lives in a network namespace on this machine: this JVM listens where a
 * command's packets would arrive if the filter let them through, on a port the list does not name,
 * and a connection is tried from inside that namespace (the backend gives the argv that enters it).
 * A connection that arrives means the rules do not hold, and open must fail; one refused is the
 * line {@code doctor} reports ({@link Backend#allowlistCheck}); one that gets no answer at all
 * proves nothing (a firewall of this machine's may drop it whatever the filter does) and is no check. A listener is what makes the
 * answer mean something: without one, "unreachable" would be true of any closed port.
 */
public final class AllowlistCheck {
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final int TIMED_OUT = 124;

    private AllowlistCheck() {
    }

    /**
     * Tries {@code connectTo}:PORT from the namespace, PORT being a port this JVM holds on
     * {@code listenOn} that {@code listed} does not name.
     *
     * @param listenOn an address of this machine the namespace's packets for {@code connectTo} reach
     * @param connectTo how commands in the namespace name that address
     * @param enter the argv prefix that runs a program in the namespace ({@code nsenter ... --})
     * @param listed whether the list names a port at that address
     * @param where the namespace, for the messages ("container 1a2b3c4d5e6f")
     * @return the line for {@code doctor}; empty when no check could be made (no {@code bash} here
     *         for its {@code /dev/tcp}, no address to listen on, or the list names every port)
     * @throws BackendException when the connection arrived: the filter does not hold
     */
    public static Optional<String> unlistedUnreachable(InetAddress listenOn, String connectTo, List<String> enter,
                                                       IntPredicate listed, String where) {
        Optional<Path> bash = HostPrograms.find("bash");
        if (bash.isEmpty()) {
            return Optional.empty();
        }
        try (ServerSocketChannel listener = ServerSocketChannel.open()) {
            listener.bind(new InetSocketAddress(listenOn, 0));
            int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
            if (listed.test(port)) {
                return Optional.empty();
            }
            List<String> argv = new ArrayList<>(enter);
            argv.addAll(List.of(bash.get().toString(), "-c", "exec 3<>\"/dev/tcp/$0/$1\"", connectTo, Integer.toString(port)));
            Tried tried = run(argv);
            listener.configureBlocking(false);
            try (SocketChannel arrived = listener.accept()) {
                if (arrived != null || tried.exit == 0) {
                    throw new BackendException("airlock.network=allowlist: from inside " + where + " a connection to "
                            + connectTo + ":" + port + ", which the list does not name, got through");
                }
            }
            if (tried.exit == TIMED_OUT) {
                // No answer at all: a firewall of this machine's may drop it whatever the filter does; proves nothing.
                return Optional.empty();
            }
            return Optional.of(connectTo + ":" + port + " (not on the list; this machine listened there) was unreachable"
                    + " from inside " + where + ": " + tried.why);
        } catch (IOException e) {
            return Optional.empty(); // nowhere to listen: nothing to check with
        }
    }

    private record Tried(int exit, String why) {
    }

    /** Runs the connection attempt, bounded; its exit and the first line of its stderr. */
    private static Tried run(List<String> argv) throws IOException {
        Process p = new ProcessBuilder(argv).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        p.getOutputStream().close();
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> firstLine(p.getErrorStream()));
        try {
            if (!p.waitFor(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                p.waitFor();
                return new Tried(TIMED_OUT, "no answer in " + BOUND.toSeconds() + " s");
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while checking the allowlist", e);
        }
        return new Tried(p.exitValue(), err.join());
    }

    private static String firstLine(InputStream in) {
        try (in) {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            in.transferTo(b);
            String t = b.toString(StandardCharsets.UTF_8).strip();
            int nl = t.indexOf('\n');
            return nl < 0 ? t : t.substring(0, nl);
        } catch (IOException e) {
            return "";
        }
    }
}
