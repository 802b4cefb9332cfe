#!/bin/bash
# One pass on a GPU machine over prebuilt binaries: libraries present, SASS check, unit and GPU
# tests, compute-sanitizer (memcheck, racecheck) over every variant on small shapes, the kernel
# benchmark and the PyTorch comparison. Usage: device_run.sh BIN_DIR OUT_DIR
set -u
BIN=${1:?binary folder}
OUT=${2:?output folder}
mkdir -p "$OUT"
LOG="$OUT/summary.log"
step() { echo; echo "=== $* ($(date +%T))"; }
{
  step "device"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  step "CUDA libraries on this machine"
  ls /usr/local/cuda*/lib64 2>/dev/null | grep -E "libcublas|libcupti|libnvToolsExt" | sort -u
  ls -d /usr/local/cuda*/extras/CUPTI/lib64 2>/dev/null && ls /usr/local/cuda*/extras/CUPTI/lib64 | head
  LT=$(find /usr/local /usr/lib /opt -name "libcublasLt.so.13*" 2>/dev/null | head -1)
  echo "libcublasLt: ${LT:-not found}"
  [ -n "$LT" ] && export LD_LIBRARY_PATH="$(dirname "$LT"):${LD_LIBRARY_PATH:-}"
  ldd "$BIN/kernels_bench" | grep -E "cublas|not found"

  step "SASS of the gated GEMM (Hopper kernel must use HGMMA)"
  cuobjdump -sass "$BIN/kernels_bench" > /tmp/sass.txt 2>&1
  awk '/Function :/{f=$3} /HGMMA/{n[f]++} END{for(k in n) print n[k], k}' /tmp/sass.txt | sort -k2 | head -20
  echo "HGMMA total: $(grep -c HGMMA /tmp/sass.txt)  HMMA total: $(grep -c 'HMMA\.' /tmp/sass.txt)"
  grep -A0 "Function :.*hopper_gemm_kernel" /tmp/sass.txt | head -2

  step "unit tests"
  timeout 60 "$BIN/kernels_config_test" --gtest_brief=1
  step "GPU tests"
  timeout 240 "$BIN/kernels_gpu_test"
  step "benchmark"
  timeout 120 "$BIN/kernels_bench" --json "$OUT/bench.json"
  step "PyTorch comparison"
  PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench_vs_torch.py --bench "$BIN/kernels_bench" \
      --json "$OUT/torch.json"
  step "Nsight Compute: DRAM bytes of our fused kernels"
  for pair in "geglu-post gated-gemm hopper_gemm" "mlp-narrow fully-fused fused_mlp"; do
    set -- $pair
    timeout 60 ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
        -k regex:"$3" --launch-skip 1 --launch-count 1 "$BIN/kernels_bench" --preset "$1" \
        --variant "$2" --warmup 1 --iters 2 --no-host-time 2>&1 |
        grep -E "$3|dram__|gpu__time" | cut -c1-120
  done
  for tool in memcheck racecheck synccheck; do
    step "compute-sanitizer $tool (every variant and kernel path once, small shapes)"
    timeout 120 compute-sanitizer --tool $tool --print-limit 20 "$BIN/kernels_gpu_test" \
        --gtest_filter='RunnerGpuSanitize.*' --gtest_brief=1 2>&1 | grep -v "^  " | tail -12
  done
  step "done"
} 2>&1 | tee "$LOG"
