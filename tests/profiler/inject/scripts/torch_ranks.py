#!/usr/bin/env python3
"""A rank of a two-process launch for the injection capture's GPU tests, started by
`python3 -m torch.distributed.run --standalone --nproc_per_node=2 torch_ranks.py`: every rank uses
GPU 0 (gloo carries the collectives, so one GPU serves both), runs ITERATIONS iterations, each an
NVTX range "iteration N" holding one matrix product and an all-reduce, and writes its pid and
kernel count to OUT.RANK."""

import json
import os
import sys

import torch
import torch.distributed as dist


def main():
    out = sys.argv[1]
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.cuda.set_device(0)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234 + rank)
    x = torch.randn((1024, 1024), generator=gen, device="cuda")
    torch.cuda.synchronize()
    for i in range(iterations):
        torch.cuda.nvtx.range_push("iteration %d" % i)
        y = x @ x
        t = torch.tensor([float(y[0, 0].item())])
        dist.all_reduce(t)
        torch.cuda.nvtx.range_pop()
    dist.barrier()
    dist.destroy_process_group()
    with open("%s.%d" % (out, rank), "w") as f:
        json.dump({"rank": rank, "pid": os.getpid()}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
