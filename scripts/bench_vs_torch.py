#!/usr/bin/env python3
"""PyTorch eager and torch.compile (also in CUDA graphs) and our variants on one GPU, in one go.

Builds each configuration (from `kernels_bench --print-config`) as a PyTorch module and sets up our
variants of it in this same process, through libfusionscope_mlp.so (found beside kernels_bench):
our forward passes are enqueued on PyTorch's stream and timed by the same code (CUDA events around
samples of --passes-per-sample back-to-back passes, the median of their means: an event between two
kernels holds the next one back by ~2 us on an H100, which a pass of a few tens of microseconds
would count as its own; inputs rotated through as many copies as the runner uses; PyTorch computes
on our weights and inputs, copied over, since under the power cap the clock follows the draw and
the draw the bits multiplied). Every contender is timed once per round, --rounds rounds (default
4), starting one place further along each round: the H100's clock follows its power draw (under the
700 W cap it swings by 10-20% within a second) and its temperature, so each side is timed in turn
under the same recent load, and the figure is the median of the rounds. Prints one table per
configuration with the ratios and the mean SM clock and power draw of each contender's windows
(nvidia-smi sampled every 50 ms, see gpu_clock.py), and checks the presets' targets
(PRESET_TARGETS: gated-gemm at least TARGET_POST x torch.compile on geglu-post, fully-fused at
least 7x eager on mlp-narrow).

  python3 scripts/bench_vs_torch.py --bench build/bench/kernels/kernels_bench \
      --preset geglu-post --preset mlp-narrow --preset linear-post

--config adds an MLP of one's own (kernels_bench's --config JSON), timed and checked the same way.

--sweep runs the gated shapes of SWEEP (rows 1024-16384, dim 768-4096, hidden 3000-14336, bf16 and
fp16, gelu-tanh and silu; --only picks some; --shape adds one's own, with or without --sweep) with
PyTorch eager, torch.compile and our eager ("our eag", the same cuBLAS GEMMs as PyTorch eager: a
check on the comparison) and gated-gemm variants. It prints the ratio table and checks the targets:
gated-gemm at least TARGET_POST x torch.compile on the post's GeGLU and TARGET_SWEEP x on every
other shape, every variant within its tolerance of the fp32 reference, and (with --dram, which runs
Nsight Compute on kernels_bench pinned to the same kernels) DRAM bytes per forward pass never above
eager's. Its "graphed" column is torch.compile over gated-gemm with both replayed from CUDA graphs:
the GPU's time alone, where small shapes are otherwise bound by the host's enqueuing (information,
not a target); a result marked * had torch.compile's pass over HOST_BOUND x its graphed time, so
its host, not the GPU, set that ratio. The exit status is 1 when a check or a target fails, so regressions show.
"""
import argparse
import ctypes
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

import ncu_kernels
from gpu_clock import GpuSampler, smi_index

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}

# (rows, dim, hidden, dtype, activation); the second is the post's GeGLU, the Llama-3-8B widths
# follow the 4096 x 2048 one; 3000 is a hidden width that is not a multiple of 128; the last two
# are the corner where the GEMMs are nearly the whole pass (few rows, a wide dim, a narrow hidden
# layer), so the fused GEMM must keep up with cuBLAS tile for tile.
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
    (1024, 4096, 3072, "bf16", "gelu-tanh"),
    (1536, 4096, 3072, "fp16", "silu"),
]
POST = (8192, 768, 3072, "bf16", "gelu-tanh")
TARGET_POST = 1.35
TARGET_SWEEP = 1.05
# torch.compile's pass over its CUDA-graph replay past which its host, not the GPU, sets its time
# (1024 x 3584 -> 3400 on an H200: 129-210 us a pass over six processes, 128-134 in graphs).
HOST_BOUND = 1.10
# Preset targets: (our variant, the PyTorch contender, the speed-up it must reach over it).
PRESET_TARGETS = {
    "geglu-post": ("gated-gemm", "torch.compile", TARGET_POST),
    "mlp-narrow": ("fully-fused", "torch eager", 7.0),
}


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
    cmd = [bench, "--config", json.dumps(cfg), "--variant", variant, "--warmup", "0", "--iters",
           "1", "--input-sets", "1", "--no-check", "--no-host-time"]
    if pin:
        cmd += ["--pin-kernels", pin]
    launches = ncu_kernels.profile(cmd)
    if len(launches) < kernels:
        return None
    return sum(k.get("read", 0) + k.get("write", 0) for k in launches[-kernels:])


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


