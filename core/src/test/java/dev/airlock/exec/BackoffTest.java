package dev.airlock.exec;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class BackoffTest {
    @Test
    void failuresDoubleTheWaitUpToASecond() {
        Backoff b = new Backoff();
        List<Long> waits = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            waits.add(b.afterFailure());
        }
        assertEquals(List.of(10L, 20L, 40L, 80L, 160L, 320L, 640L, 1000L, 1000L), waits);
    }

    @Test
    void anAnswerStartsTheDoublingOver() {
        Backoff b = new Backoff();
        b.afterFailure();
        b.afterFailure();
        assertEquals(10L, b.afterAnswer());
        assertEquals(10L, b.afterFailure());
        assertEquals(20L, b.afterFailure());
    }
}
