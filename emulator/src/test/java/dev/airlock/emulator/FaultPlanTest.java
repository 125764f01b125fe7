package dev.airlock.emulator;

import dev.airlock.ConfigurationException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FaultPlanTest {
    static List<Boolean> run(FaultPlan p, String call, int n) {
        List<Boolean> hits = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            hits.add(p.next(call).isPresent());
        }
        return hits;
    }

    @Test
    void theSameSeedGivesTheSameFaultsWhateverElseIsCalled() {
        FaultPlan a = FaultPlan.parse("exec:unavailable@p=0.3", 42);
        FaultPlan b = FaultPlan.parse("exec:unavailable@p=0.3", 42);
        List<Boolean> first = run(a, "exec", 200);
        for (int i = 0; i < 37; i++) {
            b.next("file-read"); // other calls interleaved do not move exec's faults
        }
        assertEquals(first, run(b, "exec", 200));
        assertNotEquals(first, run(FaultPlan.parse("exec:unavailable@p=0.3", 43), "exec", 200));
        long hits = first.stream().filter(h -> h).count();
        assertTrue(hits > 30 && hits < 90, "about 30% of 200: " + hits);
    }

    /** Two chance rules on one call draw independently: the second fires on calls where the first did not (it never did when they shared the draw). */
    @Test
    void twoChanceRulesOnOneCallDrawIndependently() {
        FaultPlan p = FaultPlan.parse("exec:unavailable@p=0.3,exec:lose@p=0.3", 42);
        int unavailable = 0;
        int lost = 0;
        for (int i = 0; i < 400; i++) {
            var f = p.next("exec");
            if (f.isPresent()) {
                if (f.get() instanceof Fault.Status) {
                    unavailable++;
                } else {
                    lost++;
                }
            }
        }
        // first rule: ~30% of 400; second: ~30% of the remaining 70%, ~84
        assertTrue(unavailable > 80 && unavailable < 160, "unavailable " + unavailable);
        assertTrue(lost > 40 && lost < 130, "lost " + lost);
    }

    @Test
    void firstNthAlwaysAndCounts() {
        FaultPlan p = FaultPlan.builder(1).nth("exec", 2, Fault.loseResponse()).first("get", 2, Fault.status(503))
                .always("put", Fault.cutAfterBytes(10)).build();
        assertEquals(List.of(false, true, false, false), run(p, "exec", 4));
        assertEquals(List.of(true, true, false), run(p, "get", 3));
        assertEquals(List.of(true, true), run(p, "put", 2));
        assertEquals(Optional.empty(), p.next("other"));
        assertEquals(Map.of("exec", 1L, "get", 2L, "put", 2L), p.faultCounts());
        assertEquals(Map.of("exec", 4L, "get", 3L, "put", 2L, "other", 1L), p.callCounts());
        assertTrue(p.report().contains("get: 3 calls, 2 faults"), p.report());
    }

    @Test
    void theTextFormReadsEveryFault() {
        FaultPlan p = FaultPlan.parse("a:status=429+2s, b:status=500@nth=1, c:unavailable@always, d:delay=250ms,"
                + " e:cut-bytes=100, f:cut-lines=2, g:lose, h:cut-after=2s, *:status=503@first=1", 1);
        assertEquals(new Fault.Status(429, "RESOURCE_EXHAUSTED", Optional.of(Duration.ofSeconds(2))), p.next("a").orElseThrow());
        assertEquals(new Fault.Status(500, "INTERNAL", Optional.empty()), p.next("b").orElseThrow());
        assertEquals(new Fault.Status(503, "UNAVAILABLE", Optional.empty()), p.next("c").orElseThrow());
        assertEquals(new Fault.Delay(Duration.ofMillis(250)), p.next("d").orElseThrow());
        assertEquals(new Fault.CutAfterBytes(100), p.next("e").orElseThrow());
        assertEquals(new Fault.CutAfterLines(2), p.next("f").orElseThrow());
        assertEquals(new Fault.LoseResponse(), p.next("g").orElseThrow());
        assertEquals(new Fault.CutAfterTime(Duration.ofSeconds(2)), p.next("h").orElseThrow());
        assertEquals(new Fault.Status(503, "UNAVAILABLE", Optional.empty()), p.next("zzz").orElseThrow());
    }

    @Test
    void aBadRuleIsOneLineNamingIt() {
        for (String bad : List.of("exec", "exec:explode", "exec:status=200", "exec:status=abc", "exec:lose@p=2",
                "exec:delay=soon", "exec:lose@sometimes")) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> FaultPlan.parse(bad, 1), bad);
            assertTrue(e.getMessage().startsWith("fault rule '"), e.getMessage());
            assertEquals(1, e.getMessage().lines().count());
        }
    }
}
