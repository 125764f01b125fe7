package dev.airlock.spi;

import org.junit.jupiter.api.Test;

import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What the group-state script printed, read before every signal. */
class GroupStateTest {

    @Test
    void aLiveGroupWithItsLeadersStartTime() {
        assertEquals(GroupState.alive(OptionalLong.of(4242)), GroupState.parse("alive 4242\n"));
        assertEquals(GroupState.alive(OptionalLong.of(7)), GroupState.parse("  alive   7  "));
    }

    @Test
    void aLiveGroupWhoseLeaderIsGoneOrUnreadable() {
        assertEquals(GroupState.alive(OptionalLong.empty()), GroupState.parse("alive \n"));
        assertEquals(GroupState.alive(OptionalLong.empty()), GroupState.parse("alive"));
        assertEquals(GroupState.alive(OptionalLong.empty()), GroupState.parse("alive notanumber"));
    }

    @Test
    void anythingElseIsGone() {
        assertEquals(GroupState.gone(), GroupState.parse("gone\n"));
        assertEquals(GroupState.gone(), GroupState.parse(""));
        assertEquals(GroupState.gone(), GroupState.parse("sh: kill: not found"));
        assertEquals(false, GroupState.parse("gone").alive());
        assertEquals(true, GroupState.parse("alive 1").alive());
    }
}
