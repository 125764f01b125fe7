package dev.airlock.bench;

import java.util.List;

/** How long a run is: the quick mode trades repetitions and the largest size for minutes. */
record Plan(boolean quick, int warmup, int reps, List<Integer> growthMiB, List<Integer> concurrency, int jmhIterations) {
    static final int MAIN_MIB = 256;

    static Plan of(boolean quick) {
        return quick
                ? new Plan(true, 1, 3, List.of(1, 16, 256), List.of(1, 8, 64), 2)
                : new Plan(false, 1, 5, List.of(1, 16, 256, 1024), List.of(1, 8, 64), 5);
    }

    /** Repetitions at a size: the 1 GiB point (for the growth chart only) takes two, without warm-up. */
    int repsAt(int mib) {
        return mib >= 1024 ? 2 : reps;
    }

    int warmupAt(int mib) {
        return mib >= 1024 ? 0 : warmup;
    }

    /**
     * Interleaved pairs of agent turns (issue 35) on a backend. A turn takes about 1 s a side on
     * local, 1-3 s on docker and the cloud emulators and 6-7 s over ssh (where this machine's
     * login shell costs 0.5 s a command): about 10 minutes for all six in a full run.
     */
    int turnPairs(String backend) {
        if (quick) {
            return backend.equals("local") ? 9 : 3;
        }
        return switch (backend) {
            case "local" -> 41;
            case "ssh" -> 15;
            default -> 21;
        };
    }

    /** Rounds of N concurrent commands per side: enough commands for a p99 (about 200 at 64). */
    int rounds(int n) {
        int want = quick ? 64 : 128;
        return Math.max(quick ? 2 : 3, want / n);
    }
}