def compile_static(model):
    """torch.compile of one configuration as a process of its own would compile it. Dynamo's
    caches are dropped first: its recompile limit (8 per function) counts every configuration of
    the same module class in this process, and past it the module silently runs eagerly (the
    ninth gated shape of one run did). Shapes are static: after one shape change Dynamo would
    otherwise compile for dynamic shapes, a different program from the one a user's fixed-shape
    run gets. Not fullgraph: on the H100 host it made each call of the compiled module 15-110 us
    slower to enqueue (1024 x 768 -> 3072: 127-226 against 108-122 us; eager 73-87), which the
    small shapes, bound by the host, would have counted against torch.compile."""
    torch._dynamo.reset()
    return torch.compile(model, dynamic=False)


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


PASSES_PER_SAMPLE = 10  # --passes-per-sample


def time_fn(fn, inputs, warmup, iters):
    """Median us per pass over samples of PASSES_PER_SAMPLE back-to-back passes."""
    per = max(1, min(PASSES_PER_SAMPLE, iters))
    samples = max(1, iters // per)
    with torch.no_grad():
        for i in range(warmup):
            fn(inputs[i % len(inputs)])
        torch.cuda.synchronize()
        events = [torch.cuda.Event(enable_timing=True) for _ in range(samples + 1)]
        events[0].record()
        for i in range(samples * per):
            fn(inputs[i % len(inputs)])
            if (i + 1) % per == 0:
                events[(i + 1) // per].record()
        torch.cuda.synchronize()
    return statistics.median(
        a.elapsed_time(b) / per for a, b in zip(events, events[1:])) * 1e3  # us


def add_graphed(contenders, name, graphed_name):
    """contenders[graphed_name]: contenders[name] replayed from CUDA graphs, or a printed reason."""
    fn, inputs = contenders[name]
    try:
        contenders[graphed_name] = (graphed(fn, inputs), inputs)
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"  ({name} in a CUDA graph failed: {e})", file=sys.stderr)


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


class Ours:
    """Our variants in this process, through libfusionscope_mlp.so (kernels/capi)."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        L, c = self.lib, ctypes
        L.fs_mlp_create.restype = c.c_void_p
        L.fs_mlp_create.argtypes = [c.c_char_p, c.c_char_p, c.c_char_p, c.c_int, c.c_char_p,
                                    c.c_size_t]
        L.fs_mlp_destroy.argtypes = [c.c_void_p]
        L.fs_mlp_supports.argtypes = [c.c_char_p, c.c_char_p, c.c_char_p, c.c_size_t]
        for f in (L.fs_mlp_input_sets, L.fs_mlp_kernels):
            f.argtypes, f.restype = [c.c_void_p], c.c_int
        for f in (L.fs_mlp_kernel_path, L.fs_mlp_kernel_choices):
            f.argtypes, f.restype = [c.c_void_p], c.c_char_p
        L.fs_mlp_forward.argtypes = [c.c_void_p, c.c_int, c.c_void_p, c.c_char_p, c.c_size_t]
        L.fs_mlp_copy_data.argtypes = [c.c_void_p, c.c_char_p, c.c_void_p, c.c_size_t, c.c_char_p,
                                       c.c_size_t]
        L.fs_mlp_check.argtypes = [c.c_void_p, c.c_ulonglong, c.POINTER(c.c_double),
                                   c.POINTER(c.c_int), c.c_char_p, c.c_size_t]
        self.err = ctypes.create_string_buffer(1024)

    def supports(self, cfg, variant):
        """(applies, why not)."""
        rc = self.lib.fs_mlp_supports(json.dumps(cfg).encode(), variant.encode(), self.err,
                                      len(self.err))
        if rc < 0:
            raise RuntimeError(self.err.value.decode())
        return rc == 1, self.err.value.decode()

    def create(self, cfg, variant, pin=""):
        """A handle for `variant` of cfg (set up, its kernels chosen), or RuntimeError(why)."""
        h = self.lib.fs_mlp_create(json.dumps(cfg).encode(), variant.encode(), pin.encode(), 0,
                                   self.err, len(self.err))
        if not h:
            raise RuntimeError(self.err.value.decode())
        return Mlp(self, h)


def load_ours(args):
    """Ours from --lib, or from libfusionscope_mlp.so beside --bench; None, said why, on failure."""
    lib = args.lib or os.path.join(os.path.dirname(os.path.abspath(args.bench)),
                                   "libfusionscope_mlp.so")
    try:
        return Ours(lib)
    except OSError as e:
        print(f"cannot load our kernels from {lib}: {e} (build the fusionscope_mlp target, or "
              f"give --lib)", file=sys.stderr)
        return None


def add_shape_arguments(ap):
    """--bench, --lib and --shape, as the scripts built on this one take them."""
    ap.add_argument("--bench", required=True, help="path of the kernels_bench program")
    ap.add_argument("--lib", help="libfusionscope_mlp.so (default: beside --bench)")
    ap.add_argument("--shape", action="append", type=parse_shape, required=True,
                    metavar="ROWSxDIMxHIDDEN:DTYPE:ACT")


class Mlp:
    def __init__(self, ours, handle):
        self.ours, self.h = ours, handle
        L = ours.lib
        self.sets = L.fs_mlp_input_sets(handle)
        self.kernels = L.fs_mlp_kernels(handle)
        self.kernel_path = L.fs_mlp_kernel_path(handle).decode()
        self.kernel_choices = L.fs_mlp_kernel_choices(handle).decode()

    def forward(self, s):
        """One pass over input copy s, on PyTorch's current stream."""
        o = self.ours
        if o.lib.fs_mlp_forward(self.h, s, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream),
                                o.err, len(o.err)):
            raise RuntimeError(o.err.value.decode())

    def copy_data(self, name, tensor):
        """Our numbers `name` (weightN, biasN, input) into a contiguous CUDA tensor of its size."""
        o = self.ours
        if not tensor.is_cuda or not tensor.is_contiguous():
            raise RuntimeError(f"{name}: the tensor must be contiguous on the GPU")
        if o.lib.fs_mlp_copy_data(self.h, name.encode(), ctypes.c_void_p(tensor.data_ptr()),
                                  tensor.numel() * tensor.element_size(), o.err, len(o.err)):
            raise RuntimeError(o.err.value.decode())

    def check(self, rows):
        o, rel, ok = self.ours, ctypes.c_double(), ctypes.c_int()
        if o.lib.fs_mlp_check(self.h, rows, ctypes.byref(rel), ctypes.byref(ok), o.err,
                              len(o.err)):
            raise RuntimeError(o.err.value.decode())
        return rel.value, bool(ok.value)

    def close(self):
        if self.h:
            self.ours.lib.fs_mlp_destroy(self.h)
            self.h = None


