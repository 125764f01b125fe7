package dev.airlock.session;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The snapshot is replaced atomically: four writers saving one session's state at once (each
 * with a 100 KB variable: a single variable over 128 KiB cannot be passed to any program on Linux) and four readers reading it all along never see a torn or empty one.
 */
class SessionSnapshotAtomicityTest {
    private static final int WRITERS = 4;
    private static final int READERS = 4;
    private static final int SAVES = 12;
    private static final int PAY = 100_000;
    private static final Pattern GEN = Pattern.compile("export GEN='(w\\d+-\\d+)'");
    private static final Pattern PAYLOAD = Pattern.compile("export PAY='(x*)(w\\d+-\\d+)'");

    @TempDir
    Path tmp;

    @Test
    void fourWritersAndFourReadersNeverSeeATornSnapshot() throws Exception {
        Path dir = tmp.resolve("session");
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS + READERS);
        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicInteger reads = new AtomicInteger();
        try {
            List<CompletableFuture<Void>> writers = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int id = w;
                writers.add(CompletableFuture.runAsync(() -> write(dir, id), pool));
            }
            List<CompletableFuture<Void>> readers = new ArrayList<>();
            for (int r = 0; r < READERS; r++) {
                readers.add(CompletableFuture.runAsync(() -> {
                    while (writing.get()) {
                        if (check(dir.resolve(SessionScript.SNAPSHOT))) {
                            reads.incrementAndGet();
                        }
                    }
                }, pool));
            }
            try {
                CompletableFuture.allOf(writers.toArray(new CompletableFuture[0])).get(5, TimeUnit.MINUTES);
            } finally {
                writing.set(false);
            }
            CompletableFuture.allOf(readers.toArray(new CompletableFuture[0])).get(1, TimeUnit.MINUTES);
        } finally {
            pool.shutdownNow();
        }
        assertTrue(reads.get() > 0, "the readers never saw a snapshot");
        assertTrue(check(dir.resolve(SessionScript.SNAPSHOT)));
        try (var s = Files.list(dir)) {
            assertEquals(List.of(SessionScript.SNAPSHOT), s.map(p -> p.getFileName().toString()).toList(), "a temp file was left");
        }
    }

    private static void write(Path dir, int writer) {
        try {
            SessionScriptTest.Run run = new SessionScriptTest.Run("bash", dir);
            for (int i = 0; i < SAVES; i++) {
                String gen = "w" + writer + "-" + i;
                SessionScriptTest.Out r = run.exec("export GEN=" + gen + "; export PAY=\"$(head -c " + PAY
                        + " /dev/zero | tr '\\0' x)" + gen + "\"");
                assertEquals(0, r.exit(), r.err());
                assertEquals("", r.err(), "the save failed");
            }
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    /** False when there is no snapshot yet; fails on one that is torn or mixes two saves. */
    private static boolean check(Path snapshot) {
        String s;
        try {
            s = Files.readString(snapshot, StandardCharsets.ISO_8859_1);
        } catch (NoSuchFileException e) {
            return false;
        } catch (java.io.IOException e) {
            throw new RuntimeException(e);
        }
        if (!s.endsWith(SessionScript.COMPLETE + "\n")) {
            fail("a reader saw a torn snapshot of " + s.length() + " bytes");
        }
        Matcher g = GEN.matcher(s);
        Matcher p = PAYLOAD.matcher(s);
        assertTrue(g.find() && p.find(), "a complete snapshot lacks its variables");
        assertEquals(PAY, p.group(1).length(), "the payload variable was cut");
        assertEquals(g.group(1), p.group(2), "a snapshot mixes two saves");
        return true;
    }
}
