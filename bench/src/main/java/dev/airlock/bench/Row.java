package dev.airlock.bench;

/**
 * One line of the results table: {@code targetNo} is the target number, {@code target}
 * its text (for example "<= 1.3"), {@code limit} the ratio it allows (NaN when it is not a ratio),
 * {@code verdict} "met", "pass", or "miss: reason" (filled in by {@link Verdicts}).
 */
record Row(String targetNo, String scenario, String airlockHow, String referenceHow, Sample airlock, Sample reference,
           String target, double limit, String verdict) {

    double ratio() {
        return airlock.median() / reference.median();
    }

    /** A row whose sides were not measured, with the reason. */
    static Row notMeasured(String targetNo, String scenario, String target, String why) {
        return new Row(targetNo, scenario, "", "", new Sample(), new Sample(), target, Double.NaN, "not measured: " + why);
    }

    Row withVerdict(String v) {
        return new Row(targetNo, scenario, airlockHow, referenceHow, airlock, reference, target, limit, v);
    }
}
