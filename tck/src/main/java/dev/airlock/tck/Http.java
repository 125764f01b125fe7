package dev.airlock.tck;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** GETs of a URL a sandbox's port is exposed at, for the kit's Ports group and the backends' own port tests. */
public final class Http {
    private Http() {
    }

    /**
     * The body of GET {@code uri}, retried while the server is still starting (refused, reset, not
     * yet 200); an AssertionError with the last failure when it did not answer {@code within}.
     */
    public static byte[] fetch(URI uri, Duration within) throws InterruptedException {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        long end = System.nanoTime() + within.toNanos();
        String last = "nothing tried";
        while (true) {
            try {
                HttpResponse<byte[]> r = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).GET().build(),
                        HttpResponse.BodyHandlers.ofByteArray());
                if (r.statusCode() == 200) {
                    return r.body();
                }
                last = "HTTP " + r.statusCode();
            } catch (IOException e) {
                last = e.toString();
            }
            if (System.nanoTime() > end) {
                throw new AssertionError(uri + " did not answer within " + within.toSeconds() + "s: " + last);
            }
            Thread.sleep(200);
        }
    }

    /** Whether anything still answers at {@code uri}: a connection accepted and an HTTP answer read. */
    public static boolean answers(URI uri) throws InterruptedException {
        try {
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build()
                    .send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).GET().build(),
                            HttpResponse.BodyHandlers.discarding());
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
