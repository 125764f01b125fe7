package dev.airlock.exec;

import dev.airlock.NoSuchPathException;
import dev.airlock.StdinMode;
import dev.airlock.event.AuditEvent;
import dev.airlock.event.ExecListener;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A listener hears of every file change, as ExecListener promises: the operation and the path, never the content. */
class FileEventsTest {
    @TempDir
    Path dir;

    private final List<AuditEvent> events = new CopyOnWriteArrayList<>();
    private HostBackend b;

    @AfterEach
    void close() {
        if (b != null) {
            b.env.close();
        }
    }

    @Test
    void writesDeletesAndDirectoriesAreReportedWithTheirOutcome() {
        b = new HostBackend(HostBackend.settings(dir), StdinMode.PIPE, true, List.of(ExecListener.ofEvents(events::add)));
        String d = dir.resolve("work").toString();
        byte[] secret = "content-never-reported".getBytes(StandardCharsets.UTF_8);
        b.env.files().mkdirs(d);
        b.env.files().write(d + "/f", secret);
        assertArrayEquals(secret, b.env.files().readBytes(d + "/f"));
        assertTrue(b.env.files().delete(d + "/f"));
        assertEquals(false, b.env.files().delete(d + "/f"));
        assertThrows(NoSuchPathException.class, () -> b.env.files().write(d + "/missing/g", dev.airlock.Payload.of(secret),
                dev.airlock.WriteOptions.defaults().withCreateParents(false)));

        List<String> seen = events.stream().filter(e -> e.type().equals("file"))
                .map(e -> e.fields().get("op") + " " + e.subject().replace(d, "D")
                        + (e.fields().containsKey("changed") ? " changed=" + e.fields().get("changed") : "")
                        + (e.fields().containsKey("error") ? " error=" + e.fields().get("error") : ""))
                .toList();
        assertEquals(List.of("mkdirs D", "write D/f", "delete D/f changed=true", "delete D/f changed=false",
                "write D/missing/g error=" + new NoSuchPathException("x").kind()), seen);
        assertTrue(events.stream().noneMatch(e -> e.toString().contains("content-never-reported")), "an event showed the content");
    }
}
