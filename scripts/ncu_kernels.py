#!/usr/bin/env python3
"""Per-kernel DRAM bytes and duration of a program's kernels, read by Nsight Compute.

  python3 scripts/ncu_kernels.py [--kernels REGEX] [--last N] -- PROGRAM ARGS...

Prints one line per kernel launch: DRAM MB read and written, the duration under the profiler and
the kernel's name. Nsight Compute flushes the caches before each kernel and fixes the clock, so
bytes are a kernel's own (nothing left in the L2 by the one before) and durations compare kernels
of one run only.
"""
import argparse
import csv
import io
import subprocess
import sys

METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum")


def profile(cmd, kernels=None, timeout=300):
    """Runs cmd under Nsight Compute; returns one dict per profiled launch, in launch order:
    id, name, read, write (bytes), ns. `kernels`: a regular expression on kernel names."""
    args = ["ncu", "--metrics", ",".join(METRICS), "--csv", "--print-units", "base"]
    if kernels:
        args += ["--kernel-name", f"regex:{kernels}"]
    out = subprocess.run(args + list(cmd), capture_output=True, text=True,
                         timeout=timeout).stdout
    lines = [l for l in out.splitlines() if l.startswith('"')]
    launches = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        metric = row.get("Metric Name")
        if metric not in METRICS:
            continue
        k = launches.setdefault(int(row["ID"]), {"id": int(row["ID"]),
                                                 "name": row.get("Kernel Name", "")})
        value = float(row["Metric Value"].replace(",", ""))
        k[{"dram__bytes_read.sum": "read", "dram__bytes_write.sum": "write",
           "gpu__time_duration.sum": "ns"}[metric]] = value
    return [launches[i] for i in sorted(launches)]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", help="only kernels whose name matches this regular expression")
    ap.add_argument("--last", type=int, default=0, help="only the last N launches")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- PROGRAM ARGS...")
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("no program given")
    launches = profile(cmd, args.kernels)
    if args.last:
        launches = launches[-args.last:]
    if not launches:
        print("no kernel was profiled", file=sys.stderr)
        return 1
    print(f"{'read MB':>9} {'write MB':>9} {'us':>9}  kernel")
    for k in launches:
        print(f"{k.get('read', 0) / 1e6:>9.1f} {k.get('write', 0) / 1e6:>9.1f} "
              f"{k.get('ns', 0) / 1e3:>9.1f}  {k['name'][:110]}")
    total = sum(k.get("read", 0) + k.get("write", 0) for k in launches)
    print(f"{total / 1e6:>19.1f} MB in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
