package dev.airlock.tck;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Lets a plugin author run part of the kit while iterating, and stop it at the first failure.
 * Surefire cannot select the kit's groups ({@code -Dtest='AcmeCompatibilityTest$Files'} finds no
 * test: the groups are declared by the kit, not by the author's class), so the selection is a
 * system property:
 * <pre>
 * ./mvnw verify -Dtest=AcmeCompatibilityTest -Dairlock.kit=Files
 * ./mvnw verify -Dtest=AcmeCompatibilityTest -Dairlock.kit='TimeoutsAndCancel#cancelKillsTheCommandAndEverythingItStarted,Exec'
 * ./mvnw verify -Dtest=AcmeCompatibilityTest -Dairlock.kit.failFast=true
 * </pre>
 * {@value #PROPERTY} names groups ({@code Group}) and cases ({@code Group#method}), comma-separated;
 * everything else is skipped, saying it was not selected. A name the kit does not have fails the
 * run with the list of what it has, so a typo never passes as zero tests. With
 * {@value #FAIL_FAST}, every case after the first failure is skipped, naming that failure.
 */
public final class KitSelection implements ExecutionCondition, TestWatcher {
    /** The groups and cases to run, comma-separated ({@code Files}, {@code Exec#exitCodeIsTheCommands}). */
    public static final String PROPERTY = "airlock.kit";
    /** {@code true}: skip every case after the first failure. */
    public static final String FAIL_FAST = "airlock.kit.failFast";

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(KitSelection.class);
    private static final String FIRST_FAILURE = "first-failure";

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        String failed = context.getRoot().getStore(NS).get(FIRST_FAILURE, String.class);
        if (failed != null && Boolean.getBoolean(FAIL_FAST)) {
            return ConditionEvaluationResult.disabled(FAIL_FAST + ": skipped after the first failure, " + failed);
        }
        String spec = System.getProperty(PROPERTY, "").strip();
        if (spec.isEmpty()) {
            return ConditionEvaluationResult.enabled("the whole kit");
        }
        Selection selected = parse(spec);
        Optional<Class<?>> group = context.getTestClass().flatMap(KitSelection::groupOf);
        if (group.isEmpty()) {
            // The author's kit class: check the selection once, before anything runs.
            context.getTestClass().ifPresent(kit -> check(kit, selected));
            return ConditionEvaluationResult.enabled("selected by " + PROPERTY + "=" + spec);
        }
        String name = group.get().getSimpleName();
        Optional<Method> method = context.getTestMethod();
        if (method.isEmpty() ? selected.selects(name) : selected.selects(name, method.get().getName())) {
            return ConditionEvaluationResult.enabled("selected by " + PROPERTY + "=" + spec);
        }
        return ConditionEvaluationResult.disabled("not selected by " + PROPERTY + "=" + spec);
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        String group = context.getTestClass().flatMap(KitSelection::groupOf).map(Class::getSimpleName).orElse("?");
        String name = group + "#" + context.getTestMethod().map(Method::getName).orElse(context.getDisplayName());
        context.getRoot().getStore(NS).getOrComputeIfAbsent(FIRST_FAILURE, k -> name, String.class);
    }

    /** What {@value #PROPERTY} selects: whole groups, and single cases of other groups. */
    record Selection(Set<String> wholeGroups, Map<String, Set<String>> cases) {
        /** The group names, in the order given. */
        Set<String> groups() {
            Set<String> all = new LinkedHashSet<>(wholeGroups);
            all.addAll(cases.keySet());
            return all;
        }

        boolean selects(String group) {
            return wholeGroups.contains(group) || cases.containsKey(group);
        }

        boolean selects(String group, String method) {
            return wholeGroups.contains(group) || cases.getOrDefault(group, Set.of()).contains(method);
        }
    }

    static Selection parse(String spec) {
        Set<String> whole = new LinkedHashSet<>();
        Map<String, Set<String>> cases = new LinkedHashMap<>();
        for (String item : spec.split(",")) {
            String s = item.strip();
            int hash = s.indexOf('#');
            if (s.isEmpty()) {
                continue;
            } else if (hash < 0) {
                whole.add(s);
            } else {
                String c = s.substring(hash + 1).strip();
                int paren = c.indexOf('(');
                // "name()" or "name(int)" as JUnit prints it: the method's name
                cases.computeIfAbsent(s.substring(0, hash).strip(), g -> new LinkedHashSet<>()).add(paren < 0 ? c : c.substring(0, paren));
            }
        }
        return new Selection(whole, cases);
    }

    /** Fails the run when the selection names a group or case the kit does not have. */
    private static void check(Class<?> kit, Selection selected) {
        Map<String, Class<?>> groups = groups(kit);
        List<String> wrong = new ArrayList<>();
        for (String name : selected.groups()) {
            Class<?> g = groups.get(name);
            if (g == null) {
                wrong.add("no group '" + name + "' (groups: " + String.join(", ", groups.keySet()) + ")");
                continue;
            }
            Set<String> cases = cases(g);
            for (String c : selected.cases().getOrDefault(name, Set.of())) {
                if (!cases.contains(c)) {
                    wrong.add("no case '" + c + "' in " + name + " (cases: " + String.join(", ", cases) + ")");
                }
            }
        }
        if (!wrong.isEmpty()) {
            throw new ExtensionConfigurationException(PROPERTY + " names what the kit does not have: " + String.join("; ", wrong));
        }
    }

    /** The kit's groups by simple name, sorted: its nested classes marked {@code @Nested}. */
    private static Map<String, Class<?>> groups(Class<?> kit) {
        Map<String, Class<?>> out = new TreeMap<>();
        for (Class<?> c = kit; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Class<?> n : c.getDeclaredClasses()) {
                if (n.isAnnotationPresent(Nested.class)) {
                    out.putIfAbsent(n.getSimpleName(), n);
                }
            }
        }
        return out;
    }

    /** A group's test method names, its inherited ones included. */
    private static Set<String> cases(Class<?> group) {
        Set<String> out = new TreeSet<>();
        for (Class<?> c = group; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                if (isCase(m)) {
                    out.add(m.getName());
                }
            }
        }
        return out;
    }

    private static boolean isCase(Method m) {
        for (var a : m.getAnnotations()) {
            String n = a.annotationType().getName();
            if (n.equals("org.junit.jupiter.api.Test") || n.equals("org.junit.jupiter.params.ParameterizedTest")
                    || n.equals("org.junit.jupiter.api.RepeatedTest") || n.equals("org.junit.jupiter.api.TestFactory")) {
                return true;
            }
        }
        return false;
    }

    /** The kit group a test class is, or sits in: the outermost {@code @Nested} class. */
    private static Optional<Class<?>> groupOf(Class<?> testClass) {
        Class<?> group = null;
        for (Class<?> c = testClass; c != null; c = c.getEnclosingClass()) {
            if (c.isAnnotationPresent(Nested.class)) {
                group = c;
            }
        }
        return Optional.ofNullable(group);
    }
}
