package io.heteroflow.launcher.simulate;

import java.util.List;
import java.util.Locale;

/** An SVG plot of GPU allocation ratio against arrived GPU demand, one line per policy (first trace only). */
final class AllocationPlot {
  private static final String[] COLORS = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"};
  private static final int WIDTH = 640;
  private static final int HEIGHT = 420;
  private static final int MARGIN = 50;

  private AllocationPlot() {}

  static String svg(List<SimulateCommand.Result> results) {
    String trace = results.get(0).trace();
    StringBuilder svg = new StringBuilder(String.format(Locale.ROOT,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">%n"
            + "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n", WIDTH, HEIGHT));
    svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"20\">GPU allocation ratio vs arrived GPU demand (%s, mean of"
        + " seeds)</text>%n", MARGIN, trace));
    for (int tick = 0; tick <= 130; tick += 10) {
      svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
          + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d%%</text>%n", x(tick), MARGIN, x(tick),
          HEIGHT - MARGIN, x(tick), HEIGHT - MARGIN + 16, tick));
    }
    for (int tick = 0; tick <= 100; tick += 20) {
      svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
          + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d%%</text>%n", MARGIN, y(tick), WIDTH - MARGIN, y(tick),
          MARGIN - 6, y(tick) + 4, tick));
    }
    int line = 0;
    for (SimulateCommand.Result result : results) {
      if (!result.trace().equals(trace)) {
        continue;
      }
      StringBuilder points = new StringBuilder();
      for (int percent = 0; percent <= 130; percent++) {
        points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x(percent), y(result.mean(percent))));
      }
      String color = COLORS[line % COLORS.length];
      svg.append(String.format(Locale.ROOT, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>%n",
          color, points.toString().trim()));
      svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s: %.2f%% at 100%%</text>%n",
          MARGIN + 10, MARGIN + 16 + 16 * line, color, result.policy(), result.mean(100)));
      line++;
    }
    svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">arrived GPU demand (%% of capacity)"
        + "</text>%n</svg>%n", WIDTH / 2, HEIGHT - 10));
    return svg.toString();
  }

  private static double x(double percent) {
    return MARGIN + (WIDTH - 2.0 * MARGIN) * percent / 130.0;
  }

  private static double y(double percent) {
    return HEIGHT - MARGIN - (HEIGHT - 2.0 * MARGIN) * percent / 100.0;
  }
}
