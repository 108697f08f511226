package io.heteroflow.protocol;

import java.util.Locale;
import java.util.Optional;

/**
 * The ten GPU vendors, declared in the agent's fixed detection order (SPEC §8), each with the environment
 * variable its runtime reads to restrict a process to the assigned cards, and the {@code torch.distributed}
 * backend its PyTorch build registers for its collective library (what ranks of one network domain use).
 */
public enum GpuVendor {
  /** torch_musa registers ProcessGroupMCCL as "mccl" (Moore Threads MCCL). */
  MUSA("MUSA_VISIBLE_DEVICES", "mccl"),
  /** DTK's PyTorch is a ROCm build: RCCL behind torch's "nccl" backend, devices as torch.cuda. */
  HYGON("HIP_VISIBLE_DEVICES", "nccl"),
  /** torch_mlu registers "cncl" (Cambricon CNCL). */
  CAMBRICON("MLU_VISIBLE_DEVICES", "cncl"),
  /** torch_supa switches init_process_group to "bccl" (Biren BCCL; its FAQ: "backend ... set to bccl"). */
  BIREN("SUPA_VISIBLE_DEVICES", "bccl"),
  /** torch_npu registers "hccl" (Huawei HCCL). */
  ASCEND("ASCEND_RT_VISIBLE_DEVICES", "hccl"),
  /**
   * torch_xmlir exposes Kunlunxin XPUs as torch.cuda and serves torch's "nccl" backend with BKCL (vLLM-Kunlun
   * uses dist_backend "nccl"). Not confirmed from Kunlunxin's own documentation: the most defensible choice.
   */
  KUNLUN("XPU_VISIBLE_DEVICES", "nccl"),
  /** Iluvatar CoreX is CUDA-compatible: its PyTorch build keeps "nccl" (IXCCL behind it). */
  ILUVATAR("CUDA_VISIBLE_DEVICES", "nccl"),
  NVIDIA("CUDA_VISIBLE_DEVICES", "nccl"),
  /**
   * MetaX MACA is CUDA-compatible: its PyTorch build keeps devices as torch.cuda and the "nccl" backend (MetaX's
   * MCCL behind it). Not confirmed from MetaX's own documentation: the most defensible choice.
   */
  METAX("CUDA_VISIBLE_DEVICES", "nccl"),
  /** torch_gcu registers "eccl" (Enflame ECCL). */
  ENFLAME("TOPS_VISIBLE_DEVICES", "eccl");

  /**
   * The backend of ranks that do not share a network domain (across VPCs, over public addresses), and of a
   * run without cards: gloo, which every PyTorch build has and which runs over plain TCP.
   */
  public static final String CROSS_DOMAIN_BACKEND = "gloo";

  private final String visibilityVariable;
  private final String collectiveBackend;

  GpuVendor(String visibilityVariable, String collectiveBackend) {
    this.visibilityVariable = visibilityVariable;
    this.collectiveBackend = collectiveBackend;
  }

  public String visibilityVariable() {
    return visibilityVariable;
  }

  /** The {@code torch.distributed} backend name of this vendor's collective library ("nccl", "hccl", …). */
  public String collectiveBackend() {
    return collectiveBackend;
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
