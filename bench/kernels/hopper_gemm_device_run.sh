#!/bin/bash
# One pass on an H100 over prebuilt binaries for the Hopper kernels: SASS facts, the GPU tests,
# compute-sanitizer (memcheck, racecheck, synccheck), the GEMM alone in every configuration next
# to cuBLASLt, and the presets and the gated sweep next to PyTorch eager and torch.compile (with
# DRAM bytes from Nsight Compute). Each step has its own time limit; logs go to OUT.
#   hopper_gemm_device_run.sh BIN OUT [STEPS...]
#   (steps: sass launch tests probe dram torch sanitize lab)
# BIN: the binaries named in docs/kernels.md, or the bin/ of a scripts/gpu_bundle.sh bundle.
# sass: scripts/sass_facts.py over the Hopper GEMM's and the fully fused MLP's kernels (fails on
# a kernel without wgmma or TMA, or on a GEMM kernel that spills). launch: one launch of the
# default gated configuration under Nsight Compute, whose launch statistics give its cluster size.
# Environment: DEADLINE (s, default 575), TORCH_PRESETS (presets for the torch step; empty for the
# sweep alone), TORCH_ARGS (more arguments for it, e.g. --only 8192x4096x14336), TORCH_LIMIT (its
# time limit in seconds, default 400), SAN_BENCH=0 (sanitizers on the runner's set only),
# SAN_TOOLS (default "memcheck racecheck synccheck"), LAB_DIR (lab step), CONFIGS (the probe's
# and the dram step's configurations, as --config arguments), PROBE_SHAPES / DRAM_SHAPES (their
# shapes), PROBE_ARGS (the probe's rounds, iterations and warm-up).
# dram: DRAM bytes per kernel (Nsight Compute) of each configuration and of cuBLASLt's GEMMs on
# DRAM_SHAPES.
# The GPU's power draw, SM clock and temperature are sampled every 100 ms into OUT/power.csv.
# lab: the Lab panel run headless (EGL) on a rows sweep of the Llama-3-8B widths (geglu-large)
# into OUT/llama_sweep.fsdb; needs LAB_DIR laid out as scripts/lab_gpu_run.sh describes.
set -u
BIN=$(cd "${1:?binary folder}" && pwd)
OUT=${2:?output folder}
shift 2
STEPS=${*:-sass launch tests lab probe torch sanitize}
mkdir -p "$OUT"
here=$(cd "$(dirname "$0")/../.." && pwd)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$BIN:${LD_LIBRARY_PATH:-}
# The tuner's candidates and the default without its L2 hint, timed in 5 interleaved rounds with
# cuBLASLt (medians of the rounds).
CONFIGS=${CONFIGS:-"--config coop:2:8:ms:ln --config coop:2:16:ms:ln --config coop:1:16:ms:ln --config pp:2:16:ms --config pp:1:16:ms --config coop:2:8:ms"}
PROBE_SHAPES=${PROBE_SHAPES:-"gated:8192:4096:14336:bf16:silu gated:8192:768:3072:bf16:gelu-tanh gated:1024:4096:14336:bf16:silu gated:16384:4096:14336:bf16:gelu-tanh gated:2048:2048:8192:fp16:silu plain:8192:14336:4096:bf16"}
DRAM_SHAPES=${DRAM_SHAPES:-"gated:8192:4096:14336:bf16:silu gated:16384:4096:14336:bf16:gelu-tanh plain:8192:14336:4096:bf16"}
DEADLINE=${DEADLINE:-575}  # seconds from the start for everything
step() { echo; echo "=== $* ($(date +%T), ${SECONDS}s)"; }
# The smaller of a step's own limit and what is left before the deadline.
lim() { local left=$((DEADLINE - SECONDS)); [ "$left" -lt "$1" ] && echo $((left > 5 ? left : 5)) || echo "$1"; }
has() { [[ " $STEPS " == *" $1 "* ]]; }
nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,temperature.gpu,clocks_event_reasons.sw_power_cap \
  --format=csv -lms 100 > "$OUT/power.csv" 2>/dev/null &
