#!/usr/bin/env python3
"""PyTorch eager, eager in a CUDA graph, torch.compile and our variants on the same GPU, in one go.

Builds each configuration (from `kernels_bench --print-config`) as a PyTorch module, times it the
way kernels_bench does (CUDA events around each forward pass, median; inputs rotated through the
same number of copies), runs kernels_bench for our variants, and prints one table per
configuration with the ratios.

  python3 scripts/bench_vs_torch.py --bench build-kernels/bench/kernels/kernels_bench \
      --preset geglu-post --preset mlp-narrow --preset linear-post
"""
import argparse
import json
import math
import statistics
import subprocess
import sys

import torch
import torch.nn.functional as F

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def activation(name):
    return {
        "none": lambda x: x,
        "relu": F.relu,
        "gelu-tanh": lambda x: F.gelu(x, approximate="tanh"),
        "silu": F.silu,
    }[name]


class Gated(torch.nn.Module):
    def __init__(self, dim, hidden, act):
        super().__init__()
        self.gate = torch.nn.Linear(dim, hidden, bias=False)
        self.up = torch.nn.Linear(dim, hidden, bias=False)
        self.down = torch.nn.Linear(hidden, dim, bias=False)
        self.act = activation(act)

    def forward(self, x):
        return self.down(self.act(self.gate(x)) * self.up(x))


class Stack(torch.nn.Module):
    def __init__(self, widths, bias, act):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            torch.nn.Linear(a, b, bias=bias) for a, b in zip(widths[:-1], widths[1:]))
        self.act = activation(act)

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i + 1 < len(self.layers):
                x = self.act(x)
        return x


def build(cfg):
    if cfg["kind"] == "gated":
        m = Gated(cfg["widths"][0], cfg["widths"][1], cfg["activation"])
    else:
        m = Stack(cfg["widths"], cfg["bias"], cfg["activation"])
    return m.to(device="cuda", dtype=DTYPES[cfg["dtype"]]).eval()


def input_sets(cfg, l2_bytes):
    """The same rule as the runner: rotate copies when one would fit in the L2 twice."""
    elem = 4 if cfg["dtype"] == "fp32" else 2
    set_bytes = cfg["rows"] * (cfg["widths"][0] + cfg["widths"][-1 if cfg["kind"] != "gated" else 0]) * elem
    if set_bytes * 2 > l2_bytes:
        return 1
    return int(min(256, math.ceil(3 * l2_bytes / set_bytes)))


def time_fn(fn, inputs, warmup, iters):
    with torch.no_grad():
        for i in range(warmup):
            fn(inputs[i % len(inputs)])
        torch.cuda.synchronize()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        for i in range(iters):
            starts[i].record()
            fn(inputs[i % len(inputs)])
            ends[i].record()
        torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) * 1e3  # us


def graphed(model, inputs):
    """One captured graph per input copy, as the runner's graph mode does."""
    graphs = []
    with torch.no_grad():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                model(inputs[0])
        torch.cuda.current_stream().wait_stream(s)
        for x in inputs:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                model(x)
            graphs.append(g)
    index = {id(x): i for i, x in enumerate(inputs)}
    return lambda x: graphs[index[id(x)]].replay()


def torch_times(cfg, warmup, iters, l2):
    torch.manual_seed(0)
    model = build(cfg)
    sets = input_sets(cfg, l2)
    inputs = [torch.empty(cfg["rows"], cfg["widths"][0], device="cuda",
                          dtype=DTYPES[cfg["dtype"]]).uniform_(-1, 1) for _ in range(sets)]
    out = {"eager": time_fn(model, inputs, warmup, iters)}
    try:
        out["eager+graph"] = time_fn(graphed(model, inputs), inputs, warmup, iters)
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"  (eager in a graph failed: {e})", file=sys.stderr)
    compiled = torch.compile(model)
    out["compile"] = time_fn(compiled, inputs, warmup, iters)
    return out, sets


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True, help="path of the kernels_bench program")
    ap.add_argument("--preset", action="append", help="presets (default: the three targets)")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--json", help="write all figures here")
    args = ap.parse_args()
    presets = args.preset or ["geglu-post", "mlp-narrow", "linear-post"]

    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 * 2**20)
    print(f"{props.name}, torch {torch.__version__}, L2 {l2 / 2**20:.0f} MiB")

    preset_args = sum((["--preset", p] for p in presets), [])
    cfgs = [json.loads(line) for line in subprocess.run(
        [args.bench, "--print-config", *preset_args], check=True, capture_output=True,
        text=True).stdout.splitlines() if line.strip()]
    ours_json = "/tmp/fusionscope_kernels_bench.json"
    proc = subprocess.run([args.bench, *preset_args, "--warmup", str(args.warmup), "--iters",
                           str(args.iters), "--json", ours_json], capture_output=True, text=True)
    print(proc.stdout)
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
    ours = json.load(open(ours_json))

    report = []
    for cfg in cfgs:
        t, sets = torch_times(cfg, args.warmup, args.iters, l2)
        mine = [r for r in ours if r["config"] == cfg]
        print(f"\n{cfg['name']}: {cfg['kind']} {cfg['rows']} x {cfg['widths']} {cfg['dtype']} "
              f"{cfg['activation']}, bias={cfg['bias']} ({sets} input copies)")
        print(f"  {'what':<26} {'median us':>10} {'vs eager':>9} {'vs compile':>11} {'host us':>8}")
        for name, us in t.items():
            print(f"  {'torch ' + name:<26} {us:>10.1f} {t['eager'] / us:>8.2f}x "
                  f"{t['compile'] / us:>10.2f}x {'':>8}")
        for r in mine:
            us = r["median_us"]
            print(f"  {'ours ' + r['variant']:<26} {us:>10.1f} {t['eager'] / us:>8.2f}x "
                  f"{t['compile'] / us:>10.2f}x {r['host_us']:>8.2f}"
                  f"{'' if r['passed'] else '  CHECK FAILED'}")
        report.append({"config": cfg, "torch_us": t, "ours": mine})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
