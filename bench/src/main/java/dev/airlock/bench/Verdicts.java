package dev.airlock.bench;

import java.util.Map;

/**
 * Met or missed, for each row: a ratio row meets its target when its median ratio is at or under
 * the limit and neither side failed. A miss names its reason, from the profile written down in
 * RESULTS.md's "What remains" (keyed by the scenario's start).
 */
final class Verdicts {
    /** Why a row misses, found by profiling (see bench/analysis.md); a miss without an entry says "see What remains". */
    private static final Map<String, String> REASONS = Map.of(
            "local 256 MiB stdin", "each command's own session (setsid) puts it in a new scheduler autogroup, which"
                    + " slows a pipe by itself (see the setsid row and What remains)",
            "local 256 MiB stdout", "each command's own session (setsid) puts it in a new scheduler autogroup, which"
                    + " slows a pipe by itself (see the setsid row and What remains)",
            "local `exec true`", "the command's own session: one more exec per command (setsid), 2.3-2.9 ms on this VM;"
                    + " against a reference also under setsid (the next row) the core's own share is what remains (see What remains)",
            "local `files().write`", "the atomic replace: on ext4 (auto_da_alloc) a rename over an existing file starts"
                    + " the new file's writeback at once, which Files.copy's unlink-then-write (not atomic) never pays; against a"
                    + " copy renamed over the target (the next row) the ratio is about 1 (see What remains)",
            // Modal: measured 2026-12-05 on a quiet machine (see What remains): not a fixed cost.
            "modal `files().write`", "run-to-run spread, not a fixed cost: six full runs on a quiet machine gave 0.66 to 1.17"
                    + " (five under 1.0); 4 MiB stdin chunks instead of 1 MiB measured no different (see What remains)",
            "modal 64 MiB stdin", "run-to-run spread, not a fixed cost: six full runs on a quiet machine gave 0.58 to 0.87;"
                    + " 4 MiB chunks measured no different (see What remains)",
            "vercel `files().write`", "the commands around the one streamed upload, which the SDK's plain upload does not"
                    + " run: the guard's path check, the place script (a temp file below the physical parent; the upload runs"
                    + " beside it) and the finish script (mode, size check, atomic rename), each a command of 150-200 ms on the"
                    + " emulator (see What remains)");

    private Verdicts() {
    }

    static Row judge(Row r) {
        if (!r.verdict().isEmpty()) {
            return r;
        }
        if (r.airlock().failures() > 0 || r.reference().failures() > 0) {
            return r.withVerdict("miss: " + (r.airlock().failures() > 0 ? "Airlock" : "the reference") + " failed");
        }
        if (Double.isNaN(r.limit())) {
            return r.withVerdict(r.target().startsWith("(") ? "-" : "pass");
        }
        if (r.ratio() <= r.limit()) {
            return r.withVerdict("met");
        }
        String why = REASONS.entrySet().stream().filter(e -> r.scenario().startsWith(e.getKey())).map(Map.Entry::getValue)
                .findFirst().orElse(r.scenario().contains("agent turn") ? "see Agent turn in the analysis (the step medians are in the row)"
                        : "see What remains");
        return r.withVerdict("miss: " + why);
    }
}
