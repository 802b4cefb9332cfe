#!/usr/bin/env python3
"""Writes the wgmma wrappers kernels/src/cuda/wgmma_m64n*k16.inc (bf16 and fp16 with fp32
accumulators; where a row asks, fp16 with fp16 accumulators too).

  python3 scripts/gen_wgmma.py [--check]

Each file holds one wgmma.mma_async shape as inline PTX, one function a form and element type:
A from shared memory (ss: descriptors for A and B) or from registers (rs: A's four registers, B's
descriptor). fp16-accumulator forms (`_f16acc`, fp16 only) take the accumulator as packed pairs,
n / 4 registers. A width the kernels need is a row of SHAPES below, then a run of this script.
--check writes nothing and fails when a file differs from what it would write.
"""
import argparse
import pathlib
import sys

OUT = pathlib.Path(__file__).resolve().parent.parent / "kernels" / "src" / "cuda"

# n, forms, how d is passed ("array": float (&d)[n / 2]; "pointer": float* d, the first n / 2
# registers of a wider accumulator), whether the names carry the form, the forms that also come
# with fp16 accumulators, and the file's header.
SHAPES = [
    (48, ["rs"], "pointer", True, ["rs"],
     "// Generated: wgmma.mma_async m64n48k16 with fp32 accumulators, A from registers, B from shared\n"
     "// memory, into the first 24 registers of a 64-wide accumulator (d): the 48-wide layers of\n"
     "// fully_fused_mlp_sm90.cu (no MMA work on the padding columns), which includes this file only.\n"),
    (64, ["ss", "rs"], "array", True, ["ss", "rs"],
     "// Generated: wgmma.mma_async m64n64k16 with fp32 accumulators; A from shared memory (_ss) or\n"
     "// from registers (_rs), B from shared memory. Included by fully_fused_mlp_sm90.cu only.\n"),
    (96, ["rs"], "pointer", True, ["rs"],
     "// Generated: wgmma.mma_async m64n96k16 with fp32 accumulators, A from registers, B from shared\n"
     "// memory, into the first 48 registers of a 128-wide accumulator (d): the 96-wide layers of\n"
     "// fully_fused_mlp_sm90.cu (no MMA work on the padding columns), which includes this file only.\n"),
    (128, ["ss", "rs"], "array", True, ["ss", "rs"],
     "// Generated: wgmma.mma_async m64n128k16 with fp32 accumulators; A from shared memory (_ss) or\n"
     "// from registers (_rs), B from shared memory. Included by fully_fused_mlp_sm90.cu and\n"
     "// hopper_gemm_sm90.cu.\n"),
    (160, ["ss"], "array", False, [],
     "// Generated: wgmma.mma_async m64n160k16 with fp32 accumulators, A and B from shared memory.\n"
     "// Included by hopper_gemm_sm90.cu only.\n"),
    (192, ["ss"], "array", False, [],
     "// Generated: wgmma.mma_async m64n192k16 with fp32 accumulators, A and B from shared memory.\n"
     "// Included by hopper_gemm_sm90.cu only.\n"),
    (224, ["ss"], "array", False, [],
     "// Generated: wgmma.mma_async m64n224k16 with fp32 accumulators, A and B from shared memory.\n"
     "// Included by hopper_gemm_sm90.cu only.\n"),
    (256, ["ss"], "array", False, [],
     "// Generated: wgmma.mma_async m64n256k16 with fp32 accumulators, A and B from shared memory.\n"
     "// Included by hopper_gemm_sm90.cu only.\n"),
]
TYPES = [("__nv_bfloat16", "bf16"), ("__half", "f16")]


def signature(n, form, d_kind, suffixed, specialization=None, f16acc=False):
    name = f"wgmma_m64n{n}k16" + (f"_{form}" if suffixed else "") + ("_f16acc" if f16acc else "")
    elem, regs = ("uint32_t", n // 4) if f16acc else ("float", n // 2)
    d = f"{elem}* d" if d_kind == "pointer" else f"{elem} (&d)[{regs}]"
    a = "uint64_t da" if form == "ss" else "const uint32_t (&a)[4]"
    spec = f"<{specialization}>" if specialization else ""
    return f"void {name}{spec}({d}, {a}, uint64_t db, int scale_d)"


def register_list(regs):
    """The accumulators' operands: on the instruction's line up to 64, else 16 to a line."""
    if regs <= 64:
        return '      "{' + ",".join(f"%{i}" for i in range(regs)) + "}"
    rows = [",".join(f"%{i}" for i in range(r, min(r + 16, regs))) for r in range(0, regs, 16)]
    body = "".join(f'      "{row}{"," if k + 1 < len(rows) else ""}"\n' for k, row in enumerate(rows))
    return '      "{"\n' + body + '      "}'


def function(n, form, d_kind, suffixed, ctype, ptx_type, f16acc=False):
    regs = n // 4 if f16acc else n // 2
    if form == "ss":
        operands, pred = f", %{regs}, %{regs + 1}, p, 1, 1, 0, 0", regs + 2
        inputs = '"l"(da), "l"(db), "r"(scale_d)'
    else:
        operands = f", {{%{regs}, %{regs + 1}, %{regs + 2}, %{regs + 3}}}, %{regs + 4}, p, 1, 1, 0"
        pred = regs + 5
        inputs = '"r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d)'
    constraint, acc = ('"+r"', "f16") if f16acc else ('"+f"', "f32")
    outputs = ", ".join(f"{constraint}(d[{i}])" for i in range(regs))
    head = ("" if f16acc else "template <>\n") + "__device__ __forceinline__ "
    return (
        f"{head}{signature(n, form, d_kind, suffixed, None if f16acc else ctype, f16acc)} {{\n"
        "  asm volatile(\n"
        f'      "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{pred}, 0;\\n"\n'
        f'      "wgmma.mma_async.sync.aligned.m64n{n}k16.{acc}.{ptx_type}.{ptx_type} "\n'
        f"{register_list(regs)}{operands};\\n}}\\n\"\n"
        f"      : {outputs}\n"
        f"      : {inputs});\n"
        "}\n")


def render(n, forms, d_kind, suffixed, f16acc_forms, header):
    decls = "".join(f"template <typename T>\n__device__ {signature(n, f, d_kind, suffixed)};\n"
                    for f in forms)
    bodies = [function(n, f, d_kind, suffixed, ctype, ptx) for ctype, ptx in TYPES for f in forms]
    note = "// Written by scripts/gen_wgmma.py: change that, then run it.\n"
    if f16acc_forms:
        note += ("// The _f16acc forms (fp16 only) accumulate in fp16: d is packed pairs, register i the\n"
                 "// pair of the fp32 form's registers 2i and 2i + 1.\n")
        bodies += [function(n, f, d_kind, suffixed, "__half", "f16", True) for f in f16acc_forms]
    return header + note + decls + "\n" + "\n".join(bodies)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare, write nothing")
    args = ap.parse_args()
    stale = []
    for n, forms, d_kind, suffixed, f16acc_forms, header in SHAPES:
        path = OUT / f"wgmma_m64n{n}k16.inc"
        text = render(n, forms, d_kind, suffixed, f16acc_forms, header)
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(path.name)
        elif not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path.name}")
    if stale:
        print("gen_wgmma: differs from what scripts/gen_wgmma.py writes: " + ", ".join(stale),
              file=sys.stderr)
        return 1
    if args.check:
        print(f"gen_wgmma: {len(SHAPES)} files as the script writes them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
