#!/usr/bin/env python3
"""Fits the polynomials of act_poly_f16x2 (kernels/src/cuda/fused_epilogue_sm90.cuh): GELU-tanh
and SiLU on a pair of fp16 values in f16x2 FMAs, without the MUFU's tanh.

  python3 scripts/fit_act_poly.py [--check]     (needs NumPy: apt-get install python3-numpy)

Both folded activations are 2 relu(y) - r(|y|), r(a) = a (1 - tanh(u(a))):
  GELU: y = z = x / s (s = (c0 c1)^(-1/3)), u(a) = a (a^2 + c0 s): 2 GELU(x) / s;
  SiLU: y = x / 2, u(a) = a: SiLU(x).
r is a bump that has all but vanished at a = c, so the kernel evaluates r(a) ~ a Q(v) with
v = min(a, c) (2 / c) - 1 in [-1, 1] by Horner's rule, every step rounded to fp16. Q is fitted by
weighted least squares (reweighted towards the largest errors, near minimax); its coefficients
are rounded to fp16 one at a time from the highest, refitting the rest after each, so that the
rounding of one is made up by the others. The error is then measured over every fp16 input by
emulating the kernel's fp16 arithmetic (one rounding an fma), next to act_f16x2's with an
exactly rounded tanh. --check fails when the header's coefficients differ from the fit.
"""
import argparse
import pathlib
import re
import sys

import numpy as np

HEADER = (pathlib.Path(__file__).resolve().parent.parent / "kernels" / "src" / "cuda" /
          "fused_epilogue_sm90.cuh")
C0 = 0.7978845608028654
S = (C0 * 0.044715) ** (-1 / 3)  # kGeluScale
F16 = np.float16

# name, u(a), c, degree of Q, the header's array
CASES = [
    ("GELU", lambda a: a * (a * a + C0 * S), 1.35, 6, "kGeluQ"),
    ("SiLU", lambda a: a, 4.5, 8, "kSiluQ"),
    # one degree lower (kLow: bf16's fp16 hidden layers, FusedEpilogue::kPolyLow)
    ("GELU", lambda a: a * (a * a + C0 * S), 1.2, 5, "kGeluLowQ"),
    ("SiLU", lambda a: a, 4.2, 7, "kSiluLowQ"),
]


def bump(u, a):
    return a * (1 - np.tanh(u(a)))


def fit(u, c, degree, fixed):
    """Q's coefficients, v^0 first; the highest len(fixed) are given (highest first)."""
    a = np.cos(np.linspace(0, np.pi, 6000)) * c / 2 + c / 2  # Chebyshev nodes on [0, c]
    v = a * (2 / c) - 1
    basis = np.vstack([a * v ** j for j in range(degree + 1)]).T
    target = bump(u, a) - sum(basis[:, degree - i] * q for i, q in enumerate(fixed))
    free = basis[:, :degree + 1 - len(fixed)]
    w = np.ones_like(a)
    for _ in range(80):
        q, *_ = np.linalg.lstsq(free * w[:, None], target * w, rcond=None)
        err = np.abs(free @ q - target)
        w = w * (err / err.max() + 1e-3) ** 0.5
        w /= w.max()
    return list(q) + list(reversed(fixed))


def fit_fp16(u, c, degree):
    fixed = []
    for i in range(degree + 1):
        fixed.append(float(F16(fit(u, c, degree, fixed)[degree - i])))
    return list(reversed(fixed))


def fma16(x, y, z):  # one rounding, as fma.rn.f16x2: the product of two fp16 is exact in fp64
    return (np.float64(x) * np.float64(y) + np.float64(z)).astype(F16)


def poly16(y, q, c):
    """The kernel's act_poly_f16x2 on fp16 values y: -Q's coefficients, as it holds them."""
    a = np.abs(y)
    t = (np.float64(y) + np.float64(a)).astype(F16)
    a = np.minimum(a, F16(c))
    v = fma16(a, F16(2 / c), F16(-1))
    p = fma16(np.full_like(y, F16(-q[-1])), v, F16(-q[-2]))
    for j in range(len(q) - 3, -1, -1):
        p = fma16(p, v, F16(-q[j]))
    return fma16(a, p, t)


def tanh16(y, u, gelu):
    """act_f16x2 (folded) with its tanh rounded exactly."""
    if gelu:
        p = fma16(y, y, F16(C0 * S))
        p = (np.float64(p) * np.float64(y)).astype(F16)
    else:
        p = y
    return fma16(y, np.tanh(np.float64(p)).astype(F16), y)


def bits(x):
    return "0x%04X" % F16(x).view(np.uint16)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the header's coefficients")
    args = ap.parse_args()
    np.seterr(over="ignore")  # GELU's argument overflows fp16 past |y| = 40, in the kernel too
    every = np.arange(1 << 16, dtype=np.uint16).view(F16)
    every = every[np.isfinite(every)]
    header = HEADER.read_text()
    ok = True
    for name, u, c, degree, array in CASES:
        q = fit_fp16(u, c, degree)
        y = every[np.abs(every) < 64]  # beyond, both are y + |y| exactly
        exact = np.float64(y) + np.float64(y) * np.tanh(u(np.float64(y)))  # u is odd
        ours = np.abs(np.float64(poly16(y, q, c)) - exact)
        theirs = np.abs(np.float64(tanh16(y, u, name == "GELU")) - exact)
        coeffs = [bits(-x) for x in q]
        print(f"{name}: c = {bits(c)} ({float(F16(c))}), 2 / c = {bits(2 / c)}, Q of degree {degree}")
        print(f"  -Q, v^0 first: {', '.join(coeffs)}")
        print(f"  largest error {ours.max():.2e} (mean {ours.mean():.2e}); "
              f"act_f16x2 with an exact tanh {theirs.max():.2e} ({theirs.mean():.2e})")
        m = re.search(array + r"\[\] = \{([^}]*)\}", header)
        held = re.findall(r"0x[0-9A-F]{4}", m.group(1)) if m else []
        if held != coeffs:
            ok = False
            print(f"  the header's {array} differs: {', '.join(held) or 'not found'}")
    if args.check and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
