package dev.airlock.exec;

import dev.airlock.ExecRequest;
import dev.airlock.Target;
import dev.airlock.containment.Containment;
import dev.airlock.containment.ContainmentSettings;
import dev.airlock.containment.SecretVariables;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Backend;

import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A child's environment variables as the core shapes them: what is set on top of what it
 * inherits (containment's home and temp dir, then the request's own), and what is taken away (the
 * JVM's secrets and containment's list, as the backend accepts that proposal).
 */
final class ChildVariables {
    private final Backend backend;
    private final SecretVariables secrets;
    private final Set<String> containmentUnset;
    /** Worked out once (see {@link #proposedUnset}). */
    private volatile Set<String> proposed;

    ChildVariables(Backend backend, Settings settings, ContainmentSettings containment) {
        this.backend = backend;
        this.secrets = SecretVariables.from(settings);
        this.containmentUnset = containment.unset();
    }

    /** The variables a child gets on top of the inherited environment: containment's, then the request's. */
    Map<String, String> set(Containment containment, Target target, ExecRequest request) {
        return containment.childVariables(target.scratchDir(), request.env());
    }

    /** The JVM's variables that look like secrets, which no child inherits. */
    Set<String> strippedSecrets() {
        return secrets.among(System.getenv());
    }

    /**
     * The core's proposal of variables no child inherits: the JVM's secrets and containment's list.
     * Worked out once: this JVM's environment is fixed for its life, and so are the settings, and
     * judging every variable by name and value cost a tenth of the JVM's CPU per local exec.
     */
    Set<String> proposedUnset() {
        Set<String> d = proposed;
        if (d == null) {
            Set<String> out = new TreeSet<>(strippedSecrets());
            out.addAll(containmentUnset);
            d = Collections.unmodifiableSet(out);
            proposed = d;
        }
        return new TreeSet<>(d);
    }

    /** What the backend removes from every child's inherited environment, given the proposal. */
    Set<String> unset() {
        return backend.childUnset(proposedUnset());
    }
}
