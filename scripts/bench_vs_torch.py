#!/usr/bin/env python3
"""PyTorch eager, eager in a CUDA graph, torch.compile and our variants on the same GPU, in one go.

Builds each configuration (from `kernels_bench --print-config`) as a PyTorch module, times it the
way kernels_bench does (CUDA events around each forward pass, median; inputs rotated through the
same number of copies), runs kernels_bench for our variants, and prints one table per
configuration with the ratios.

  python3 scripts/bench_vs_torch.py --bench build-kernels/bench/kernels/kernels_bench \
      --preset geglu-post --preset mlp-narrow --preset linear-post

--sweep runs the gated shapes of SWEEP (rows 1024-16384, dim 768-4096, hidden 3000-14336, bf16
and fp16, gelu-tanh and silu): per shape, --rounds rounds (default 3) of PyTorch eager,
torch.compile and our eager and gated-gemm variants in alternating order, medians over the rounds
(the GPU's clock follows its recent load, so every side is timed in turn; "our eag", our eager
variant, runs the same cuBLAS GEMMs as PyTorch eager and checks the comparison). It prints the
ratio table and checks the targets: gated-gemm at least TARGET_POST x torch.compile on the post's
GeGLU and TARGET_SWEEP x on every other shape, and (with --dram, which runs Nsight Compute) DRAM
bytes per forward pass never above eager's. The exit status is
1 when a check or a target fails, so regressions show.
"""
import argparse
import csv
import io
import json
import math
import statistics
import subprocess
import sys

import torch
import torch.nn.functional as F

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}

# (rows, dim, hidden, dtype, activation); the second is the post's GeGLU, the last two the
# Llama-3-8B widths; 3000 is a hidden width that is not a multiple of 128.
SWEEP = [
    (1024, 768, 3072, "bf16", "gelu-tanh"),
    (8192, 768, 3072, "bf16", "gelu-tanh"),
    (16384, 768, 3072, "fp16", "silu"),
    (2048, 2048, 8192, "fp16", "silu"),
    (4096, 1024, 3000, "fp16", "gelu-tanh"),
    (4096, 2048, 5632, "bf16", "silu"),
    (1024, 4096, 14336, "bf16", "silu"),
    (8192, 4096, 14336, "bf16", "silu"),
    (16384, 4096, 14336, "bf16", "gelu-tanh"),
]
POST = (8192, 768, 3072, "bf16", "gelu-tanh")
TARGET_POST = 1.35
TARGET_SWEEP = 1.05


def sweep_config(shape):
    rows, dim, hidden, dtype, act = shape
    return {"activation": act, "bias": False, "dtype": dtype, "kind": "gated",
            "name": f"g{rows}x{dim}x{hidden}", "rows": rows, "widths": [dim, hidden]}


def ncu_dram_bytes(bench, cfg, variant, kernels, pin=""):
    """DRAM bytes read + written by one forward pass of our variant: the last `kernels` kernels
    of a run of one iteration without the check (before them come the set-up kernels that fill
    the weights), read by Nsight Compute. `pin` is the timed run's kernel choices: set-up would
    otherwise choose by timing under Nsight Compute, where every launch is serialised and
    replayed, and measure other kernels than the ones timed."""
    cmd = ["ncu", "--metrics", "dram__bytes_read.sum,dram__bytes_write.sum", "--csv",
           "--print-units", "base", bench, "--config", json.dumps(cfg), "--variant", variant,
           "--warmup", "0", "--iters", "1", "--input-sets", "1", "--no-check", "--no-host-time"]
    if pin:
        cmd += ["--pin-kernels", pin]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300).stdout
    lines = [l for l in out.splitlines() if l.startswith('"')]
    per_kernel = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        if row.get("Metric Name") in ("dram__bytes_read.sum", "dram__bytes_write.sum"):
            kid = int(row["ID"])
            per_kernel[kid] = per_kernel.get(kid, 0.0) + float(row["Metric Value"].replace(",", ""))
    ids = sorted(per_kernel)
    if len(ids) < kernels:
        return None
    return sum(per_kernel[i] for i in ids[-kernels:])


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


def torch_times(cfg, warmup, iters, l2, with_graph=True):
    torch.manual_seed(0)
    model = build(cfg)
    sets = input_sets(cfg, l2)
    inputs = [torch.empty(cfg["rows"], cfg["widths"][0], device="cuda",
                          dtype=DTYPES[cfg["dtype"]]).uniform_(-1, 1) for _ in range(sets)]
    out = {"eager": time_fn(model, inputs, warmup, iters)}
    if with_graph:
        try:
            out["eager+graph"] = time_fn(graphed(model, inputs), inputs, warmup, iters)
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"  (eager in a graph failed: {e})", file=sys.stderr)
    compiled = torch.compile(model)
    out["compile"] = time_fn(compiled, inputs, warmup, iters)
    return out, sets