sampler=$!
trap 'kill $sampler 2>/dev/null' EXIT
{
  step device
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv
  if has sass; then
    step "SASS of the Hopper kernels"
    cuobjdump -sass "$BIN/kernels_bench" > "$OUT/sass.txt" 2>&1
    python3 "$here/scripts/sass_facts.py" --from-dump "$OUT/sass.txt"
    echo "rc=$?"
    # The fully fused MLP: two of its kernels spill by choice (8 and 16 bytes in the one-stage
    # 128-wide shape, docs/kernels.md), so its spills are counted, not failed.
    python3 "$here/scripts/sass_facts.py" --from-dump "$OUT/sass.txt" --kernel fused_mlp_sm90 \
      --allow-spills
    echo "rc=$?"
  fi
  if has launch; then
    step "the gated GEMM's launch (Nsight Compute launch statistics)"
    timeout $(lim 120) ncu --section LaunchStats --kernel-name regex:hopper_gemm_kernel \
      --launch-count 1 "$BIN/hopper_gemm_bench" --shape gated:2048:2048:8192:bf16:silu \
      --config coop:2:8:ms:ln --warmup 0 --iters 1 --rounds 1 --no-cublas > "$OUT/launch.log" 2>&1
    echo "rc=$?"
    grep -iE "cluster|grid size|block size|registers per|shared memory per block" "$OUT/launch.log"
  fi
  if has tests; then
    step "GPU tests"
    timeout $(lim 150) "$BIN/kernels_gpu_test" --gtest_brief=1 > "$OUT/gpu_tests.log" 2>&1
    echo "rc=$?"
    if [ -x "$BIN/kernels_capi_gpu_test" ]; then
      FUSIONSCOPE_REQUIRE_GPU=1 timeout $(lim 60) "$BIN/kernels_capi_gpu_test" --gtest_brief=1 2>&1 | tail -4
    fi
    grep -E "PASSED|FAILED|Failure|rel [0-9.e+-]+ .*(wgmma|Hopper)|fully fused MLP: wgmma|^\[" "$OUT/gpu_tests.log" | grep -v "^\[ *RUN\|^\[ *OK" | tail -25
  fi
  if has lab; then
    step "Lab sweep of the Llama widths (geglu-large, rows 1024 to 16384), headless"
    L=$(cd "${LAB_DIR:?}" && pwd)
    W=$(mktemp -d)
    tar -xJf "$L/bin.tar.xz" -C "$W"
    NVEGL=$(ls /usr/lib/x86_64-linux-gnu/libEGL_nvidia.so.0 /usr/local/nvidia/lib64/libEGL_nvidia.so.0 2>/dev/null | head -1)
    for f in /usr/share/glvnd/egl_vendor.d/10_nvidia.json /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json; do
      if [ -f "$f" ]; then export __EGL_VENDOR_LIBRARY_FILENAMES=$f; break; fi
    done
    (
      export LD_LIBRARY_PATH=$L/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64${NVEGL:+:$(dirname "$NVEGL")}
      export FUSIONSCOPE_FONT=$L/fonts/DejaVuSans.ttf
      unset DISPLAY WAYLAND_DISPLAY
      timeout $(lim 150) "$W/bin/fusionscope" screenshot "$OUT/llama_sweep.fsdb" --lab geglu-large \
        --lab-variants eager,pointwise-fused,gated-gemm --lab-sweep rows:1024:16384 \
        --lab-no-check --lab-iters 20 --lab-warmup 5 --out "$OUT/llama_sweep_gpu.png" --size 1600x1000
      echo "rc=$?"
      "$W/bin/fusionscope" report "$OUT/llama_sweep.fsdb" 2>&1 | head -40
    )
  fi
  if has probe; then
    step "the GEMM alone in every configuration next to cuBLASLt"
    timeout $(lim 150) "$BIN/hopper_gemm_bench" $CONFIGS --check-rows 64 ${PROBE_ARGS:---rounds 5 --iters 20 --warmup 3} \
      --json "$OUT/probe.json" $(for s in $PROBE_SHAPES; do echo --shape $s; done)
    echo "rc=$?"
  fi
  if has dram; then
    # One launch of each configuration and of cuBLASLt's GEMMs after the checked one (caches
    # flushed before each kernel by Nsight Compute).
    for s in $DRAM_SHAPES; do
      step "DRAM bytes per kernel, $s (Nsight Compute)"
      timeout $(lim 120) python3 "$here/scripts/ncu_kernels.py" --kernels 'hopper_gemm|nvjet|xmma|gemm_' -- \
        "$BIN/hopper_gemm_bench" $CONFIGS --shape "$s" --check-rows 64 --rounds 1 --iters 1 --warmup 0 --sets 1
    done
  fi
  if has torch; then
    step "presets and the gated sweep next to PyTorch (ratio table last)"
    PYTHONUNBUFFERED=1 timeout $(lim ${TORCH_LIMIT:-400}) python3 "$here/scripts/bench_vs_torch.py" \
      --bench "$BIN/kernels_bench" ${TORCH_PRESETS---preset geglu-post --preset mlp-narrow --preset linear-post} \
      --sweep --dram --warmup 10 --iters 100 ${TORCH_ARGS:-} --json "$OUT/torch.json" > "$OUT/torch.log" 2>&1
    echo "rc=$?"
    grep -v "^config\|^ *$" "$OUT/torch.log" | tail -75
  fi
  if has sanitize; then
    for tool in ${SAN_TOOLS:-memcheck racecheck synccheck}; do
      step "compute-sanitizer $tool: the runner's sanitize set (tuning times every configuration)"
      # racecheck takes ~130 s over this set on an H100, and ~46 s over the GEMM's below
      timeout $(lim 240) compute-sanitizer --tool $tool --print-limit 10 "$BIN/kernels_gpu_test" \
        --gtest_filter='RunnerGpuSanitize.*' --gtest_brief=1 2>&1 | grep -v "^  " | tail -6
      [ "${SAN_BENCH:-1}" = 1 ] || continue
      step "compute-sanitizer $tool: Hopper GEMM, every kind of tile, several tiles per CTA"
      # Cooperative 128 to 256 wide and 192 x 192, ping-pong, clusters of 1, 2 and 2 x 2,
      # dynamic tiles, split tails (over a partial wave and across tiles' ends) and a stagger;
      # a hidden width of 3000, K of 136 and 776 (no whole k-block). racecheck, far slower
      # (on an H200 past 120 s over the gated set of three shapes), takes the smaller ones.
      big_gated=gated:1000:776:3000:bf16:gelu-tanh big_plain=plain:256:520:28160:bf16
      [ $tool = racecheck ] && big_gated="" && big_plain=""
      timeout $(lim 240) compute-sanitizer --tool $tool --print-limit 10 "$BIN/hopper_gemm_bench" \
        --config coop:2:8:ms:ln coop:1:4:ms:ln pp:2:16:ms pp:1:16 coop128:2:8:ms:ln coop192:1:3:ns \
        coop:2:8:msd:ln coop:2x2:8:ms:ln coop:1:8:msk:ln coop192:2:8:msk:ln coop160:2:8:ms:ln \
        coop224:2:8:ms:ln coop192x192:1:8:ms:ln coop:2:8:ms:ln:4 --no-cublas --iters 1 --warmup 0 \
        --check-rows 0 --shape gated:300:200:328:bf16:gelu-tanh gated:1000:136:3000:fp16:silu \
        $big_gated 2>&1 | grep -v "^=========     \|^========= *$" | tail -24
      timeout $(lim 150) compute-sanitizer --tool $tool --print-limit 10 "$BIN/hopper_gemm_bench" \
        --config coop:2:8:ms:ln pp:2:16:ms coop128:2:8:ms:ln coop:2:8:msd:ln coop:1:8:msk:ln \
        coop192:2:8:msk:ln --no-cublas --iters 1 --warmup 0 --check-rows 0 \
        --shape plain:1000:136:776:bf16 $big_plain 2>&1 |
        grep -v "^=========     \|^========= *$" | tail -12
    done
  fi
  step done
} 2>&1 | tee "$OUT/log.txt"
