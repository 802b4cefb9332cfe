#!/usr/bin/env python3
"""Every gated and down-projection kernel choice in the whole forward pass, under sustained load,
next to torch.compile.

The set-up picks the gated GEMM's configuration and the down projection's kernel by timing each
alone in short bursts. Under the H100's and H200's 700 W cap a pass sustained for a while runs at
a clock set by its energy, so this times each choice as `bench_vs_torch.py` times the sweep:
whole passes in windows of at least --min-window-ms, every contender once per round in rotating
order, the median of --rounds rounds, with the mean SM clock and power of its windows. First it
prints the kernels of 20 passes of torch.compile and 20 of ours (tuned), interleaved, from the
PyTorch profiler, so each side's GEMMs can be held against each other from the same capture
(--passes sets how many; --kernels-only stops there).

  python3 scripts/bench_pins_vs_torch.py --bench build/bench/kernels/kernels_bench \\
      --shape 8192x768x3072:bf16:gelu-tanh --shape 1536x4096x3072:fp16:silu

Needs PyTorch with CUDA and libfusionscope_mlp.so beside kernels_bench (or --lib).
"""
import argparse
import statistics
import sys

import torch

import bench_vs_torch as b

# Pins tried besides the tuned choice (kernels_bench --pin-kernels syntax): each gated
# configuration with the tuned down projection, then the tuned gated GEMM with each of our down
# projection's configurations.
GATED = ["coop:2:8:ms:ln:0", "coop192:2:8:ms:ln:0", "coop192:1:8:ms:ln:0", "coop128:2:8:ms:ln:0",
         "coop192x192:2:8:ms:ln:0", "coop192x192:1:8:ms:ln:0",
         "coop:1:16:ms:ln:0", "coop:2x2:8:ms:ln:0", "coop:2:8:msk:ln:0", "coop:2:8:msd:ln:0",
         "pp:2:16:ms:nn:0"]
DOWN = ["cublaslt", "coop:2:8:ms:ln:0", "coop192:2:8:ms:ln:0", "coop192:1:8:ms:ln:0"]


def kernel_table(comp, x, tuned, passes):
    from torch.profiler import ProfilerActivity, profile
    with torch.no_grad(), profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(passes):
            comp(x[i % len(x)])
            tuned.forward(i % tuned.sets)
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="device_time_total", row_limit=8,
                                    max_name_column_width=80))


def one_shape(args, shape, ours, l2, sampler):
    cfg = b.sweep_config(shape)
    torch.manual_seed(0)
    model = b.build(cfg)
    dt = b.DTYPES[cfg["dtype"]]
    x = [torch.empty(cfg["rows"], cfg["widths"][0], device="cuda", dtype=dt).uniform_(-1, 1)
         for _ in range(b.input_sets(cfg, l2))]
    tuned = ours.create(cfg, "gated-gemm", "")
    x = b.on_our_numbers(model, cfg, x, {"gated-gemm": tuned})
    comp = b.compile_static(model)
    with torch.no_grad():
        comp(x[0])
    gated0, down0 = tuned.kernel_choices.split()[:2]
    print(f"{cfg['name']}: tuned {tuned.kernel_choices}")
    kernel_table(comp, x, tuned, args.passes)
    if args.kernels_only:
        tuned.close()
        return
    contenders = {"torch.compile": (comp, x), "tuned": (tuned.forward, list(range(tuned.sets)))}
    handles = [tuned]
    pins = [f"gated={g} {down0}" for g in GATED if f"gated={g}" != gated0]
    pins += [f"{gated0} down={d}" for d in DOWN if f"down={d}" != down0]
    for pin in pins:
        try:
            m = ours.create(cfg, "gated-gemm", pin)
        except RuntimeError as e:  # a pin that does not apply to this shape
            print(f"  {pin}: not set up: {e}")
            continue
        handles.append(m)
        contenders[pin] = (m.forward, list(range(m.sets)))
    us, iters, clocks = b.timed_rounds(contenders, args.warmup, args.iters, args.rounds,
                                       args.min_window_ms, sampler)
    ref = statistics.median(us["torch.compile"])
    print(f"  ({iters} passes a window, median of {args.rounds} rounds)")
    print(f"  {'what':<50} {'us':>8} {'vs compile':>10} {'rounds':>15}    MHz     W")
    for name, v in sorted(us.items(), key=lambda kv: statistics.median(kv[1])):
        med = statistics.median(v)
        print(f"  {name:<50} {med:8.1f} {ref / med:9.3f}x {min(v):7.1f}-{max(v):<7.1f} "
              f"{b.clock_text(b.median_clock(clocks[name]))}")
    for m in handles:
        m.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    b.add_shape_arguments(ap)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--min-window-ms", type=float, default=300)
    ap.add_argument("--passes", type=int, default=20,
                    help="passes of each side in the profiler's capture")
    ap.add_argument("--kernels-only", action="store_true",
                    help="print the captured kernels of each shape and time no pins")
    args = ap.parse_args()
    if args.passes < 1:
        ap.error("--passes must be at least 1")
    ours = b.load_ours(args)
    if ours is None:
        return 2
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 * 2**20)
    print(f"{props.name}, torch {torch.__version__}")
    sampler = b.GpuSampler(b.smi_index(str(getattr(props, "uuid", "") or "")))
    try:
        for shape in args.shape:
            one_shape(args, shape, ours, l2, sampler)
            torch.cuda.empty_cache()
    finally:
        sampler.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