def timed_rounds(contenders, warmup, iters, rounds, min_window_ms=0, sampler=None):
    """contenders: {name: (fn, inputs)}. Every contender once per round, the order rotated by one
    each round; returns ({name: [median us of each round]}, iterations per window, {name: [(mean
    MHz, mean W) of each round's window, or None]}). Each window
    has at least `iters` passes, and more for fast shapes, so that it lasts min_window_ms: the
    clock swings with the power draw within a second, and a window of a few milliseconds would
    catch one point of the swing."""
    names = list(contenders)
    if min_window_ms > 0:  # sized on the fastest, so that no contender's window is shorter
        fastest = min(time_fn(fn, inputs, warmup, 20) for fn, inputs in contenders.values())
        iters = max(iters, math.ceil(min_window_ms * 1e3 / fastest))
    out = {n: [] for n in names}
    clocks = {n: [] for n in names}
    for r in range(rounds):
        for n in names[r % len(names):] + names[:r % len(names)]:
            fn, inputs = contenders[n]
            t0 = time.monotonic()
            out[n].append(time_fn(fn, inputs, warmup, iters))
            clocks[n].append(sampler.window(t0, time.monotonic()) if sampler else None)
    return out, iters, clocks


def median_clock(windows):
    """(MHz, W) medians over a contender's windows that have samples, or None."""
    got = [w for w in windows if w]
    if not got:
        return None
    return statistics.median(m for m, _ in got), statistics.median(w for _, w in got)


def clock_text(c):
    return f"{c[0]:>6.0f} {c[1]:>5.0f}" if c else f"{'-':>6} {'-':>5}"


def clock_words(c):
    return f"{c[0]:.0f} MHz {c[1]:.0f} W" if c else "not sampled"