def run_ours(bench, cfg_args, extra, warmup, iters, quiet=False):
    ours_json = "/tmp/fusionscope_kernels_bench.json"
    proc = subprocess.run([bench, *cfg_args, "--warmup", str(warmup), "--iters", str(iters),
                           "--json", ours_json, *extra], capture_output=True, text=True)
    if not quiet:
        print(proc.stdout)
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
    return json.load(open(ours_json))


def presets_mode(args, l2):
    presets = args.preset or ["geglu-post", "mlp-narrow", "linear-post"]
    preset_args = sum((["--preset", p] for p in presets), [])
    cfgs = [json.loads(line) for line in subprocess.run(
        [args.bench, "--print-config", *preset_args], check=True, capture_output=True,
        text=True).stdout.splitlines() if line.strip()]
    ours = run_ours(args.bench, preset_args, [], args.warmup, args.iters)
    report, failed = [], False
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
            failed |= not r["passed"]
            print(f"  {'ours ' + r['variant']:<26} {us:>10.1f} {t['eager'] / us:>8.2f}x "
                  f"{t['compile'] / us:>10.2f}x {r['host_us']:>8.2f}"
                  f"{'' if r['passed'] else '  CHECK FAILED'}")
        report.append({"config": cfg, "torch_us": t, "ours": mine})
    return report, failed


def ours_once(bench, cfg, warmup, iters, check, quiet, gated_first=False):
    """Our eager and gated-gemm variants on one configuration, in one kernels_bench process, in
    the order asked: the second runs on a GPU the first has warmed, so rounds alternate it."""
    order = ["gated-gemm", "eager"] if gated_first else ["eager", "gated-gemm"]
    extra = ["--variant", order[0], "--variant", order[1], "--no-host-time"]
    extra += ["--check-rows", "256"] if check else ["--no-check"]
    ours = run_ours(bench, ["--config", json.dumps(cfg)], extra, warmup, iters, quiet)
    return {r["variant"]: r for r in ours if r["config"]["name"] == cfg["name"]}


