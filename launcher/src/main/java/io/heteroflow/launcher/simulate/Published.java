package io.heteroflow.launcher.simulate;

import java.util.Map;

/**
 * The FGD paper's published GPU allocation ratios at 100 % arrived demand (mean of 10 seeds), as given in
 * ../shared/traces/README.md: Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD.
 */
final class Published {
  static final String[] COLUMNS = {"Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD"};
  static final Map<String, double[]> AT_100 = Map.ofEntries(
      Map.entry("default", new double[] {86.30, 90.62, 91.65, 91.78, 92.86, 95.23}),
      Map.entry("cpu050", new double[] {89.02, 93.03, 93.52, 93.46, 93.56, 95.00}),
      Map.entry("cpu100", new double[] {87.44, 91.73, 92.42, 92.50, 93.26, 95.21}),
      Map.entry("cpu200", new double[] {83.03, 87.45, 89.67, 89.98, 92.15, 94.82}),
      Map.entry("cpu250", new double[] {80.00, 83.57, 87.75, 88.05, 91.21, 93.20}),
      Map.entry("gpushare40", new double[] {84.86, 89.30, 89.76, 89.77, 91.44, 93.96}),
      Map.entry("gpushare60", new double[] {82.81, 86.82, 86.90, 87.15, 89.06, 91.25}),
      Map.entry("gpushare80", new double[] {80.62, 84.14, 84.50, 84.65, 86.66, 89.08}),
      Map.entry("gpushare100", new double[] {78.90, 81.98, 82.22, 82.13, 84.62, 86.64}),
      Map.entry("gpuspec10", new double[] {86.26, 90.17, 91.96, 92.24, 93.10, 94.66}),
      Map.entry("gpuspec20", new double[] {85.90, 88.29, 89.11, 89.28, 88.46, 94.66}),
      Map.entry("gpuspec25", new double[] {85.42, 85.44, 86.41, 86.77, 85.67, 93.91}),
      Map.entry("gpuspec33", new double[] {83.87, 79.82, 81.09, 82.22, 80.39, 87.84}),
      Map.entry("multigpu20", new double[] {86.92, 91.85, 93.34, 93.50, 93.73, 95.53}),
      Map.entry("multigpu30", new double[] {86.63, 93.11, 94.55, 94.70, 94.57, 96.36}),
      Map.entry("multigpu40", new double[] {85.38, 94.04, 95.35, 95.59, 95.10, 96.91}),
      Map.entry("multigpu50", new double[] {81.28, 94.73, 95.69, 96.06, 95.62, 97.09}));

  private Published() {}

  /** The published baseline closest to one of our policies: binpack ~ GpuPacking, bestfit ~ BestFit, frag ~ FGD. */
  static String counterpart(String policy) {
    return switch (policy) {
      case "binpack" -> "GpuPacking";
      case "bestfit" -> "BestFit";
      case "frag" -> "FGD";
      default -> "Random";
    };
  }

  static Double value(String trace, String column) {
    double[] row = AT_100.get(trace);
    if (row == null) {
      return null;
    }
    for (int i = 0; i < COLUMNS.length; i++) {
      if (COLUMNS[i].equals(column)) {
        return row[i];
      }
    }
    return null;
  }
}
