#!/usr/bin/env python3
"""A fusionscope Lab configuration run as a PyTorch module: the Lab's torch-eager and
torch-compile variants, captured by `fusionscope capture -- python3 torch_mlp.py ...`.

It runs the configuration as fusionscope's own runner does: the same shapes and dtype, inputs
drawn from a seed (never zeros), rotating input copies when one copy fits in L2, warm-up then
timed iterations, each iteration an NVTX range "iteration N" and each op an NVTX range named as
the variant's plan names it (gate, gelu-tanh, up, mul, down; layer0.linear...), so that the
capture maps ops to kernels exactly as for fusionscope's variants. Each timed iteration is timed
with CUDA events; the result goes to --out as JSON.

torch-compile compiles each op region of the plan on its own (the fused activation*multiply
region is one graph, which Inductor turns into one Triton kernel such as
triton_poi_fused_gelu_mul_0; the GEMMs stay cuBLAS calls, as in a whole-module compile), so that
the NVTX ranges can sit between the regions: a range inside a compiled graph would break it.

    python3 torch_mlp.py --config '{"kind": "gated", ...}' --variant torch-eager \
        --warmup 5 --iters 20 --out result.json [--torch-profiler] [--op-events] [--no-nvtx]
"""

import argparse
import json
import math
import sys
import time


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", required=True, help="the configuration as fusionscope writes it")
    p.add_argument("--variant", required=True, choices=["torch-eager", "torch-compile"])
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--out", help="where to write the timing (JSON); stdout when absent")
    p.add_argument("--seed", type=int, default=0x5EED)
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--input-sets", type=int, default=0, help="rotating inputs; 0: automatic")
    p.add_argument("--no-nvtx", action="store_true", help="open no NVTX ranges")
    p.add_argument("--torch-profiler", action="store_true",
                   help="run the warm-up and timed iterations under torch.profiler (CPU + CUDA)")
    p.add_argument("--op-events", action="store_true",
                   help="also time every op with its own CUDA events (op_ms in the result)")
    p.add_argument("--queue-ahead-ms", type=float, default=0,
                   help="before the timed iterations, keep the GPU busy this long so that they "
                        "queue up behind it (per-op events then time the GPU alone)")
    p.add_argument("--check", action="store_true", help="check that torch is usable and exit")
    return p.parse_args(argv)


def availability():
    """None when torch with CUDA can run the variants, else why not (one sentence)."""
    try:
        import torch  # noqa: F401
    except Exception as e:  # pragma: no cover - depends on the machine
        return "PyTorch is not installed for this python3 (%s)" % e.__class__.__name__
    import torch
    if not torch.cuda.is_available():
        return "PyTorch %s sees no CUDA device" % torch.__version__
    return None


class Ranges:
    def __init__(self, torch, enabled):
        self.torch = torch
        self.enabled = enabled

    def push(self, name):
        if self.enabled:
            self.torch.cuda.nvtx.range_push(name)

    def pop(self):
        if self.enabled:
            self.torch.cuda.nvtx.range_pop()