def sweep_mode(args, l2):
    """Per shape, `rounds` rounds of torch eager, torch.compile and ours, in alternating order,
    medians over the rounds. The H100's clock follows its power draw and temperature, so each
    side is timed in turn under the same recent load rather than ours in one long batch and
    PyTorch's after idle compile pauses."""
    rows, failed = [], False
    for sh in SWEEP:
        cfg = sweep_config(sh)
        torch.manual_seed(0)
        model = build(cfg)
        inputs = [torch.empty(cfg["rows"], cfg["widths"][0], device="cuda",
                              dtype=DTYPES[cfg["dtype"]]).uniform_(-1, 1)
                  for _ in range(input_sets(cfg, l2))]
        compiled = torch.compile(model)
        with torch.no_grad():
            compiled(inputs[0])  # compile before any timing
        torch.cuda.synchronize()
        t = {"eager": [], "compile": []}
        mine = {"eager": [], "gated-gemm": []}
        choices = []  # the gated variant's set-up choices, per round (each a new process)
        first = {}
        for rnd in range(args.rounds):
            steps = ["eager", "compile", "ours"]
            for step in (steps if rnd % 2 == 0 else steps[::-1]):
                if step == "ours":
                    got = ours_once(args.bench, cfg, args.warmup, args.iters, rnd == 0, rnd > 0,
                                    gated_first=rnd % 2 == 1)
                    if rnd == 0:
                        first = got
                    for v in mine:
                        if v in got:
                            mine[v].append(got[v]["median_us"])
                    if "gated-gemm" in got:
                        choices.append(got["gated-gemm"].get("kernel_choices", ""))
                else:
                    fn = model if step == "eager" else compiled
                    t[step].append(time_fn(fn, inputs, args.warmup, args.iters))
        t = {k: statistics.median(v) for k, v in t.items()}
        g, e = first.get("gated-gemm"), first.get("eager")
        gated_us = statistics.median(mine["gated-gemm"]) if mine["gated-gemm"] else None
        eager_us = statistics.median(mine["eager"]) if mine["eager"] else None
        row = {"shape": sh, "torch_us": t, "gated_us": gated_us, "eager_us": eager_us,
               "gated_rounds_us": mine["gated-gemm"], "eager_rounds_us": mine["eager"],
               "passed": bool(g and g["passed"]), "kernel_path": g and g["kernel_path"],
               "kernel_choices": (g or {}).get("kernel_choices", ""), "round_choices": choices}
        if args.dram:
            row["dram_eager"] = ncu_dram_bytes(args.bench, cfg, "eager", e["kernels"] if e else 5,
                                               (e or {}).get("kernel_choices", ""))
            row["dram_gated"] = ncu_dram_bytes(args.bench, cfg, "gated-gemm",
                                               g["kernels"] if g else 2,
                                               (g or {}).get("kernel_choices", ""))
        target = TARGET_POST if sh == POST else TARGET_SWEEP
        row["target"] = target
        row["vs_compile"] = t["compile"] / row["gated_us"] if row["gated_us"] else 0
        row["vs_eager"] = t["eager"] / row["gated_us"] if row["gated_us"] else 0
        ok = row["passed"] and row["vs_compile"] >= target
        if args.dram:
            ok &= (row["dram_gated"] is not None and row["dram_eager"] is not None and
                   row["dram_gated"] <= row["dram_eager"])
        row["met"] = ok
        failed |= not ok
        rows.append(row)
        print(f"  {cfg['name']} {sh[3]} {sh[4]}: torch eager {t['eager']:.1f} us, compile "
              f"{t['compile']:.1f} us, ours eager {row['eager_us'] or 0:.1f} us, gated-gemm "
              f"{row['gated_us'] or 0:.1f} us (rounds: "
              f"{', '.join(f'{x:.1f}' for x in mine['gated-gemm'])}; set-up chose "
              f"{' | '.join(choices)})", flush=True)
        del model, compiled, inputs
        torch.cuda.empty_cache()

    print(f"\nGated MLP sweep: ours gated-gemm (2 kernels) vs PyTorch, median us per forward pass "
          f"(median of {args.rounds} alternating rounds)")
    head = (f"{'rows':>6} {'dim':>5} {'hidden':>6} {'dtype':>5} {'act':>9} {'eager':>8} "
            f"{'compile':>8} {'our eag':>8} {'gated':>8} {'vs eager':>8} {'vs comp':>8} "
            f"{'target':>6}")
    if args.dram:
        head += f" {'DRAM eager MB':>13} {'DRAM gated MB':>13}"
    print(head + "  result")
    for r in rows:
        rows_, dim, hidden, dtype, act = r["shape"]
        t = r["torch_us"]
        line = (f"{rows_:>6} {dim:>5} {hidden:>6} {dtype:>5} {act:>9} {t['eager']:>8.1f} "
                f"{t['compile']:>8.1f} {r['eager_us'] or 0:>8.1f} {r['gated_us'] or 0:>8.1f} "
                f"{r['vs_eager']:>7.2f}x "
                f"{r['vs_compile']:>7.2f}x {r['target']:>5.2f}x")
        if args.dram:
            fmt = lambda b: f"{b / 1e6:>13.1f}" if b is not None else f"{'n/a':>13}"
            line += f" {fmt(r['dram_eager'])} {fmt(r['dram_gated'])}"
        why = "" if r["passed"] else " (check failed)"
        print(line + ("  met" if r["met"] else "  MISSED" + why))
    print("kernels chosen at set-up (gated GEMM configuration; down projection):")
    for r in rows:
        print(f"  {r['shape'][0]} x {r['shape'][1]} -> {r['shape'][2]}: {r['kernel_path']}"
              f"{' [' + r['kernel_choices'] + ']' if r.get('kernel_choices') else ''}")
    return rows, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True, help="path of the kernels_bench program")
    ap.add_argument("--preset", action="append", help="presets (default: the three targets)")
    ap.add_argument("--sweep", action="store_true", help="the gated sweep with its targets")
    ap.add_argument("--dram", action="store_true",
                    help="with --sweep: DRAM bytes per forward pass through Nsight Compute")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3,
                    help="with --sweep: rounds per shape of torch eager, torch.compile and ours")
    ap.add_argument("--json", help="write all figures here")
    args = ap.parse_args()

    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 * 2**20)
    print(f"{props.name}, torch {torch.__version__}, L2 {l2 / 2**20:.0f} MiB")

    report, failed = {}, False
    if args.preset or not args.sweep:
        report["presets"], f = presets_mode(args, l2)
        failed |= f
    if args.sweep:
        report["sweep"], f = sweep_mode(args, l2)
        failed |= f
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    if failed:
        print("\nFAILED: a check or a target was missed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
