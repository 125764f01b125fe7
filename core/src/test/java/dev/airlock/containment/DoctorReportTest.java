package dev.airlock.containment;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The doctor's table stays readable when the evidence is long: one clause, and so one path, a line. */
class DoctorReportTest {

    @Test
    void longIsolationAndEvidenceTakeOneClauseALine() {
        DoctorReport r = new DoctorReport("local", "op@host", 1000, false, "airlock.container=no", "profile", "none",
                Optional.empty(), "on", "bwrap: read-only /; the real home hidden; writable: the private dir, the working directory /w; network on",
                List.of(new DoctorReport.Row("TMPDIR", DoctorReport.Verdict.CONTAINED_ENFORCED, "TMPDIR=/tmp/a/tmp (mode 700); / is read-only"),
                        new DoctorReport.Row("HOME", DoctorReport.Verdict.CONTAINED_ENFORCED, "HOME=/h")));

        assertEquals("""
                airlock doctor: local backend, op@host (uid 1000)
                container: no (airlock.container=no); home mode: profile; profile: none
                command guard: on
                isolation: bwrap: read-only /
                  the real home hidden
                  writable:
                    the private dir
                    the working directory /w
                  network on

                EXIT    VERDICT               EVIDENCE
                TMPDIR  contained (enforced)  TMPDIR=/tmp/a/tmp (mode 700)
                                              / is read-only
                HOME    contained (enforced)  HOME=/h

                nothing leaks (exit status 0)
                """, r.toText());
    }
}
