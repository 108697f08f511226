package io.heteroflow.agent.gpu.vendors;

import static io.heteroflow.agent.gpu.RecordedHost.sample;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.gpu.DetectionChain;
import io.heteroflow.agent.gpu.RecordedHost;
import io.heteroflow.protocol.GpuVendor;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The fixed detection order of SPEC §8 on hosts made of real recorded tool output. */
class DetectionChainTest {
  private static final DetectionChain CHAIN = DetectionChain.standard();

  @Test
  void theOrderIsTheSpecs() {
    assertEquals(List.of(GpuVendor.MUSA, GpuVendor.HYGON, GpuVendor.CAMBRICON, GpuVendor.BIREN, GpuVendor.ASCEND,
        GpuVendor.KUNLUN, GpuVendor.ILUVATAR, GpuVendor.NVIDIA, GpuVendor.METAX, GpuVendor.ENFLAME), CHAIN.order());
    assertEquals(List.of(GpuVendor.values()), CHAIN.order(), "the enum is declared in the same order");
  }

  @Test
  void anNvidiaHostIsFoundAfterEveryEarlierVendorIsAbsent() {
    RecordedHost host = new RecordedHost()
        .command(String.join(" ", NvidiaDetector.COMMAND), sample("nvidia/derived-query-gpu-tesla-p100-from-xml.csv"));
    DetectionChain.Detection found = CHAIN.detect(host);
    assertEquals(GpuVendor.NVIDIA, found.vendor());
    assertEquals(1, found.cards().size());
    assertEquals("Tesla P100-PCIE-16GB", found.cards().get(0).model());
    assertEquals(List.of(), found.errors());
    assertTrue(host.ran().indexOf(String.join(" ", MusaDetector.COMMAND))
        < host.ran().indexOf(String.join(" ", NvidiaDetector.COMMAND)), "musa is asked before nvidia");
  }

  @Test
  void onAMixedHostTheEarlierVendorWins() {
    RecordedHost host = new RecordedHost()
        .command(String.join(" ", MusaDetector.COMMAND), sample("musa/faq-s4000-gmi1.12.2.txt"))
        .command(String.join(" ", NvidiaDetector.COMMAND), sample("nvidia/derived-query-gpu-tesla-p100-from-xml.csv"));
    assertEquals(GpuVendor.MUSA, CHAIN.detect(host).vendor());
  }

  @Test
  void anUnreadableToolIsAnErrorAndTheChainGoesOn() {
    RecordedHost host = new RecordedHost()
        .command(String.join(" ", MusaDetector.COMMAND), "mthreads-gmi: driver not loaded\n")
        .command("npu-smi info", sample("ascend/910b2c-npu-smi-23.0.3.txt"));
    DetectionChain.Detection found = CHAIN.detect(host);
    assertEquals(GpuVendor.ASCEND, found.vendor());
    assertEquals(1, found.errors().size());
    assertTrue(found.errors().get(0).startsWith("musa: "), found.errors().toString());
  }

  @Test
  void aHostWithoutAnyVendorToolIsCpuOnly() {
    DetectionChain.Detection found = CHAIN.detect(new RecordedHost());
    assertNull(found.vendor());
    assertEquals(List.of(), found.cards());
    assertEquals(List.of(), found.errors());
  }
}