def build(torch, cfg, variant, gen, device):
    """The forward pass as a list of (op name, function of the state dict)."""
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[cfg["dtype"]]
    kind = cfg["kind"]
    widths = cfg["widths"]
    bias = bool(cfg.get("bias", False))
    act_name = cfg.get("activation", "none")
    F = torch.nn.functional

    def act(x):
        if act_name == "relu":
            return F.relu(x)
        if act_name == "gelu-tanh":
            return F.gelu(x, approximate="tanh")
        if act_name == "silu":
            return F.silu(x)
        return x

    def weight(out_f, in_f):
        # As nn.Linear initialises: uniform in +-1/sqrt(in).
        bound = 1.0 / math.sqrt(in_f)
        w = (torch.rand((out_f, in_f), generator=gen, device=device, dtype=torch.float32) * 2 - 1)
        return (w * bound).to(dtype)

    def vector(n, in_f):
        bound = 1.0 / math.sqrt(in_f)
        v = (torch.rand((n,), generator=gen, device=device, dtype=torch.float32) * 2 - 1)
        return (v * bound).to(dtype)

    compiled = variant == "torch-compile"

    def maybe_compile(fn):
        return torch.compile(fn, fullgraph=True, dynamic=False) if compiled else fn

    ops = []
    if kind == "gated":
        d, h = widths
        wg, wu, wd = weight(h, d), weight(h, d), weight(d, h)
        gate = maybe_compile(lambda x: F.linear(x, wg))
        up = maybe_compile(lambda x: F.linear(x, wu))
        down = maybe_compile(lambda x: F.linear(x, wd))
        if compiled:
            fused = maybe_compile(lambda g, u: act(g) * u)
            ops = [
                ("gate", lambda s: s.__setitem__("g", gate(s["x"]))),
                ("up", lambda s: s.__setitem__("u", up(s["x"]))),
                (act_name + "*mul", lambda s: s.__setitem__("h", fused(s["g"], s["u"]))),
                ("down", lambda s: s.__setitem__("y", down(s["h"]))),
            ]
        else:
            # The order PyTorch runs a GLU module in: act(gate(x)) first, then up(x).
            ops = [
                ("gate", lambda s: s.__setitem__("g", gate(s["x"]))),
                (act_name, lambda s: s.__setitem__("a", act(s["g"]))),
                ("up", lambda s: s.__setitem__("u", up(s["x"]))),
                ("mul", lambda s: s.__setitem__("h", s["a"] * s["u"])),
                ("down", lambda s: s.__setitem__("y", down(s["h"]))),
            ]
        return ops, dtype, widths[0], widths[0]

    # linear and mlp: layer i maps widths[i] -> widths[i + 1]
    layers = len(widths) - 1
    for i in range(layers):
        in_f, out_f = widths[i], widths[i + 1]
        w = weight(out_f, in_f)
        b = vector(out_f, in_f) if bias else None
        last = i + 1 == layers
        has_act = kind == "mlp" and not last and act_name != "none"
        src = "x" if i == 0 else "h%d" % (i - 1)
        dst = "y" if last else "h%d" % i
        prefix = "linear" if kind == "linear" else "layer%d." % i
        if kind == "linear":
            fn = maybe_compile(lambda x, w=w, b=b: F.linear(x, w, b))
            ops.append((prefix, lambda s, fn=fn, src=src, dst=dst: s.__setitem__(dst, fn(s[src]))))
            continue
        if compiled and has_act:
            # As Inductor: the GEMM without its bias, then bias + activation in one kernel.
            mm = maybe_compile(lambda x, w=w: F.linear(x, w))
            tail = maybe_compile(
                (lambda y, b=b: act(y + b)) if bias else (lambda y: act(y)))
            what = ("bias+" + act_name) if bias else act_name
            ops.append((prefix + "linear",
                        lambda s, mm=mm, src=src: s.__setitem__("t", mm(s[src]))))
            ops.append((prefix + what,
                        lambda s, tail=tail, dst=dst: s.__setitem__(dst, tail(s["t"]))))
        else:
            lin = maybe_compile(lambda x, w=w, b=b: F.linear(x, w, b))
            ops.append((prefix + "linear",
                        lambda s, lin=lin, src=src: s.__setitem__("t", lin(s[src]))))
            if has_act:
                ops.append((prefix + act_name,
                            lambda s, dst=dst: s.__setitem__(dst, act(s["t"]))))
            else:
                ops.append((None, lambda s, dst=dst: s.__setitem__(dst, s["t"])))
    return ops, dtype, widths[0], widths[-1]


def input_sets(torch, rows, in_f, out_f, dtype, requested):
    if requested > 0:
        return requested
    elem = torch.tensor([], dtype=dtype).element_size()
    set_bytes = rows * (in_f + out_f) * elem
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0)
    if l2 <= 0 or set_bytes * 2 > l2:
        return 1
    sets = int(min(256, math.ceil(3 * l2 / set_bytes)))
    free, _ = torch.cuda.mem_get_info()
    while sets > 1 and sets * set_bytes > free / 4:
        sets //= 2
    return max(sets, 1)


