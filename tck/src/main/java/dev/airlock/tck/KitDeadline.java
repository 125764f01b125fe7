package dev.airlock.tck;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;
import org.opentest4j.AssertionFailedError;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;

/**
 * Gives every kit test its own short deadline, so a broken backend fails the kit in minutes with
 * a message naming the promise it broke, instead of hanging for the whole run. The first test
 * that misses its deadline is interrupted and fails; every later test of the same kit run fails
 * at once, pointing at it (one hang usually means every exec hangs, and waiting for each again
 * would take an hour). The deadline is {@value #DEFAULT_SECONDS}s, or the system property
 * {@value #PROPERTY} in seconds. A case that fails without hanging fails with the same words: its
 * message quotes the case's own {@link Promise} (its group's, for a method without one), so a
 * plugin author sees which rule the backend broke, and usually what to fix, before the detail. The
 * kit's own set-up and clean-up methods get the same deadline.
 */
public final class KitDeadline implements InvocationInterceptor {
    /** Seconds each kit test may take, when set. */
    public static final String PROPERTY = "dev.airlock.tck.testTimeoutSeconds";
    static final long DEFAULT_SECONDS = 120;
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(KitDeadline.class);

    /** What each group promises: quoted for a method without its own {@link Promise} (set-up and clean-up). */
    private static final Map<String, String> PROMISES = Map.ofEntries(
            Map.entry("Exec", "commands run and end with their own exit code"),
            Map.entry("Stdin", "stdin arrives byte-exact and ends when it should: a command reading it must see end-of-input"),
            Map.entry("Output", "an exec ends when its command exits; the backend must not hold the output open"),
            Map.entry("Files", "file operations finish, atomic and byte-exact"),
            Map.entry("TimeoutsAndCancel", "a timeout or cancel ends the command's whole process tree within the kill grace,"
                    + " what a command leaves running ends with its exec, and nothing cancelled before dispatch runs;"
                    + " launch must start the command in its own session and process group (setsid) and kill that group,"
                    + " and a transport whose output ends at the command's exit must say so (Backend.outputEndsAtExit)"),
            Map.entry("Concurrency", "one environment serves many execs and file operations at once"),
            Map.entry("Secrecy", "nothing secret appears in any argv, raw or encoded (hex, base64), and the checks finish"),
            Map.entry("Errors", "bad input fails at once with one clear exception"),
            Map.entry("StagedStdin", "staged files (stdin, env) are 0600, removed before the command runs and never run,"
                    + " and the exec finishes"),
            Map.entry("LauncherRecord", "the launcher record is found once, before the command runs: output before it is dropped,"
                    + " records the command prints are output, and the exit code comes from the transport"),
            Map.entry("ExitStatus", "the exit status is the command's own, from the transport: no parent the command can kill,"
                    + " stop or write into reports it (the launcher execs into the command's shell)"),
            Map.entry("Attach", "an attached environment closes without stopping the sandbox"),
            Map.entry("Sessions", "a session's exec ends like any exec and saves its state from the EXIT trap"),
            Map.entry("NetworkPolicy", "each airlock.network mode the backend declares is enforced, and any other is refused at open"),
            Map.entry("Ports", "a port the backend exposes answers through its URL with the server's own bytes, and a port it"
                    + " cannot expose is refused in one line"),
            Map.entry("Layering", "a plugin builds on the SPI and the API only"));

