"""The GPU's SM clock and power draw while something runs, sampled in the background.

Under the H100's 700 W cap the SM clock follows the power draw, so two timings of the same
kernel can differ by 20% with the GPU's recent load; a figure that says what the GPU ran at can be
checked. `GpuSampler` runs `nvidia-smi --query-gpu=clocks.sm,power.draw -lms PERIOD` on one GPU
and keeps its samples with the time they arrived; `window(t0, t1)` gives the mean clock and draw
of the samples inside a span of `time.monotonic()`.
"""
import statistics
import subprocess
import threading
import time


def _smi(*args):
    return subprocess.run(["nvidia-smi", *args], check=True, capture_output=True, text=True,
                           timeout=20).stdout


def smi_index(cuda_uuid):
    """nvidia-smi's index of the GPU whose UUID ends in cuda_uuid (PyTorch's, without the
    "GPU-" prefix); the only GPU when there is one and cuda_uuid is empty; else None."""
    try:
        rows = [line.split(",") for line in
                _smi("--query-gpu=index,uuid", "--format=csv,noheader").splitlines() if line]
    except (OSError, subprocess.SubprocessError):
        return None
    rows = [(i.strip(), u.strip().lower()) for i, u in rows]
    want = cuda_uuid.strip().lower()
    for index, uuid in rows:
        if want and uuid.endswith(want):
            return index
    return rows[0][0] if len(rows) == 1 and not want else None


def parse_sample(line):
    """(MHz, W) from a `clocks.sm,power.draw` line of --format=csv,noheader,nounits, or None."""
    parts = [p.strip() for p in line.split(",")]
    try:
        return float(parts[0]), float(parts[1])
    except (ValueError, IndexError):
        return None  # "[N/A]", a partial line


class GpuSampler:
    def __init__(self, index, period_ms=50):
        self.samples = []  # (time.monotonic(), MHz, W)
        self.proc = None
        if index is None:
            return
        try:
            self.proc = subprocess.Popen(
                ["nvidia-smi", "-i", str(index), "--query-gpu=clocks.sm,power.draw",
                 "--format=csv,noheader,nounits", "-lms", str(period_ms)],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        except OSError:
            return
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            s = parse_sample(line)
            if s:
                self.samples.append((time.monotonic(), *s))

    def window(self, t0, t1):
        """Mean (MHz, W) of the samples taken between t0 and t1, or None without any."""
        inside = [(mhz, w) for t, mhz, w in list(self.samples) if t0 <= t <= t1]
        if not inside:
            return None
        return statistics.fmean(m for m, _ in inside), statistics.fmean(w for _, w in inside)

    def close(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait()
