package dev.airlock.remote;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

class AttemptTest {
    @Test
    void everyAttemptOfAKeyedCallSendsTheSameKeyAndItsOwnNumber() {
        RemoteCalls calls = new RemoteCalls(new Service("Modal", "MODAL_TOKEN_SECRET", "airlock.modal.server-url"),
                RetryPolicy.defaults().withSleeper(d -> { }));
        List<Attempt> seen = new ArrayList<>();
        String r = calls.call(CallKind.KEYED, "SandboxCreate", Resource.none(), a -> {
            seen.add(a);
            if (a.number() < 3) {
                throw WireFailure.grpc("UNAVAILABLE", "", Optional.empty());
            }
            return "sb-1";
        });
        assertEquals("sb-1", r);
        assertEquals(List.of(1, 2, 3), seen.stream().map(Attempt::number).toList());
        assertEquals(1, seen.stream().map(Attempt::idempotencyKey).distinct().count(), "one key for all attempts");
        assertEquals(2, seen.get(2).retries());
        String other = calls.call(CallKind.KEYED, "SandboxCreate", Resource.none(), Attempt::idempotencyKey);
        assertEquals(false, other.equals(seen.get(0).idempotencyKey()), "a new call, a new key");
    }
}
