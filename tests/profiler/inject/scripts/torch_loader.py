#!/usr/bin/env python3
"""A training loop with fork-started DataLoader workers, for the injection capture's GPU tests.

    torch_loader.py OUT --workers-touch-cuda   the workers are forked before the main process
                                               initialises CUDA, and each runs a kernel per item
    torch_loader.py OUT                        the main process initialises CUDA first; the
                                               workers, forked from it, never touch CUDA

The main process runs one NVTX range "iteration N" per batch with one kernel on the batch and a
GPU sleep, and writes the workers' pids and its own to OUT as JSON."""

import json
import os
import sys

import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, Dataset

ITEMS = 16
BATCH = 2


class Items(Dataset):
    def __init__(self, touch_cuda):
        self.touch_cuda = touch_cuda

    def __len__(self):
        return ITEMS

    def __getitem__(self, i):
        if self.touch_cuda:
            # One kernel and a copy back in the worker: the value returned is on the CPU.
            value = float(torch.full((4096,), float(i), device="cuda").sum().item())
        else:
            value = float(i) * 4096
        return torch.tensor([value, float(os.getpid())])


def main():
    out = sys.argv[1]
    touch_cuda = "--workers-touch-cuda" in sys.argv
    if not touch_cuda:
        torch.cuda.init()
        torch.zeros(1, device="cuda")
    loader = DataLoader(Items(touch_cuda), batch_size=BATCH, num_workers=2,
                        multiprocessing_context=mp.get_context("fork"))
    worker_pids = set()
    total = 0.0
    for n, batch in enumerate(loader):
        torch.cuda.nvtx.range_push("iteration %d" % n)
        worker_pids.update(int(p) for p in batch[:, 1].tolist())
        total += float((batch[:, 0].cuda() * 2).sum().item())
        torch.cuda._sleep(200_000_000)  # about 0.1 s: workers outlive their last item a while
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    expected = 2 * 4096 * sum(range(ITEMS))
    with open(out, "w") as f:
        json.dump({"pid": os.getpid(), "workers": sorted(worker_pids), "batches": ITEMS // BATCH,
                   "ok": abs(total - expected) < 1e-3 * expected}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
