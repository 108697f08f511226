#!/usr/bin/env bash
# Runs on the GPU host from inside build/gpu-check/ (see docs/real-gpu-check.md): the agent's detection chain
# and topology against the real vendor tools, then a real task printing torch.cuda.device_count() and the
# device name under the CUDA_VISIBLE_DEVICES the agent injects. Raw tool output and report.json go to $1.
set -uo pipefail
cd "$(dirname "$0")"
OUT="${1:-${OUT:-./gpu-check-out}}"
mkdir -p "$OUT"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || true
python3 -c 'import torch; print(torch.__version__, torch.version.cuda)' > "$OUT/python-torch.txt" 2>&1 || true
./jre/bin/java -cp "lib/*" io.heteroflow.agent.GpuCheck "$OUT" 2>&1 | tee "$OUT/gpu-check.log"
