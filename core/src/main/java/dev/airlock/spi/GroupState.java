package dev.airlock.spi;

import java.util.OptionalLong;

/**
 * What a process group looks like right now, read before every signal: whether any process is in
 * it, and the start time of its leader (clock ticks since boot) when the leader still lives and
 * the target can tell.
 */
public record GroupState(boolean alive, OptionalLong leaderStart) {

    public static GroupState gone() {
        return new GroupState(false, OptionalLong.empty());
    }

    public static GroupState alive(OptionalLong leaderStart) {
        return new GroupState(true, leaderStart);
    }

    /** Parses what {@link dev.airlock.shell.Shell#groupStateScript} printed. */
    public static GroupState parse(String out) {
        String s = out.strip();
        if (!s.startsWith("alive")) {
            return gone();
        }
        String start = s.substring("alive".length()).strip();
        try {
            return alive(start.isEmpty() ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(start)));
        } catch (NumberFormatException e) {
            return alive(OptionalLong.empty());
        }
    }
}
