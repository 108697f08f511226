package io.heteroflow.controlplane.scheduler.framework;

/** Why a task is not (yet) placed: the codes of SPEC §11, shown in the task view and the diagnostics ledger. */
public enum ReasonCode {
  NoSchedulableNodes,
  InsufficientResources,
  GPUTypeUnavailable,
  NoTenantEligibleGPU,
  NVLinkDomainUnavailable,
  RDMAUnavailable,
  LoadThresholdExceeded,
  PortsExhausted,
  ShardAllocationFailed,
  BindConflict,
  PreemptionPending,
  GangIncomplete,
  QuotaExceeded,
  /** Every node that could take it is reserved for a task or group ahead of it that it would delay (SPEC §13). */
  Reserved
}