OUR_VARIANTS = ["eager", "epilogue", "pointwise-fused", "gated-gemm", "fully-fused"]


def setup_ours(ours, cfg, variants, pin="", check_rows=0):
    """Handles of our variants of cfg that apply to it, each checked once against the fp32
    reference, and whether every one that applies was set up."""
    mine, all_set_up = {}, True
    for v in variants:
        applies, why = ours.supports(cfg, v)
        if not applies:
            continue
        try:
            m = ours.create(cfg, v, pin if v == "gated-gemm" else "")
        except RuntimeError as e:
            print(f"  ours {v}: FAILED to set up: {e}")
            all_set_up = False
            continue
        m.rel_error, m.passed = m.check(check_rows)
        mine[v] = m
    return mine, all_set_up


def on_our_numbers(model, cfg, inputs, mine):
    """PyTorch on our numbers: the model's weights and biases, and its input copies when there are
    as many as ours, become byte for byte those of our variants (which all draw them from one
    seed), so that both sides multiply the same values. Under the power cap the clock follows the
    draw, and the draw depends on the bits multiplied. Returns the inputs to time."""
    if not mine:
        print("  (no variant of ours set up: PyTorch computes on its own numbers)")
        return inputs
    m = next(iter(mine.values()))
    layers = [model.gate, model.up, model.down] if cfg["kind"] == "gated" else list(model.layers)
    with torch.no_grad():
        for i, lin in enumerate(layers):
            m.copy_data(f"weight{i}", lin.weight)
            if lin.bias is not None:
                m.copy_data(f"bias{i}", lin.bias)
        if m.sets != len(inputs):
            print(f"  (PyTorch on our weights; its {len(inputs)} input copies drawn apart from our "
                  f"{m.sets})")
            return inputs
        whole = torch.empty(m.sets * cfg["rows"], cfg["widths"][0], device="cuda",
                            dtype=DTYPES[cfg["dtype"]])
        m.copy_data("input", whole)
    return list(whole.chunk(m.sets))


def presets_mode(args, l2, ours):
    presets = args.preset or ([] if args.config else ["geglu-post", "mlp-narrow", "linear-post"])
    preset_args = sum((["--preset", p] for p in presets), [])
    preset_args += sum((["--config", c] for c in args.config or []), [])
    cfgs = [json.loads(line) for line in subprocess.run(
        [args.bench, "--print-config", *preset_args], check=True, capture_output=True,
        text=True).stdout.splitlines() if line.strip()]
    report, failed = [], False
    for cfg in cfgs:
        print(f"\n{cfg['name'] or 'config'}: {cfg['kind']} {cfg['rows']} x {cfg['widths']} {cfg['dtype']} "
              f"{cfg['activation']}, bias={cfg['bias']}")
        torch.manual_seed(0)
        model = build(cfg)
        sets = input_sets(cfg, l2)
        inputs = [torch.empty(cfg["rows"], cfg["widths"][0], device="cuda",
                              dtype=DTYPES[cfg["dtype"]]).uniform_(-1, 1) for _ in range(sets)]
        mine, all_set_up = setup_ours(ours, cfg, OUR_VARIANTS)
        failed |= not all_set_up
        inputs = on_our_numbers(model, cfg, inputs, mine)
        compiled = compile_static(model)
        with torch.no_grad():
            compiled(inputs[0])  # compile before any timing
        contenders = {"torch eager": (model, inputs)}
        try:
            contenders["torch eager+graph"] = (graphed(model, inputs), inputs)
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"  (eager in a graph failed: {e})", file=sys.stderr)
        contenders["torch.compile"] = (compiled, inputs)
        add_graphed(contenders, "torch.compile", "torch.compile+graph")
        for v, m in mine.items():
            contenders["ours " + v] = (m.forward, list(range(m.sets)))
        rounds, iters, clocks = timed_rounds(contenders, args.warmup, args.iters, args.rounds,
                                             args.min_window_ms, args.sampler)
        t = {n: statistics.median(v) for n, v in rounds.items()}
        eager, comp = t["torch eager"], t["torch.compile"]
        print(f"  ({sets} input copies; median of {args.rounds} rounds of {iters} passes each)")
        print(f"  {'what':<26} {'median us':>10} {'vs eager':>9} {'vs compile':>11} {'MHz':>6} "
              f"{'W':>5}  check")
        for n, us in t.items():
            m = mine.get(n[5:]) if n.startswith("ours ") else None
            check = "" if m is None else f"  rel {m.rel_error:.2e} {'ok' if m.passed else 'FAILED'}"
            failed |= m is not None and not m.passed
            print(f"  {n:<26} {us:>10.1f} {eager / us:>8.2f}x {comp / us:>10.2f}x "
                  f"{clock_text(median_clock(clocks[n]))}{check}")
        target = PRESET_TARGETS.get(cfg["name"])
        if target and "ours " + target[0] in t:
            mine_v, theirs, need = target
            ratio = t[theirs] / t["ours " + mine_v]
            met = ratio >= need
            failed |= not met
            print(f"  target: {mine_v} at least {need:.2f}x {theirs}: {ratio:.2f}x, "
                  f"{'met' if met else 'MISSED'}")
        elif target:
            failed = True
            print(f"  target: {target[0]} did not run", file=sys.stderr)
        report.append({"config": cfg, "us": t, "rounds_us": rounds, "rounds_mhz_w": clocks,
                       "ours": {v: {"kernel_path": m.kernel_path, "rel_error": m.rel_error,
                                    "passed": m.passed} for v, m in mine.items()}})
        for m in mine.values():
            m.close()
        del model, compiled, inputs, contenders
        torch.cuda.empty_cache()
    return report, failed


