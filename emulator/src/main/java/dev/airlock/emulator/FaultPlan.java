package dev.airlock.emulator;

import dev.airlock.ConfigurationException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which calls fail, and how: seeded and deterministic. Whether the n-th call of a name gets a
 * fault depends only on the seed, the name and n, never on how other calls interleave, so a
 * failing run repeats exactly. Counts of calls and of faults per name are kept for reports.
 *
 * <p>Text form, for {@code airlock emulator NAME --faults SPEC} (rules separated by commas):
 * {@code CALL:FAULT[@WHEN]} with FAULT one of {@code status=503}, {@code status=429+2s} (429 with
 * {@code Retry-After: 2}), {@code unavailable}, {@code delay=250ms}, {@code cut-bytes=100},
 * {@code cut-lines=2}, {@code cut-after=2s}, {@code lose}; and WHEN one of {@code first=N} (the first N calls, the
 * default being 1), {@code nth=K} (only the K-th), {@code always}, {@code p=0.25} (each call with
 * that probability, from the seed). CALL {@code *} matches every call.
 */
public final class FaultPlan {
    private static final Pattern RULE = Pattern.compile(
            "\\s*([A-Za-z0-9_.*/-]+):([a-z-]+)(?:=([^@,]+))?(?:@([a-z]+)(?:=([0-9.]+))?)?\\s*");

    private record Rule(String call, Fault fault, String when, double arg) {
        /** {@code index}: the rule's place in the plan, so two {@code p=} rules on one call draw independently. */
        boolean applies(long n, long seed, int index) {
            return switch (when) {
                case "first" -> n <= (long) arg;
                case "nth" -> n == (long) arg;
                case "always" -> true;
                case "p" -> new SplittableRandom(seed * 1_000_003L + call.hashCode() * 7919L + index * 104_729L + n)
                        .nextDouble() < arg;
                default -> throw new IllegalStateException(when);
            };
        }
    }

    private final long seed;
    private final List<Rule> rules;
    private final Map<String, Long> calls = new TreeMap<>();
    private final Map<String, Long> faults = new TreeMap<>();

    private FaultPlan(long seed, List<Rule> rules) {
        this.seed = seed;
        this.rules = List.copyOf(rules);
    }

    public static FaultPlan none() {
        return new FaultPlan(0, List.of());
    }

    public static Builder builder(long seed) {
        return new Builder(seed);
    }

    /** Parses the text form (see the class comment); an error names the bad rule. */
    public static FaultPlan parse(String spec, long seed) {
        Builder b = builder(seed);
        if (spec == null || spec.isBlank()) {
            return b.build();
        }
        for (String part : spec.split(",")) {
            Matcher m = RULE.matcher(part);
            if (!m.matches()) {
                throw bad(part, "expected CALL:FAULT[@WHEN], e.g. exec:lose@nth=2 or sandbox-get:status=429+2s@first=3");
            }
            Fault f = fault(part, m.group(2), m.group(3));
            String when = m.group(4) == null ? "first" : m.group(4);
            double arg = m.group(5) == null ? 1 : Double.parseDouble(m.group(5));
            switch (when) {
                case "first", "nth", "always", "p" -> { }
                default -> throw bad(part, "WHEN must be first=N, nth=K, always or p=0.25");
            }
            if (when.equals("p") && (arg < 0 || arg > 1)) {
                throw bad(part, "p must be between 0 and 1");
            }
            b.rules.add(new Rule(m.group(1), f, when, arg));
        }
        return b.build();
    }

    /**
     * Counts one call of {@code call} and returns the fault to inject, if any (the first rule
     * that applies wins).
     */
    public synchronized Optional<Fault> next(String call) {
        long n = calls.merge(call, 1L, Long::sum);
        for (int i = 0; i < rules.size(); i++) {
            Rule r = rules.get(i);
            if ((r.call.equals(call) || r.call.equals("*")) && r.applies(n, seed, i)) {
                faults.merge(call, 1L, Long::sum);
                return Optional.of(r.fault);
            }
        }
        return Optional.empty();
    }

