package dev.airlock.containment;

import dev.airlock.Environment;
import dev.airlock.safety.GuardMode;

import java.util.Set;

/** An environment run by the core, as {@code doctor} inspects it: how its children are contained and guarded. */
public interface ContainedEnvironment extends Environment {

    /** How this environment contains its children (home, temp dir, shims), decided at open. */
    Containment containment();

    /** How commands are isolated beyond their environment, in one line; "none" when they are not. */
    String isolation();

    /** What a check from outside found of {@code airlock.network=allowlist} (see {@link dev.airlock.spi.Backend#allowlistCheck}). */
    java.util.Optional<String> allowlistCheck();

    /** Whether the command guard is in force here, and why ({@code airlock.guard}). */
    GuardMode.Verdict commandGuard();

    /** The names (never values) of the JVM's variables no child gets because they are secrets. */
    Set<String> strippedSecretVariables();
}
