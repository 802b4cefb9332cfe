#!/usr/bin/env python3
"""A fusionscope Lab configuration run as a PyTorch module: the Lab's torch-eager and
torch-compile variants, captured by `fusionscope capture -- python3 torch_mlp.py ...`.

It runs the configuration as fusionscope's own runner does: the same shapes and dtype, inputs
drawn from a seed (never zeros), rotating input copies when one copy fits in L2, warm-up then
timed iterations, each iteration an NVTX range "iteration N". Each timed iteration is timed with
CUDA events; the result goes to --out as JSON.

torch-eager runs the module op by op, each op inside an NVTX range named as the variant's plan
names it (gate, gelu-tanh, up, mul, down; layer0.linear...), so that the capture maps ops to
kernels exactly as for fusionscope's variants.

torch-compile compiles the whole module once, as users do (torch.compile(module)), in an NVTX
range "torch.compile" before the iterations; Inductor fuses the activation and the multiply into
one Triton kernel (triton_poi_fused_gelu_mul_0 for the post's GeGLU) and leaves the GEMMs to
cuBLAS. A range inside a compiled graph would break it, so each iteration is one range and the
capture gives its kernels their ops by launch order against the plan (fusionscope's op_order.h).

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
                   help="also time every op with its own CUDA events (op_ms in the result; "
                        "torch-eager only: a compiled module has no ops to time apart)")
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

    if variant == "torch-compile":
        module = whole_module(torch, cfg, weight, vector, act)
        compiled = torch.compile(module, fullgraph=True, dynamic=False)
        # One op without a name: no NVTX range inside the iteration (see the docstring).
        return [(None, lambda s: s.__setitem__("y", compiled(s["x"])))], dtype, widths[0], \
            widths[0] if kind == "gated" else widths[-1]

    ops = []
    if kind == "gated":
        d, h = widths
        wg, wu, wd = weight(h, d), weight(h, d), weight(d, h)
        # The order PyTorch runs a GLU module in: act(gate(x)) first, then up(x).
        ops = [
            ("gate", lambda s: s.__setitem__("g", F.linear(s["x"], wg))),
            (act_name, lambda s: s.__setitem__("a", act(s["g"]))),
            ("up", lambda s: s.__setitem__("u", F.linear(s["x"], wu))),
            ("mul", lambda s: s.__setitem__("h", s["a"] * s["u"])),
            ("down", lambda s: s.__setitem__("y", F.linear(s["h"], wd))),
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
            ops.append((prefix, lambda s, w=w, b=b, src=src, dst=dst:
                        s.__setitem__(dst, F.linear(s[src], w, b))))
            continue
        ops.append((prefix + "linear", lambda s, w=w, b=b, src=src:
                    s.__setitem__("t", F.linear(s[src], w, b))))
        if has_act:
            ops.append((prefix + act_name, lambda s, dst=dst: s.__setitem__(dst, act(s["t"]))))
        else:
            ops.append((None, lambda s, dst=dst: s.__setitem__(dst, s["t"])))
    return ops, dtype, widths[0], widths[-1]


def whole_module(torch, cfg, weight, vector, act):
    """The configuration as one torch.nn.Module, for torch.compile: weights drawn as for the eager
    variant, in the same order, so both variants compute the same function."""
    F = torch.nn.functional
    kind = cfg["kind"]
    widths = cfg["widths"]
    bias = bool(cfg.get("bias", False))
    act_name = cfg.get("activation", "none")

    def frozen(t):
        return torch.nn.Parameter(t, requires_grad=False)

    class Gated(torch.nn.Module):
        def __init__(self):
            super().__init__()
            d, h = widths
            self.wg, self.wu, self.wd = frozen(weight(h, d)), frozen(weight(h, d)), \
                frozen(weight(d, h))

        def forward(self, x):
            return F.linear(act(F.linear(x, self.wg)) * F.linear(x, self.wu), self.wd)

    class Layers(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.ParameterList()
            self.b = torch.nn.ParameterList()
            for i in range(len(widths) - 1):
                in_f, out_f = widths[i], widths[i + 1]
                self.w.append(frozen(weight(out_f, in_f)))
                if bias:
                    self.b.append(frozen(vector(out_f, in_f)))

        def forward(self, x):
            layers = len(self.w)
            for i in range(layers):
                x = F.linear(x, self.w[i], self.b[i] if bias else None)
                if kind == "mlp" and i + 1 < layers and act_name != "none":
                    x = act(x)
            return x

    return Gated() if kind == "gated" else Layers()


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

    if args.variant == "torch-compile":
        # Compiled before the iterations, outside them, so that every warm-up and timed iteration
        # runs the compiled module's kernels (Inductor also benchmarks its Triton kernels' configs
        # on the first call).
        try:
            ranges.push("torch.compile")
            ops[0][1]({"x": inputs[0]})
            ranges.pop()
            torch.cuda.synchronize()
        except Exception as e:
            result["error"] = "torch.compile failed: %s: %s" % (type(e).__name__, e)
            return finish(4)

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