    /** How many times each call was made. */
    public synchronized Map<String, Long> callCounts() {
        return Map.copyOf(calls);
    }

    /** How many faults each call received. */
    public synchronized Map<String, Long> faultCounts() {
        return Map.copyOf(faults);
    }

    public synchronized long faults(String call) {
        return faults.getOrDefault(call, 0L);
    }

    /** One line per call that was made: {@code exec: 3 calls, 1 fault}. */
    public synchronized String report() {
        StringBuilder sb = new StringBuilder();
        calls.forEach((c, n) -> sb.append(c).append(": ").append(n).append(n == 1 ? " call, " : " calls, ")
                .append(faults.getOrDefault(c, 0L)).append(faults.getOrDefault(c, 0L) == 1 ? " fault" : " faults")
                .append('\n'));
        return sb.toString();
    }

    public long seed() {
        return seed;
    }

    private static Fault fault(String part, String kind, String arg) {
        try {
            return switch (kind) {
                case "status" -> {
                    String[] s = need(part, arg).split("\\+", 2);
                    int code = Integer.parseInt(s[0].trim());
                    if (code < 400 || code > 599) {
                        throw bad(part, "status must be 400..599");
                    }
                    yield s.length == 1 ? Fault.status(code) : new Fault.Status(code, Fault.grpcFor(code),
                            Optional.of(duration(part, s[1])));
                }
                case "unavailable" -> Fault.unavailable();
                case "delay" -> Fault.delay(duration(part, need(part, arg)));
                case "cut-bytes" -> Fault.cutAfterBytes(Long.parseLong(need(part, arg).trim()));
                case "cut-lines" -> Fault.cutAfterLines(Long.parseLong(need(part, arg).trim()));
                case "cut-after" -> new Fault.CutAfterTime(duration(part, need(part, arg)));
                case "lose" -> Fault.loseResponse();
                default -> throw bad(part, "FAULT must be status=CODE[+WAIT], unavailable, delay=D, cut-bytes=N, cut-lines=N, cut-after=D or lose");
            };
        } catch (NumberFormatException e) {
            throw bad(part, "a number is malformed");
        }
    }

    private static String need(String part, String arg) {
        if (arg == null || arg.isBlank()) {
            throw bad(part, "this fault needs a value after =");
        }
        return arg;
    }

    private static Duration duration(String part, String s) {
        Matcher m = Pattern.compile("(\\d+)(ms|s)?").matcher(s.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw bad(part, "a duration is like 250ms or 2s");
        }
        long n = Long.parseLong(m.group(1));
        return "ms".equals(m.group(2)) ? Duration.ofMillis(n) : Duration.ofSeconds(n);
    }

    private static ConfigurationException bad(String part, String why) {
        return new ConfigurationException("fault rule '" + part.trim() + "': " + why);
    }

    /** Rules in order; the first that applies to a call wins. */
    public static final class Builder {
        private final long seed;
        private final List<Rule> rules = new ArrayList<>();

        private Builder(long seed) {
            this.seed = seed;
        }

        /** The first {@code n} calls of {@code call}. */
        public Builder first(String call, int n, Fault f) {
            rules.add(new Rule(call, f, "first", n));
            return this;
        }

        /** Only the {@code k}-th call of {@code call} (1-based). */
        public Builder nth(String call, int k, Fault f) {
            rules.add(new Rule(call, f, "nth", k));
            return this;
        }

        public Builder always(String call, Fault f) {
            rules.add(new Rule(call, f, "always", 0));
            return this;
        }

        /** Each call with probability {@code p}, decided from the seed. */
        public Builder sometimes(String call, double p, Fault f) {
            if (p < 0 || p > 1) {
                throw new IllegalArgumentException("p must be in [0, 1]");
            }
            rules.add(new Rule(call, f, "p", p));
            return this;
        }

        public FaultPlan build() {
            return new FaultPlan(seed, rules);
        }
    }
}
