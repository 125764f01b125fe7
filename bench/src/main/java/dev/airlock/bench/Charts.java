package dev.airlock.bench;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Growth charts (log-log): one series per backend and side, median seconds against size or concurrency. */
final class Charts {
    private Charts() {
    }

    /**
     * Draws the series of {@code growth} whose label ends with {@code suffix} (for example "stdin")
     * into {@code file} (PNG). Each label maps an x value to {airlock, reference} medians.
     */
    static boolean draw(Path file, String title, String xTitle, String yTitle, Map<String, Map<Integer, double[]>> growth,
                        String suffix, Map<String, String> referenceNames) throws IOException {
        XYChart chart = new XYChartBuilder().width(900).height(560).title(title).xAxisTitle(xTitle).yAxisTitle(yTitle).build();
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setYAxisLogarithmic(true);
        chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNW);
        chart.getStyler().setDecimalPattern("#,##0.###");
        boolean any = false;
        for (Map.Entry<String, Map<Integer, double[]>> e : growth.entrySet()) {
            if (!e.getKey().endsWith(suffix) || e.getValue().size() < 2) {
                continue;
            }
            String backend = e.getKey().substring(0, e.getKey().length() - suffix.length()).strip();
            for (int side = 0; side < 2; side++) {
                List<Double> xs = new ArrayList<>();
                List<Double> ys = new ArrayList<>();
                for (Map.Entry<Integer, double[]> p : e.getValue().entrySet()) {
                    double y = p.getValue()[side];
                    if (!Double.isNaN(y) && y > 0) {
                        xs.add((double) p.getKey());
                        ys.add(y);
                    }
                }
                if (xs.size() < 2) {
                    continue;
                }
                String name = backend + (side == 0 ? " Airlock" : " " + referenceNames.getOrDefault(backend, "reference"));
                var s = chart.addSeries(name, xs, ys);
                s.setMarker(side == 0 ? SeriesMarkers.CIRCLE : SeriesMarkers.DIAMOND);
                any = true;
            }
        }
        if (any) {
            BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        }
        return any;
    }
}
