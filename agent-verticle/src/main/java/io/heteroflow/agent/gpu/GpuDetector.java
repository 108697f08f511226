package io.heteroflow.agent.gpu;

import io.heteroflow.protocol.GpuVendor;
import java.util.List;

/**
 * One vendor's detector (SPEC §8): reads that vendor's tool through the host probe and reports its cards.
 * An absent tool or device means "vendor absent" (an empty list, not an error); a tool that answers with
 * output the parser cannot read throws {@link ToolOutputException} with a clear message.
 */
public interface GpuDetector {
  GpuVendor vendor();

  List<DetectedCard> detect(HostProbe host) throws ToolOutputException;
}
