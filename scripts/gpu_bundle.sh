#!/usr/bin/env bash
# Runs fusionscope's GPU work on a GPU server from binaries built on a development machine, for
# servers that have the NVIDIA driver and the CUDA Toolkit but none of our Debian libraries.
#
#   scripts/gpu_bundle.sh pack BUILD_DIR BUNDLE   (development machine) gather and strip the `gpu`
#                                                  test programs, benchmarks and fusionscope, plus
#                                                  the shared libraries a bare server lacks
#   scripts/gpu_bundle.sh run BUNDLE OUT STEP...  (GPU server) run steps, logs and files to OUT:
#       tests    every gpu-labelled test program under FUSIONSCOPE_REQUIRE_GPU=1, so a test that
#                cannot run fails rather than skips (summary: passed/failed per program)
#       bench    kernel benchmark, PyTorch eager/compile side by side, tracing overhead
#       sample   capture the built-in sample session (bench/profiler/sample_session*_job.json)
#                with calibrated ceilings, and print its report
#   `run` exits 1 when any step failed (a test program, a benchmark or a capture), 2 on bad arguments.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
verb=${1:-}
shift || true

gpu_tests=(tests/kernels/kernels_gpu_test tests/kernels/kernels_capi_gpu_test tests/profiler/profiler_gpu_tests
  tests/profiler/lab_gpu_tests tests/profiler/lab_counters_gpu_tests
  tests/counters/counters_gpu_test tests/profiler/counters_ncu_gpu_tests
  tests/profiler/inject_gpu_tests)
# hopper_gemm_bench: for bench/kernels/hopper_gemm_device_run.sh over the unpacked bin/.
programs=(app/fusionscope bench/kernels/kernels_bench bench/kernels/libfusionscope_mlp.so
  bench/kernels/hopper_gemm_bench
  bench/profiler/fusionscope_capture_overhead
  bench/counters/counters_calibrate tests/profiler/counters_ncu_workload
  bench/profiler/fusionscope_injection_overhead tests/profiler/cuda_target)

