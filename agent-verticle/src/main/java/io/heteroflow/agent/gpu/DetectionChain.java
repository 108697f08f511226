package io.heteroflow.agent.gpu;

import io.heteroflow.agent.gpu.vendors.AscendDetector;
import io.heteroflow.agent.gpu.vendors.BirenDetector;
import io.heteroflow.agent.gpu.vendors.CambriconDetector;
import io.heteroflow.agent.gpu.vendors.EnflameDetector;
import io.heteroflow.agent.gpu.vendors.HygonDetector;
import io.heteroflow.agent.gpu.vendors.IluvatarDetector;
import io.heteroflow.agent.gpu.vendors.KunlunDetector;
import io.heteroflow.agent.gpu.vendors.MetaxDetector;
import io.heteroflow.agent.gpu.vendors.MusaDetector;
import io.heteroflow.agent.gpu.vendors.NvidiaDetector;
import io.heteroflow.protocol.GpuVendor;
import java.util.ArrayList;
import java.util.List;

/**
 * The detectors in SPEC §8's fixed order — musa → hygon → cambricon → biren → ascend → kunlun → iluvatar →
 * nvidia → metax → enflame. The first vendor that reports cards is the node's vendor; a detector whose tool
 * answered unreadably is recorded as an error and the chain goes on (never a crash, never invented cards).
 */
public final class DetectionChain {
  private final List<GpuDetector> detectors;

  public DetectionChain(List<GpuDetector> detectors) {
    this.detectors = List.copyOf(detectors);
  }

  public static DetectionChain standard() {
    return new DetectionChain(List.of(new MusaDetector(), new HygonDetector(), new CambriconDetector(),
        new BirenDetector(), new AscendDetector(), new KunlunDetector(), new IluvatarDetector(), new NvidiaDetector(),
        new MetaxDetector(), new EnflameDetector()));
  }

  public List<GpuVendor> order() {
    return detectors.stream().map(GpuDetector::vendor).toList();
  }

  /** What detection found: the vendor and its cards (none: a CPU-only host), and each detector's error. */
  public record Detection(GpuVendor vendor, List<DetectedCard> cards, List<String> errors) {
  }

  public Detection detect(HostProbe host) {
    List<String> errors = new ArrayList<>();
    for (GpuDetector detector : detectors) {
      try {
        List<DetectedCard> cards = detector.detect(host);
        if (!cards.isEmpty()) {
          return new Detection(detector.vendor(), cards, errors);
        }
      } catch (ToolOutputException e) {
        errors.add(detector.vendor().id() + ": " + e.getMessage());
      } catch (RuntimeException e) {
        errors.add(detector.vendor().id() + ": unexpected " + e);
      }
    }
    return new Detection(null, List.of(), errors);
  }
}
