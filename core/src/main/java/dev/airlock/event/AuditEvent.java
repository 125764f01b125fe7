package dev.airlock.event;

import java.time.Instant;
import java.util.Map;

/**
 * A record of something an environment did, written as one JSON line by the audit file. Holds no
 * payload, env value or secret: commands and paths only.
 *
 * @param time        when it ended
 * @param type        {@code exec}, {@code write}, {@code read}, {@code denied}, {@code approved}, {@code open}, {@code close}
 * @param backend     the backend name
 * @param environment the environment id
 * @param subject     the command text or the path
 * @param fields      extra facts: exit code, duration, bytes, reason, scope
 */
public record AuditEvent(Instant time, String type, String backend, String environment, String subject,
                         Map<String, Object> fields) {
}