pack() {
  local build=${1:?build dir} dest=${2:?bundle dir}
  rm -rf "$dest" && mkdir -p "$dest/bin" "$dest/lib"
  for p in "${gpu_tests[@]}" "${programs[@]}"; do
    cp "$build/$p" "$dest/bin/" && strip --strip-debug "$dest/bin/$(basename "$p")"
  done
  # Injection capture: the library and the PyTorch variants' script live beside fusionscope.
  cp "$build/app/libfusionscope_inject.so" "$build/app/torch_mlp.py" "$dest/bin/" &&
    strip --strip-debug "$dest/bin/libfusionscope_inject.so"
  # The injection GPU tests' Python programs (torchrun ranks, DataLoader workers), found beside
  # the test program.
  cp "$here"/tests/profiler/inject/scripts/*.py "$dest/bin/"
  # Shared libraries of fusionscope that a bare GPU server may not have (the window system's, and
  # the trace importer's simdjson and ISA-L).
  ldd "$build/app/fusionscope" | awk '/=> \//{print $3}' |
    grep -E 'libglfw|libGL|libEGL|libOpenGL|libX|libxcb|libbsd|libmd|libsimdjson|libisal' |
    xargs -r cp -L -t "$dest/lib"
  # EGL (headless screenshots on the server's driver) is loaded at run time, so ldd misses it.
  for l in libEGL.so.1 libGLX.so.0 libGL.so.1; do cp -L "/usr/lib/x86_64-linux-gnu/$l" "$dest/lib/"; done
  cp -L /usr/local/cuda/lib64/libcupti.so.13 "$dest/lib/" 2>/dev/null || true
  tar -C "$dest" -cJf "$dest/bin.tar.xz" bin && rm -rf "${dest:?}/bin"
  du -sh "$dest"
}

run() {
  local bundle out work
  bundle=$(cd "${1:?bundle dir}" && pwd)
  out=${2:?out dir}
  shift 2
  mkdir -p "$out" && out=$(cd "$out" && pwd)
  work=$(mktemp -d)
  tar -xJf "$bundle/bin.tar.xz" -C "$work"
  # $work/bin: libfusionscope_mlp.so, which kernels_capi_gpu_test links.
  export LD_LIBRARY_PATH="/usr/local/cuda/lib64:$bundle/lib:$work/bin:${LD_LIBRARY_PATH:-}"
  export FUSIONSCOPE_SOURCE_DIR="$here"
  export FUSIONSCOPE_SCRATCH_DIR="$work/scratch"  # the tests' files, not the build machine's paths
  local bin="$work/bin"
  local failures=()
  # fail NAME RC: remembers a step that failed; the run's exit status says so at the end.
  fail() {
    [ "$2" -eq 0 ] && return 0
    failures+=("$1 (exit $2)")
    return 1
  }
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  for step in "$@"; do
    echo "=== $step ($(date +%T))"
    case "$step" in
      tests)
        for t in "${gpu_tests[@]}"; do
          local name
          name=$(basename "$t")
          FUSIONSCOPE_REQUIRE_GPU=1 timeout 300 "$bin/$name" --gtest_brief=1 >"$out/$name.log" 2>&1
          local rc=$?
          fail "$name" "$rc"
          printf '%-26s rc=%-3s %s\n' "$name" "$rc" \
            "$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$name.log" | tr '\n' ' ')"
          grep -E '^\[  FAILED  \]' "$out/$name.log" | head -5
        done
        ;;
      bench)
        timeout 150 "$bin/kernels_bench" --json "$out/kernels_bench.json" >"$out/kernels_bench.log" 2>&1
        fail kernels_bench $?
        tail -30 "$out/kernels_bench.log"
        PYTHONUNBUFFERED=1 timeout 240 python3 "$here/scripts/bench_vs_torch.py" \
          --bench "$bin/kernels_bench" --json "$out/torch.json" >"$out/bench_vs_torch.log" 2>&1
        fail bench_vs_torch $?
        tail -30 "$out/bench_vs_torch.log"
        timeout 120 "$bin/fusionscope_capture_overhead" --rounds 5 >"$out/overhead.log" 2>&1
        fail capture_overhead $?
        tail -15 "$out/overhead.log"
        # Injection capture of the PyTorch GeGLU beside torch.profiler, same script, one run.
        timeout 300 "$bin/fusionscope_injection_overhead" --rounds 5 >"$out/injection_overhead.log" 2>&1
        fail injection_overhead $?
        tail -8 "$out/injection_overhead.log"
        ;;
      sample)
        local s="$out/sample.fsdb"
        rm -f "$s"
        "$bin/fusionscope" capture --config "$here/bench/profiler/sample_session_job.json" --out "$s" \
          >"$out/sample_capture.log" 2>&1
        fail "sample capture" $? || tail "$out/sample_capture.log"
        "$bin/fusionscope" capture --config "$here/bench/profiler/sample_session_geglu_job.json" \
          --out "$s" --append >>"$out/sample_capture.log" 2>&1
        fail "geglu capture" $?
        # The post's GeGLU in PyTorch (torch-eager, torch-compile) under injection capture.
        "$bin/fusionscope" capture --config "$here/bench/profiler/sample_session_torch_job.json" \
          --out "$s" --append >>"$out/sample_capture.log" 2>&1
        fail "torch capture" $?
        "$bin/fusionscope" capture --preset linear-post --variants eager,fully-fused --graph \
          --warmup 2 --iters 5 --out "$s" --append >>"$out/sample_capture.log" 2>&1
        fail "graph capture" $?
        "$bin/fusionscope" calibrate --session "$s" >"$out/calibrate.log" 2>&1
        fail calibrate $?
        tail -4 "$out/calibrate.log"
        "$bin/fusionscope" report "$s" --top 3 >"$out/report.log" 2>&1
        fail report $?
        head -60 "$out/report.log"
        ls -la "$s"
        ;;
      *)
        echo "unknown step: $step" >&2
        failures+=("unknown step $step")
        ;;
    esac
  done
  if [ ${#failures[@]} -gt 0 ]; then
    echo "=== FAILED: ${failures[*]}"
    return 1
  fi
  echo "=== all steps passed"
}

case "$verb" in
  pack) pack "$@" ;;
  run) run "$@" ;;
  *)
    sed -n 2,15p "$0" >&2
    exit 2
    ;;
esac
