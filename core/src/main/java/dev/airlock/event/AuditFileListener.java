package dev.airlock.event;

import dev.airlock.ConfigurationException;
import dev.airlock.internal.Json;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Appends every {@link AuditEvent} to a file as one JSON line ({@code airlock.audit.file}). The
 * file is created 0600. Lines are written whole under a lock, so concurrent execs never interleave.
 */
public final class AuditFileListener implements ExecListener, AutoCloseable {
    private final Path file;
    private final Writer out;

    public AuditFileListener(Path file) {
        this.file = file;
        try {
            if (file.getParent() != null) {
                Files.createDirectories(file.getParent());
            }
            if (!Files.exists(file)) {
                Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            }
            this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new ConfigurationException("cannot open audit file " + file + " (airlock.audit.file): " + e.getMessage());
        }
    }

    @Override
    public synchronized void onEvent(AuditEvent event) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("time", event.time().toString());
        line.put("type", event.type());
        line.put("backend", event.backend());
        line.put("environment", event.environment());
        line.put("subject", event.subject());
        line.putAll(event.fields());
        try {
            out.write(Json.write(line));
            out.write('\n');
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append to audit file " + file + ": " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void close() {
        try {
            out.close();
        } catch (IOException ignored) {
            // nothing left to lose: every line was flushed when written
        }
    }
}
