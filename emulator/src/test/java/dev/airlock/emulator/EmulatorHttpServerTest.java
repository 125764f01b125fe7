package dev.airlock.emulator;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What a client of an emulator can rely on, whatever the order its threads run in. */
class EmulatorHttpServerTest {

    /**
     * A client holding its answer finds the call in the journal: the handler here is still busy
     * after its whole answer went out (as a server thread can be when a fast client reads on), and
     * the entry is there all the same.
     */
    @Test
    void aCallIsInTheJournalOnceItsAnswerArrived() throws Exception {
        CallJournal journal = new CallJournal();
        CountDownLatch release = new CountDownLatch(1);
        try (EmulatorHttpServer server = EmulatorHttpServer.builder().journal(journal)
                .route("GET", "/things/{id}", "thing-get", (req, resp) -> {
                    resp.json(200, "{\"id\":\"" + req.param("id") + "\"}");
                    try {
                        release.await(10, TimeUnit.SECONDS); // the answer is out; the handler has not returned
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }).start(new InetSocketAddress("127.0.0.1", 0))) {
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(server.url() + "/things/t1"))
                    .header("Authorization", "Bearer t").build(), HttpResponse.BodyHandlers.ofString());
            try {
                assertEquals("{\"id\":\"t1\"}", r.body());
                assertEquals(1, journal.entries("thing-get").size(), "the call is journalled before its answer leaves");
                CallJournal.Entry e = journal.entries("thing-get").get(0);
                assertEquals(r.body().length(), e.responseBytes(), "the answer's declared length");
                assertEquals(Optional.empty(), e.fault());
            } finally {
                release.countDown();
            }
        }
    }
}
