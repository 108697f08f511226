package io.heteroflow.protocol;

import java.util.Locale;
import java.util.Optional;

/**
 * The ten GPU vendors, declared in the agent's fixed detection order (SPEC §8), each with the environment
 * variable its runtime reads to restrict a process to the assigned cards.
 */
public enum GpuVendor {
  MUSA("MUSA_VISIBLE_DEVICES"),
  HYGON("HIP_VISIBLE_DEVICES"),
  CAMBRICON("MLU_VISIBLE_DEVICES"),
  BIREN("SUPA_VISIBLE_DEVICES"),
  ASCEND("ASCEND_RT_VISIBLE_DEVICES"),
  KUNLUN("XPU_VISIBLE_DEVICES"),
  ILUVATAR("CUDA_VISIBLE_DEVICES"),
  NVIDIA("CUDA_VISIBLE_DEVICES"),
  METAX("CUDA_VISIBLE_DEVICES"),
  ENFLAME("TOPS_VISIBLE_DEVICES");

  private final String visibilityVariable;

  GpuVendor(String visibilityVariable) {
    this.visibilityVariable = visibilityVariable;
  }

  public String visibilityVariable() {
    return visibilityVariable;
  }

  /** The identifier used in task specs, labels and the API: lower case. */
  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Case-insensitive lookup of a vendor identifier. */
  public static Optional<GpuVendor> fromId(String id) {
    if (id == null) {
      return Optional.empty();
    }
    for (GpuVendor vendor : values()) {
      if (vendor.name().equalsIgnoreCase(id.trim())) {
        return Optional.of(vendor);
      }
    }
    return Optional.empty();
  }
}
