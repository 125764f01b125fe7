package dev.airlock.tck;

import dev.airlock.event.AuditEvent;
import dev.airlock.event.ExecListener;

import java.util.ArrayList;
import java.util.List;

/** Records the audit events an environment reports, to count its {@code close} (sandbox stop). */
final class Events implements ExecListener {
    private final List<AuditEvent> events = new ArrayList<>();

    @Override
    public synchronized void onEvent(AuditEvent event) {
        events.add(event);
    }

    synchronized long count(String type) {
        return events.stream().filter(e -> e.type().equals(type)).count();
    }
}