def main(argv):
    args = parse_args(argv)
    why = availability()
    if args.check:
        print(json.dumps({"ok": why is None, "why": why or ""}))
        return 0 if why is None else 1
    result = {"ok": False, "variant": args.variant}

    def finish(code):
        text = json.dumps(result)
        if args.out:
            with open(args.out, "w") as f:
                f.write(text)
        else:
            print(text)
        return code

    if why is not None:
        result["error"] = why
        return finish(3)
    import torch
    torch.cuda.set_device(args.device)
    device = torch.device("cuda", args.device)
    cfg = json.loads(args.config)
    gen = torch.Generator(device=device)
    gen.manual_seed(args.seed)
    ranges = Ranges(torch, not args.no_nvtx)
    try:
        ops, dtype, in_f, out_f = build(torch, cfg, args.variant, gen, device)
        rows = int(cfg["rows"])
        sets = input_sets(torch, rows, in_f, out_f, dtype, args.input_sets)
        inputs = [(torch.randn((rows, in_f), generator=gen, device=device, dtype=torch.float32))
                  .to(dtype) for _ in range(sets)]
    except Exception as e:
        result["error"] = "setting up the configuration failed: %s: %s" % (type(e).__name__, e)
        return finish(4)

    stream = torch.cuda.current_stream()
    op_events = []

    def one_pass(iteration, timed):
        ranges.push("iteration %d" % iteration)
        state = {"x": inputs[iteration % sets]}
        for name, fn in ops:
            if name is not None:
                ranges.push(name)
            if timed and args.op_events and name is not None:
                b = torch.cuda.Event(enable_timing=True)
                e = torch.cuda.Event(enable_timing=True)
                b.record(stream)
                fn(state)
                e.record(stream)
                op_events.append((name, b, e))
            else:
                fn(state)
            if name is not None:
                ranges.pop()
        ranges.pop()
        return state["y"]

    profiler = None
    if args.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        profiler = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        profiler.__enter__()
    try:
        iteration = 0
        t_start = time.perf_counter()
        for _ in range(args.warmup):
            one_pass(iteration, False)
            iteration += 1
        torch.cuda.synchronize()
        if args.variant == "torch-compile" and args.warmup > 0:
            # Compiled and warm: the guards need not be checked on every call (PyTorch >= 2.6),
            # which keeps the four compiled regions' Python overhead under the GPU's time.
            try:
                torch.compiler.set_stance("default", skip_guard_eval_unsafe=True)
            except Exception:
                pass
        events = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters + 1)]
        if args.queue_ahead_ms > 0:
            # clock_rate (kHz) where PyTorch reports it; 2 GHz otherwise (the length only needs
            # to cover the time the CPU takes to queue the timed iterations).
            props = torch.cuda.get_device_properties(args.device)
            clock_hz = getattr(props, "clock_rate", 2_000_000) * 1e3
            torch.cuda._sleep(int(args.queue_ahead_ms * 1e-3 * clock_hz))
        t0 = time.perf_counter()
        events[0].record(stream)
        for i in range(args.iters):
            one_pass(iteration, True)
            iteration += 1
            events[i + 1].record(stream)
        torch.cuda.synchronize()
        wall_ms = (time.perf_counter() - t0) * 1e3
    except Exception as e:
        result["error"] = "the run failed: %s: %s" % (type(e).__name__, e)
        return finish(5)
    finally:
        if profiler is not None:
            profiler.__exit__(None, None, None)
    ms = [events[i].elapsed_time(events[i + 1]) for i in range(args.iters)]
    srt = sorted(ms)
    n = len(srt)
    median = srt[n // 2] if n % 2 else 0.5 * (srt[n // 2 - 1] + srt[n // 2])
    result.update({
        "ok": True,
        "iteration_ms": ms,
        "median_ms": median,
        "min_ms": srt[0],
        "mean_ms": sum(ms) / n,
        "wall_ms": wall_ms,
        "total_ms": (time.perf_counter() - t_start) * 1e3,
        "input_sets": sets,
        "device": torch.cuda.get_device_name(args.device),
        "torch": torch.__version__,
        "kernel_path": "PyTorch %s %s" % (
            torch.__version__, "Inductor (torch.compile)" if args.variant == "torch-compile"
            else "eager"),
    })
    if args.op_events:
        result["op_ms"] = [{"op": name, "ms": b.elapsed_time(e)} for name, b, e in op_events]
    return finish(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
