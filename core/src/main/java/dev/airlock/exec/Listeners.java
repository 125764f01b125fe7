package dev.airlock.exec;

import dev.airlock.event.AuditEvent;
import dev.airlock.event.AuditFileListener;
import dev.airlock.event.ExecListener;
import dev.airlock.event.ExecTransition;
import dev.airlock.settings.Settings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Who hears about an environment's execs: the caller's listeners and the audit file
 * ({@code airlock.audit.file}). A listener that throws is logged and never stops an exec.
 */
final class Listeners {
    private static final Logger LOG = LoggerFactory.getLogger(Listeners.class);

    private final String backend;
    private final String id;
    private final List<ExecListener> all;
    private final AuditFileListener auditFile;

    Listeners(String backend, String id, List<ExecListener> given, Settings settings) {
        this.backend = backend;
        this.id = id;
        List<ExecListener> l = new ArrayList<>(given);
        this.auditFile = settings.get(CoreSettings.AUDIT_FILE_KEY).map(f -> new AuditFileListener(Path.of(f))).orElse(null);
        if (auditFile != null) {
            l.add(auditFile);
        }
        this.all = List.copyOf(l);
    }

    void emit(String type, String subject, Map<String, Object> fields) {
        AuditEvent ev = new AuditEvent(Instant.now(), type, backend, id, subject, fields);
        for (ExecListener l : all) {
            try {
                l.onEvent(ev);
            } catch (RuntimeException e) {
                LOG.warn("an ExecListener failed: {}", e.toString());
            }
        }
    }

    void transition(ExecTransition t) {
        for (ExecListener l : all) {
            try {
                l.onTransition(t);
            } catch (RuntimeException e) {
                LOG.warn("an ExecListener failed on a transition: {}", e.toString());
            }
        }
    }

    /** Closes the audit file; the last event (close) was written before. */
    void close() {
        if (auditFile != null) {
            auditFile.close();
        }
    }
}
