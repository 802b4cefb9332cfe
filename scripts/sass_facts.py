#!/usr/bin/env python3
"""The SASS facts of the Hopper GEMM kernels: which tensor-core, TMA, cluster-barrier and
local-memory instructions each compiled kernel holds, read from `cuobjdump -sass`.

    scripts/sass_facts.py LIBRARY_OR_BINARY        runs cuobjdump -sass on it
    scripts/sass_facts.py --from-dump FILE         reads a saved cuobjdump -sass listing

It prints, for the kernels whose name holds --kernel (default hopper_gemm_kernel), every
instruction of the families below with the number of kernels that hold it and its total count,
then the checks. Exits 1 when a check fails: no such kernel, a kernel without one of --require
(default HGMMA, UTMALDG and UTMASTG: the main loop is wgmma fed by TMA and the epilogue stores
through TMA), or any LDL / STL (local memory: register spills; counted but allowed with
--allow-spills), so that a build whose kernels lost any of these shows."""

import argparse
import collections
import re
import subprocess
import sys

FAMILIES = ("HGMMA", "WARPGROUP", "UTMALDG", "UTMASTG", "UTMAPF", "UTMACCTL", "UCGABAR", "SYNCS",
            "LDL", "STL")
REQUIRED = ("HGMMA", "UTMALDG", "UTMASTG")  # the Hopper GEMM's
SPILLS = ("LDL", "STL")

FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
ARCH = re.compile(r"^\s*code for (sm_\w+)")
# "/*0a70*/   @!P0 HGMMA.64x256x16.F32.BF16 R24, ..." (the encodings' "/* 0x... */" do not match)
INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.\w+)*)")


def parse(lines, kernel):
    """{function name: Counter of opcodes with their modifiers} of the matching kernels, and the
    architectures the listing holds code for."""
    kernels, archs = {}, set()
    current = None
    for line in lines:
        m = ARCH.match(line)
        if m:
            archs.add(m.group(1))
            continue
        m = FUNCTION.match(line)
        if m:
            current = kernels.setdefault(m.group(1), collections.Counter()) \
                if kernel in m.group(1) else None
            continue
        if current is not None:
            m = INSTRUCTION.search(line)
            if m:
                current[m.group(1)] += 1
    return kernels, archs


def family(opcode):
    """The listed family an opcode belongs to (UCGABAR_ARV and UCGABAR_WAIT: UCGABAR), or its
    own name."""
    name = opcode.split(".", 1)[0]
    return next((f for f in FAMILIES if name == f or name.startswith(f + "_")), name)


def report(kernels, archs, kernel, required=REQUIRED, out=sys.stdout, allow_spills=False):
    """Prints the table and the checks (each kernel holds every family in `required`, none holds
    LDL or STL unless allow_spills); returns the failed checks."""
    held = collections.Counter()   # opcode -> kernels holding it
    total = collections.Counter()  # opcode -> instructions over all kernels
    for ops in kernels.values():
        for op, n in ops.items():
            if family(op) in FAMILIES:
                held[op] += 1
                total[op] += n
    print(f"{len(kernels)} kernels named *{kernel}* (code for {', '.join(sorted(archs)) or 'no'} "
          f"architecture)", file=out)
    if held:
        print(f"  {'instruction':40} {'kernels':>7} {'total':>7}", file=out)
        for op in sorted(held, key=lambda o: (FAMILIES.index(family(o)), o)):
            print(f"  {op:40} {held[op]:7} {total[op]:7}", file=out)
    failed = []
    if not kernels:
        failed.append(f"no kernel named *{kernel}*")
    for fam in required:
        lacking = [k for k, ops in kernels.items() if not any(family(o) == fam for o in ops)]
        if lacking:
            failed.append(f"{len(lacking)} kernels without {fam} (first: {lacking[0]})")
    spills = sum(n for op, n in total.items() if family(op) in SPILLS)
    spilling = sum(1 for ops in kernels.values() if any(family(o) in SPILLS for o in ops))
    spill_words = f"{spills} local-memory instructions (LDL/STL) in {spilling} kernels"
    if spills and not allow_spills:
        failed.append(f"{spill_words}: register spills")
    for f in failed:
        print(f"FAILED: {f}", file=out)
    if not failed:
        print(f"ok: every kernel holds {', '.join(required)}; "
              f"{spill_words + ' (allowed)' if spills else 'no LDL/STL'}", file=out)
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary", nargs="?", help="a library or program with device code")
    ap.add_argument("--from-dump", metavar="FILE", help="a saved `cuobjdump -sass` listing")
    ap.add_argument("--kernel", default="hopper_gemm_kernel",
                    help="the part of the kernels' (mangled) names to select")
    ap.add_argument("--require", default=",".join(REQUIRED),
                    help="instruction families every kernel must hold, comma-separated")
    ap.add_argument("--allow-spills", action="store_true",
                    help="count LDL/STL without failing (kernels that spill by choice)")
    ap.add_argument("--cuobjdump", default="cuobjdump")
    args = ap.parse_args()
    if bool(args.binary) == bool(args.from_dump):
        ap.error("give a binary or --from-dump FILE")
    if args.from_dump:
        with open(args.from_dump, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
    else:
        try:
            run = subprocess.run([args.cuobjdump, "-sass", args.binary], capture_output=True,
                                 text=True, errors="replace", check=False)
        except FileNotFoundError:
            sys.exit(f"sass_facts: {args.cuobjdump} not found (it comes with the CUDA Toolkit)")
        if run.returncode != 0:
            sys.exit(f"sass_facts: {args.cuobjdump} -sass {args.binary} failed: "
                     f"{run.stderr.strip()[:300]}")
        lines = run.stdout.splitlines()
    kernels, archs = parse(lines, args.kernel)
    required = [f for f in args.require.split(",") if f]
    unknown = [f for f in required if f not in FAMILIES]
    if unknown:
        ap.error(f"--require: {', '.join(unknown)} not among {', '.join(FAMILIES)}")
    return 1 if report(kernels, archs, args.kernel, required,
                       allow_spills=args.allow_spills) else 0


if __name__ == "__main__":
    sys.exit(main())
