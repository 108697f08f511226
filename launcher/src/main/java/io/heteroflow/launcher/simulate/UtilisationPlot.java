package io.heteroflow.launcher.simulate;

import java.util.List;
import java.util.Locale;

/** An SVG plot of the replay's GPU allocation over simulated time (the arrival window), one line per policy. */
final class UtilisationPlot {
  private static final String[] COLORS = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"};
  private static final int WIDTH = 720;
  private static final int HEIGHT = 420;
  private static final int MARGIN = 50;

  private UtilisationPlot() {}

  static String svg(List<ReplaySimulation.Run> runs, String trace) {
    ReplaySimulation.Run first = runs.get(0);
    double hours = first.sampleStep() * (first.samples().length - 1) / 3600.0;
    StringBuilder svg = new StringBuilder(String.format(Locale.ROOT,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\""
            + " font-size=\"12\">%n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n", WIDTH, HEIGHT));
    svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"20\">GPU allocation over simulated time (%s, replay"
        + " with departures, arrivals compressed %sx, seed %d)</text>%n", MARGIN, trace,
        trim(first.workload().compress()), first.workload().seed()));
    int hourTick = Math.max(1, (int) Math.ceil(hours / 10));
    for (int h = 0; h <= hours; h += hourTick) {
      double x = x(h / hours);
      svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
          + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d h</text>%n", x, MARGIN, x, HEIGHT - MARGIN, x,
          HEIGHT - MARGIN + 16, h));
    }
    for (int tick = 0; tick <= 100; tick += 20) {
      svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
          + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d%%</text>%n", MARGIN, y(tick), WIDTH - MARGIN, y(tick),
          MARGIN - 6, y(tick) + 4, tick));
    }
    int line = 0;
    for (ReplaySimulation.Run run : runs) {
      StringBuilder points = new StringBuilder();
      double[] samples = run.samples();
      for (int i = 0; i < samples.length; i++) {
        points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x(i / (double) (samples.length - 1)),
            y(100 * samples[i])));
      }
      String color = COLORS[line % COLORS.length];
      svg.append(String.format(Locale.ROOT, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\""
          + " points=\"%s\"/>%n", color, points.toString().trim()));
      svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s: mean %.1f%%</text>%n",
          MARGIN + 10, MARGIN + 16 + 16 * line, color, run.policy(), 100 * run.meanUtilisation()));
      line++;
    }
    svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">simulated time (first to"
        + " last arrival)</text>%n</svg>%n", WIDTH / 2, HEIGHT - 10));
    return svg.toString();
  }

  private static String trim(double value) {
    return value == Math.rint(value) ? String.valueOf((long) value) : String.valueOf(value);
  }

  private static double x(double fraction) {
    return MARGIN + (WIDTH - 2.0 * MARGIN) * fraction;
  }

  private static double y(double percent) {
    return HEIGHT - MARGIN - (HEIGHT - 2.0 * MARGIN) * percent / 100.0;
  }
}
