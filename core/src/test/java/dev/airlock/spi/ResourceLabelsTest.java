package dev.airlock.spi;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What gc may remove, judged from the labels alone (a service may ignore the label filter gc sends). */
class ResourceLabelsTest {
    private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");

    @Test
    void labelsRoundTripWithTheServicesPrefix() {
        ResourceLabels l = new ResourceLabels("op@box", NOW.minusSeconds(60), "1.2.3", true);
        Map<String, String> m = l.asMap("dev.airlock.");
        assertEquals(Map.of("dev.airlock.managed", "true", "dev.airlock.owner", "op@box", "dev.airlock.created",
                "2026-12-01T11:59:00Z", "dev.airlock.version", "1.2.3", "dev.airlock.keep", "true"), m);
        assertEquals(Optional.of(l), ResourceLabels.parse(m, "dev.airlock."));
        assertEquals(Optional.empty(), ResourceLabels.parse(m, "airlock."), "another prefix is another service's labels");
    }

    @Test
    void onlyThisOwnersOldEnoughAndUnkeptResourcesAreCollectable() {
        ResourceLabels orphan = new ResourceLabels("op@box", NOW.minus(Duration.ofHours(2)), "1", false);
        assertTrue(orphan.collectable("op@box", NOW, Duration.ofHours(1), false));
        assertFalse(orphan.collectable("mallory@elsewhere", NOW, Duration.ofHours(1), true), "another owner's");
        assertFalse(orphan.collectable("op@box", NOW, Duration.ofHours(3), true), "younger than asked");
        ResourceLabels kept = new ResourceLabels("op@box", NOW.minus(Duration.ofHours(2)), "1", true);
        assertFalse(kept.collectable("op@box", NOW, Duration.ZERO, false), "kept by up");
        assertTrue(kept.collectable("op@box", NOW, Duration.ZERO, true));
    }

    @Test
    void damagedOrForeignLabelsAreNotAirlocks() {
        Map<String, String> m = new HashMap<>(new ResourceLabels("op@box", NOW, "1", false).asMap("airlock."));
        m.put("airlock.created", "yesterday");
        assertEquals(Optional.empty(), ResourceLabels.parse(m, "airlock."));
        m.remove("airlock.managed");
        m.put("airlock.created", NOW.toString());
        assertEquals(Optional.empty(), ResourceLabels.parse(m, "airlock."));
        assertTrue(ResourceLabels.selector("airlock.").containsKey("airlock.owner"));
    }

    @Test
    void aResourceWhoseHolderStillRunsIsNeverCollectableWhateverItsAge() {
        ResourceLabels live = ResourceLabels.now(false);
        assertFalse(live.holder().isEmpty(), "a resource made now carries this JVM as its holder");
        assertEquals(Optional.of(live), ResourceLabels.parse(live.asMap("airlock."), "airlock."));
        ResourceLabels old = new ResourceLabels(live.owner(), NOW.minus(Duration.ofDays(3)), "1", false, live.holder());
        assertFalse(old.collectable(live.owner(), NOW, Duration.ZERO, true), "its holder runs: an open environment");
        String self = live.holder();
        String gone = self.substring(0, self.lastIndexOf('/') + 1) + (Long.parseLong(self.substring(self.lastIndexOf('/') + 1)) - 1);
        ResourceLabels orphan = new ResourceLabels(live.owner(), NOW.minus(Duration.ofDays(3)), "1", false, gone);
        assertTrue(orphan.collectable(live.owner(), NOW, Duration.ZERO, false), "a reused pid is another process");
        assertTrue(ResourceLabels.now(true).holder().isEmpty(), "what up keeps outlives its process: no holder");
    }
}
