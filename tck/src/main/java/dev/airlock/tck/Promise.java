package dev.airlock.tck;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * What one kit case holds a backend to, in a short sentence (and, where the usual cause is known,
 * what to fix). {@link KitDeadline} quotes it when the case fails or hangs, so a plugin author reads
 * the rule this case checks rather than its group's summary. Every kit case carries one.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@interface Promise {
    String value();
}
