#!/usr/bin/env python3
"""Energy per forward pass of PyTorch eager, torch.compile and our gated-gemm, from the GPU's own
energy counter.

Under the H100's and H200's 700 W cap a sustained pass runs at the clock its power allows, so its
time is its energy divided by the cap: two passes at the cap take times in the ratio of their
energies, and no kernel tuning changes that ratio unless it changes the energy. This reads NVML's
total energy counter (millijoules since the driver loaded) before and after a window of about
--window-s seconds of back-to-back passes of each contender, in rotating order, --rounds rounds,
and prints per pass the median energy (with the rounds' range), time and mean power, then the
energy ratio beside the time ratio. PyTorch computes on our numbers (bench_vs_torch.py's
on_our_numbers). Each window follows --settle-s seconds of the same passes, unread: the counter
lags the draw, and read around bench_vs_torch.py's windows of 0.3-0.5 s straight after another
contender's (on an H200) it gave the post's torch.compile and our pass about the same energy,
147.7 and 145.9 mJ, against 170 and 129 from their power times their time.

  python3 scripts/bench_energy_vs_torch.py --bench build/bench/kernels/kernels_bench \\
      --shape 8192x768x3072:bf16:gelu-tanh --shape 1536x4096x3072:fp16:silu

Needs PyTorch with CUDA, the driver's libnvidia-ml.so.1 and libfusionscope_mlp.so beside
kernels_bench (or --lib).
"""
import argparse
import ctypes
import statistics
import sys
import time

import torch

import bench_vs_torch as b


class EnergyCounter:
    """NVML's total energy of one GPU, in millijoules; raises OSError where it cannot be read."""

    def __init__(self, index):
        self.nvml = ctypes.CDLL("libnvidia-ml.so.1")
        self.handle = ctypes.c_void_p()
        if self.nvml.nvmlInit_v2() or self.nvml.nvmlDeviceGetHandleByIndex_v2(
                index, ctypes.byref(self.handle)):
            raise OSError("NVML did not start or does not know this GPU")
        self.read()  # fails here, not mid-run, where the GPU keeps no energy counter

    def read(self):
        e = ctypes.c_ulonglong()
        rc = self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle, ctypes.byref(e))
        if rc:
            raise OSError(f"NVML's energy counter cannot be read on this GPU (status {rc})")
        return e.value


def one_shape(args, shape, ours, counter, l2):
    cfg = b.sweep_config(shape)
    torch.manual_seed(0)
    model = b.build(cfg)
    x = [torch.empty(cfg["rows"], cfg["widths"][0], device="cuda",
                     dtype=b.DTYPES[cfg["dtype"]]).uniform_(-1, 1)
         for _ in range(b.input_sets(cfg, l2))]
    mine = ours.create(cfg, "gated-gemm", "")
    x = b.on_our_numbers(model, cfg, x, {"gated-gemm": mine})
    comp = b.compile_static(model)
    with torch.no_grad():
        comp(x[0])
    contenders = {"torch eager": (model, x), "torch.compile": (comp, x),
                  "ours gated-gemm": (mine.forward, list(range(mine.sets)))}
    fastest = min(b.time_fn(fn, ins, 10, 50) for fn, ins in contenders.values())
    passes = max(100, int(args.window_s * 1e6 / fastest))
    got = {n: [] for n in contenders}  # (mJ, us, W) per pass, per round
    names = list(contenders)
    with torch.no_grad():
        for r in range(args.rounds):
            for n in names[r % len(names):] + names[:r % len(names)]:
                fn, ins = contenders[n]
                for i in range(int(passes * args.settle_s / args.window_s)):
                    fn(ins[i % len(ins)])
                torch.cuda.synchronize()
                e0, t0 = counter.read(), time.monotonic()
                for i in range(passes):
                    fn(ins[i % len(ins)])
                torch.cuda.synchronize()
                e1, t1 = counter.read(), time.monotonic()
                got[n].append(((e1 - e0) / passes, (t1 - t0) / passes * 1e6,
                               (e1 - e0) / (t1 - t0) / 1e3))
    print(f"\n{cfg['name']} {cfg['dtype']} {cfg['activation']}: {passes} passes a window, median "
          f"of {args.rounds} rounds; ours {mine.kernel_choices}")
    print(f"  {'what':<16} {'mJ a pass':>10} {'rounds':>17} {'us a pass':>10} {'W':>5}")
    med = {}
    for n, v in got.items():
        mj = [a for a, _, _ in v]
        med[n] = (statistics.median(mj), statistics.median(t for _, t, _ in v))
        print(f"  {n:<16} {med[n][0]:>10.2f} {min(mj):>8.2f}-{max(mj):<8.2f} {med[n][1]:>10.1f} "
              f"{statistics.median(w for _, _, w in v):>5.0f}")
    (ec, tc), (eg, tg) = med["torch.compile"], med["ours gated-gemm"]
    print(f"  torch.compile over gated-gemm: energy {ec / eg:.3f}x, time {tc / tg:.3f}x")
    mine.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    b.add_shape_arguments(ap)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--window-s", type=float, default=2.0,
                    help="seconds of passes a window (the counter counts millijoules)")
    ap.add_argument("--settle-s", type=float, default=1.0,
                    help="seconds of the same passes before each window, not read")
    args = ap.parse_args()
    if args.rounds < 1 or args.window_s <= 0 or args.settle_s < 0:
        ap.error("--rounds must be at least 1, --window-s above 0 and --settle-s at least 0")
    ours = b.load_ours(args)
    if ours is None:
        return 2
    if not torch.cuda.is_available():
        print("no CUDA GPU for PyTorch", file=sys.stderr)
        return 2
    props = torch.cuda.get_device_properties(0)
    index = b.smi_index(str(getattr(props, "uuid", "") or ""))
    try:
        counter = EnergyCounter(int(index) if index is not None else 0)
    except OSError as e:
        print(f"no energy figures: {e}", file=sys.stderr)
        return 2
    print(f"{props.name}, torch {torch.__version__}")
    for shape in args.shape:
        one_shape(args, shape, ours, counter, getattr(props, "L2_cache_size", 50 * 2**20))
    return 0


if __name__ == "__main__":
    sys.exit(main())
