package dev.airlock.bench;

import java.util.List;
import java.util.Locale;

/** The Markdown table: one row per scenario, both sides' medians, the ratio against its target. */
final class Report {
    private Report() {
    }

    static String table(List<Row> rows) {
        StringBuilder b = new StringBuilder();
        b.append("| # | scenario | Airlock: how timed | reference: how timed | Airlock median | reference median | ratio | target | verdict | peak heap (Airlock / ref.) | peak RSS (Airlock / ref.) |\n");
        b.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Row r : rows) {
            boolean measured = r.airlock().count() > 0 || r.reference().count() > 0;
            b.append("| ").append(r.targetNo())
                    .append(" | ").append(r.scenario())
                    .append(" | ").append(r.airlockHow())
                    .append(" | ").append(r.referenceHow())
                    .append(" | ").append(measured ? time(r.airlock()) : "")
                    .append(" | ").append(measured ? time(r.reference()) : "")
                    .append(" | ").append(measured && r.reference().count() > 0 && r.airlock().count() > 0
                            ? String.format(Locale.ROOT, "%.2f", r.ratio()) : "")
                    .append(" | ").append(r.target())
                    .append(" | ").append(r.verdict())
                    .append(" | ").append(measured ? Memory.mib(r.airlock().heapPeak()) + " / " + Memory.mib(r.reference().heapPeak()) : "")
                    .append(" | ").append(measured ? Memory.mib(r.airlock().rssPeak()) + " / " + Memory.mib(r.reference().rssPeak()) : "")
                    .append(" |\n");
        }
        return b.toString();
    }

    /** The median, with the repetition count and any failures. */
    static String time(Sample s) {
        if (s.count() == 0) {
            return s.failures() > 0 ? "failed (" + s.failures() + "x: " + s.lastFailure().replace("|", "/") + ")" : "-";
        }
        String t = seconds(s.median()) + " (n=" + s.count() + ")";
        return s.failures() > 0 ? t + ", " + s.failures() + " failed: " + s.lastFailure().replace("|", "/") : t;
    }

    static String seconds(double s) {
        if (Double.isNaN(s)) {
            return "-";
        }
        return s < 1 ? String.format(Locale.ROOT, "%.1f ms", s * 1000) : String.format(Locale.ROOT, "%.2f s", s);
    }
}