def parse_shape(text):
    """ROWSxDIMxHIDDEN:DTYPE:ACT (e.g. 8192x4096x11008:bf16:silu) as a SWEEP entry."""
    m = re.fullmatch(r"(\d+)x(\d+)x(\d+):(fp16|bf16):(gelu-tanh|silu)", text)
    if not m:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected ROWSxDIMxHIDDEN:DTYPE:ACT, DTYPE fp16 or bf16, ACT gelu-tanh or silu")
    rows, dim, hidden = (int(m.group(i)) for i in (1, 2, 3))
    if rows < 1 or dim < 8 or hidden < 8 or dim % 8 or hidden % 8:
        raise argparse.ArgumentTypeError(f"{text!r}: rows >= 1; dim and hidden multiples of 8")
    return (rows, dim, hidden, m.group(4), m.group(5))


def dram_words(row):
    """The DRAM bytes of a row measured with --dram ("; DRAM per pass eager X MB, gated Y MB"),
    else nothing."""
    if "dram_eager" not in row:
        return ""
    mb = lambda b: f"{b / 1e6:.1f} MB" if b is not None else "not read"
    return f"; DRAM per pass eager {mb(row['dram_eager'])}, gated {mb(row['dram_gated'])}"


def sweep_mode(args, l2, ours):
    """Per shape: torch eager, torch.compile, our eager and our gated-gemm, timed in rotating
    rounds in this one process (timed_rounds), medians over the rounds."""
    rows, failed = [], False
    shapes = []
    if args.sweep:
        shapes = [sh for sh in SWEEP if not args.only or f"{sh[0]}x{sh[1]}x{sh[2]}" in args.only]
        if not shapes and not args.shape:
            print(f"no sweep shape matches --only {' '.join(args.only)}", file=sys.stderr)
            return rows, True
    shapes += [sh for sh in args.shape or [] if sh not in shapes]
    for sh in shapes:
        cfg = sweep_config(sh)
        torch.manual_seed(0)
        model = build(cfg)
        inputs = [torch.empty(cfg["rows"], cfg["widths"][0], device="cuda",
                              dtype=DTYPES[cfg["dtype"]]).uniform_(-1, 1)
                  for _ in range(input_sets(cfg, l2))]
        mine, _ = setup_ours(ours, cfg, ["eager", "gated-gemm"], args.pin, check_rows=256)
        g, e = mine.get("gated-gemm"), mine.get("eager")
        inputs = on_our_numbers(model, cfg, inputs, mine)
        compiled = compile_static(model)
        with torch.no_grad():
            compiled(inputs[0])  # compile before any timing
        torch.cuda.synchronize()
        contenders = {"eager": (model, inputs), "compile": (compiled, inputs)}
        for v, m in mine.items():
            contenders["ours " + v] = (m.forward, list(range(m.sets)))
        # Both sides replayed from CUDA graphs too: the GPU's time alone, where a small shape's
        # passes would otherwise be bound by the host's cost of enqueuing them.
        add_graphed(contenders, "compile", "compile+graph")
        if g:
            add_graphed(contenders, "ours gated-gemm", "ours gated-gemm+graph")
        rounds, iters, clocks = timed_rounds(contenders, args.warmup, args.iters, args.rounds,
                                             args.min_window_ms, args.sampler)
        med = {n: statistics.median(v) for n, v in rounds.items()}
        t = {"eager": med["eager"], "compile": med["compile"]}
        gated_us, eager_us = med.get("ours gated-gemm"), med.get("ours eager")
        row = {"shape": sh, "torch_us": t, "gated_us": gated_us, "eager_us": eager_us,
               "rounds_us": rounds, "rounds_mhz_w": clocks, "iterations": iters, "passed": bool(g and g.passed and e and e.passed),
               "rel_error": {v: m.rel_error for v, m in mine.items()},
               "kernel_path": g and g.kernel_path, "kernel_choices": g.kernel_choices if g else ""}
        # Compile over gated within each round: the two ran seconds apart under the same load.
        row["round_ratios"] = ([c / x for c, x in zip(rounds["compile"], rounds["ours gated-gemm"])]
                               if g else [])
        if args.dram:
            row["dram_eager"] = ncu_dram_bytes(args.bench, cfg, "eager", e.kernels if e else 5)
            row["dram_gated"] = ncu_dram_bytes(args.bench, cfg, "gated-gemm",
                                               g.kernels if g else 2, row["kernel_choices"])
        target = TARGET_POST if sh == POST else TARGET_SWEEP
        row["target"] = target
        row["vs_compile"] = t["compile"] / gated_us if gated_us else 0
        graph_c, graph_g = med.get("compile+graph"), med.get("ours gated-gemm+graph")
        row["graph_us"] = {"compile": graph_c, "gated": graph_g}
        row["vs_compile_graph"] = graph_c / graph_g if graph_c and graph_g else 0
        row["compile_host_bound"] = bool(graph_c and t["compile"] > HOST_BOUND * graph_c)
        row["vs_eager"] = t["eager"] / gated_us if gated_us else 0
        ok = row["passed"] and row["vs_compile"] >= target
        if args.dram:
            ok &= (row["dram_gated"] is not None and row["dram_eager"] is not None and
                   row["dram_gated"] <= row["dram_eager"])
        row["met"] = ok
        failed |= not ok
        rows.append(row)
        fmt = lambda v: ", ".join(f"{x:.1f}" for x in v)
        print(f"  {cfg['name']} {sh[3]} {sh[4]}: torch eager {t['eager']:.1f} us, compile "
              f"{t['compile']:.1f} us, ours eager {eager_us or 0:.1f} us, gated-gemm "
              f"{gated_us or 0:.1f} us; {iters} passes a window; rounds: compile {fmt(rounds['compile'])}, gated "
              f"{fmt(rounds.get('ours gated-gemm', []))}; compile / gated per round "
              f"{', '.join(f'{x:.3f}' for x in row['round_ratios'])}; in CUDA graphs compile "
              f"{graph_c or 0:.1f} us, gated-gemm {graph_g or 0:.1f} us; GPU during compile "
              f"{clock_words(median_clock(clocks['compile']))}, during gated "
              f"{clock_words(median_clock(clocks.get('ours gated-gemm', [])))}; kernels "
              f"{row['kernel_choices']}{dram_words(row)}", flush=True)
        for m in mine.values():
            m.close()
        del model, compiled, inputs, contenders
        torch.cuda.empty_cache()

    print(f"\nGated MLP sweep: ours gated-gemm (2 kernels) vs PyTorch, median us per forward pass "
          f"(median of {args.rounds} rotating rounds in one process)")
    head = (f"{'rows':>6} {'dim':>5} {'hidden':>6} {'dtype':>5} {'act':>9} {'eager':>8} "
            f"{'compile':>8} {'our eag':>8} {'gated':>8} {'vs eager':>8} {'vs comp':>8} "
            f"{'target':>6} {'graphed':>8}")
    if args.dram:
        head += f" {'DRAM eager MB':>13} {'DRAM gated MB':>13}"
    print(head + "  result")
    for r in rows:
        rows_, dim, hidden, dtype, act = r["shape"]
        t = r["torch_us"]
        graphed_ratio = f"{r['vs_compile_graph']:.2f}x" if r["vs_compile_graph"] else "n/a"
        line = (f"{rows_:>6} {dim:>5} {hidden:>6} {dtype:>5} {act:>9} {t['eager']:>8.1f} "
                f"{t['compile']:>8.1f} {r['eager_us'] or 0:>8.1f} {r['gated_us'] or 0:>8.1f} "
                f"{r['vs_eager']:>7.2f}x "
                f"{r['vs_compile']:>7.2f}x {r['target']:>5.2f}x {graphed_ratio:>8}")
        if args.dram:
            fmt = lambda b: f"{b / 1e6:>13.1f}" if b is not None else f"{'n/a':>13}"
            line += f" {fmt(r['dram_eager'])} {fmt(r['dram_gated'])}"
        why = "" if r["passed"] else " (check failed)"
        host = "*" if r["compile_host_bound"] else ""
        print(line + ("  met" if r["met"] else "  MISSED" + why) + host)
    if any(r["compile_host_bound"] for r in rows):
        print(f"* torch.compile's pass took over {HOST_BOUND:.2f}x its time replayed from a CUDA "
              "graph: its host's launches, not the GPU, set its time there, so that row's ratio "
              "depends on the host (the graphed column is the GPU's alone)")
    print("kernels chosen at set-up (gated GEMM configuration; down projection):")
    for r in rows:
        print(f"  {r['shape'][0]} x {r['shape'][1]} -> {r['shape'][2]}: {r['kernel_path']}"
              f"{' [' + r['kernel_choices'] + ']' if r.get('kernel_choices') else ''}")
    return rows, failed