    @Override
    public void interceptTestMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> call,
                                    ExtensionContext context) throws Throwable {
        within(invocation, context);
    }

    @Override
    public void interceptTestTemplateMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> call,
                                            ExtensionContext context) throws Throwable {
        within(invocation, context);
    }

    @Override
    public void interceptBeforeAllMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> call,
                                         ExtensionContext context) throws Throwable {
        within(invocation, context, true);
    }

    @Override
    public void interceptBeforeEachMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> call,
                                          ExtensionContext context) throws Throwable {
        within(invocation, context, true);
    }

    @Override
    public void interceptAfterEachMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> call,
                                         ExtensionContext context) throws Throwable {
        within(invocation, context, true);
    }

    @Override
    public void interceptAfterAllMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> call,
                                        ExtensionContext context) throws Throwable {
        within(invocation, context, true);
    }

    private static void within(Invocation<Void> invocation, ExtensionContext context) throws Throwable {
        within(invocation, context, false);
    }

    /** Set-up and clean-up run even after a hang (a shared environment must still be closed), within the deadline. */
    private static void within(Invocation<Void> invocation, ExtensionContext context, boolean lifecycle) throws Throwable {
        ExtensionContext.Store store = context.getRoot().getStore(NS);
        String run = kitRun(context);
        String earlier = store.get(run, String.class);
        if (earlier != null && !lifecycle) {
            invocation.skip();
            throw new AssertionFailedError("[airlock-tck] not run: " + earlier + "; fix that hang first");
        }
        Longer longer = context.getTestMethod().map(m -> m.getAnnotation(Longer.class)).orElse(null); // none for @BeforeAll/@AfterAll
        Duration deadline = deadline().multipliedBy(longer == null ? 1 : Math.max(1, longer.value()));
        try {
            Assertions.assertTimeoutPreemptively(deadline, () -> {
                invocation.proceed();
                return null;
            });
        } catch (AssertionFailedError e) {
            if (e.getMessage() == null || !e.getMessage().startsWith("execution timed out after")) {
                throw broken(context, e);
            }
            String group = group(context);
            String what = group + " > " + context.getDisplayName() + " did not finish within " + deadline.toSeconds() + "s";
            store.put(run, what);
            AssertionFailedError hang = new AssertionFailedError("[airlock-tck] " + what + ": the backend broke the promise '"
                    + promise(context).orElse("the case finishes") + "'");
            hang.setStackTrace(e.getStackTrace());
            throw hang;
        } catch (AssertionError | RuntimeException e) {
            if (e instanceof org.opentest4j.TestAbortedException) {
                throw e; // a skip (assumeCapability) is not a failure
            }
            throw broken(context, e);
        }
    }

    /** A failure that did not hang: the same words as a hang's, then what the case saw. */
    private static AssertionFailedError broken(ExtensionContext context, Throwable e) {
        String group = group(context);
        String promise = promise(context).orElse(null);
        String why = e instanceof AssertionError ? String.valueOf(e.getMessage()) : e.toString();
        AssertionFailedError f = new AssertionFailedError("[airlock-tck] " + group + " > " + context.getDisplayName()
                + (promise == null ? "" : ": the backend broke the promise '" + promise + "'") + ": " + why, e);
        f.setStackTrace(e.getStackTrace());
        return f;
    }

    /** The concrete kit subclass being run: one hang stops that backend's run only. */
    private static String kitRun(ExtensionContext context) {
        return context.getTestInstances().map(i -> i.getAllInstances().get(0).getClass().getName())
                .orElseGet(() -> context.getRequiredTestClass().getName());
    }

    /** The case's own promise, else its group's. */
    static java.util.Optional<String> promise(ExtensionContext context) {
        return context.getTestMethod().map(m -> m.getAnnotation(Promise.class)).map(Promise::value)
                .or(() -> java.util.Optional.ofNullable(PROMISES.get(group(context))));
    }

    private static String group(ExtensionContext context) {
        return context.getRequiredTestClass().getSimpleName();
    }

    /**
     * A case that does the work of several (a hundred execs in a row): its deadline is this many
     * times the per-case one. Still a guard against a hang, never a speed check.
     */
    @java.lang.annotation.Retention(java.lang.annotation.RetentionPolicy.RUNTIME)
    @java.lang.annotation.Target(java.lang.annotation.ElementType.METHOD)
    @interface Longer {
        int value();
    }

    static Duration deadline() {
        String v = System.getProperty(PROPERTY);
        if (v != null && !v.isBlank()) {
            try {
                return Duration.ofSeconds(Long.parseLong(v.trim()));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(PROPERTY + " must be whole seconds, got '" + v + "'");
            }
        }
        return Duration.ofSeconds(DEFAULT_SECONDS);
    }
}