def main():
    global PASSES_PER_SAMPLE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True, help="path of the kernels_bench program")
    ap.add_argument("--preset", action="append", help="presets (default: the three targets)")
    ap.add_argument("--config", action="append", metavar="JSON",
                    help="an MLP of one's own, as kernels_bench --config takes it, timed and "
                         "checked as the presets are (no target)")
    ap.add_argument("--sweep", action="store_true", help="the gated sweep with its targets")
    ap.add_argument("--dram", action="store_true",
                    help="with --sweep: DRAM bytes per forward pass through Nsight Compute")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=4,
                    help="rounds over every contender, each timed once per round")
    ap.add_argument("--min-window-ms", type=float, default=300,
                    help="each timed window lasts at least this long (more passes for fast "
                         "shapes; 0: exactly --iters)")
    ap.add_argument("--passes-per-sample", type=int, default=PASSES_PER_SAMPLE,
                    help="back-to-back passes between two CUDA events (1: an event after every "
                         "pass, which adds ~2 us of idle GPU to each)")
    ap.add_argument("--lib", help="libfusionscope_mlp.so (default: beside --bench)")
    ap.add_argument("--only", action="append", metavar="ROWSxDIMxHIDDEN",
                    help="with --sweep: only these shapes of the sweep (e.g. 8192x4096x14336)")
    ap.add_argument("--shape", action="append", type=parse_shape,
                    metavar="ROWSxDIMxHIDDEN:DTYPE:ACT",
                    help="a gated shape of one's own, timed and checked as the sweep's are "
                         f"(target {TARGET_SWEEP}x torch.compile), with or without --sweep; e.g. "
                         "8192x4096x11008:bf16:silu")
    ap.add_argument("--pin", default="",
                    help="with --sweep: our gated variant runs these kernel choices (as "
                         "kernels_bench --pin-kernels takes them) instead of timing candidates")
    ap.add_argument("--json", help="write all figures here")
    args = ap.parse_args()
    PASSES_PER_SAMPLE = max(1, args.passes_per_sample)

    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 * 2**20)
    print(f"{props.name}, torch {torch.__version__}, L2 {l2 / 2**20:.0f} MiB")

    ours = load_ours(args)
    if ours is None:
        return 2

    args.sampler = GpuSampler(smi_index(str(getattr(props, "uuid", "") or "")))
    if args.sampler.proc is None:
        print("(no clock or power figures: nvidia-smi cannot sample this GPU)", file=sys.stderr)
    report, failed = {}, False
    try:
        if args.preset or args.config or not (args.sweep or args.shape):
            report["presets"], f = presets_mode(args, l2, ours)
            failed |= f
        if args.sweep or args.shape:
            report["sweep"], f = sweep_mode(args, l2, ours)
            failed |= f
    finally:
        args.sampler.close()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    if failed:
        print("\nFAILED: a check or a target was missed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
