#!/usr/bin/env python3
"""compare_ddp.py — weak-scaling efficiency of PyTorch DistributedDataParallel
(gloo) on tagtrain's model, to put beside tagtrain's own (scripts/bench_trainer.sh).

    python3 trainer/compare_ddp.py --np 2 [--local-batch 16] [--threads 1]

Runs the same training twice in one invocation: one process (plain PyTorch,
no DDP: there is nothing to all-reduce) and --np processes under DDP with the
gloo backend over loopback TCP, each with the same local batch, one thread
and ceil(rows / p) samples an epoch, as tagtrain's weak scaling does. Prints
samples/s of both and

    efficiency(p) = samples/s(p) / (p * samples/s(1))

The model is tagtrain's default (65536 hashed features -> 128 -> 4, label
smoothing 0.1), with the
CSR input of compare_pytorch.py (nn.EmbeddingBag(mode="sum") with
per-sample weights and a DENSE gradient, so DDP all-reduces the whole
gradient buffer — 33.6 MB — every step, as tagtrain's default does), dropout
and AdamW. Inputs are random rows of tagtrain's density (241 non-zeros a row
with its default features; compare.sh passes the figure it measures): only
the arithmetic and the communication are timed.

PyTorch is NOT a dependency of collkit: without it this script says so and
exits 0. (Debian: apt-get install python3-torch; the interpreter is then
/usr/bin/python3.)
"""
import argparse
import os
import sys
import time

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
except ImportError:
    print("compare_ddp: PyTorch is not installed (apt-get install python3-torch); skipping")
    sys.exit(0)

ap = argparse.ArgumentParser()
ap.add_argument("--np", type=int, default=2, help="ranks of the DDP run")
ap.add_argument("--features", type=int, default=65536)
ap.add_argument("--hidden", type=int, default=128)
ap.add_argument("--dropout", type=float, default=0.5)
ap.add_argument("--label-smoothing", type=float, default=0.1)
ap.add_argument("--lr", type=float, default=1e-2)
ap.add_argument("--weight-decay", type=float, default=0.2)
ap.add_argument("--local-batch", type=int, default=16, help="rows per rank per step (tagtrain's LOCAL_BATCH)")
ap.add_argument("--epochs", type=int, default=3)
ap.add_argument("--rows", type=int, default=764)
ap.add_argument("--nnz", type=int, default=241, help="non-zeros per row")
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--port", type=int, default=29533, help="TCP port of the first DDP run (the second uses port + 1)")
a = ap.parse_args()


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.EmbeddingBag(a.features, a.hidden, mode="sum")
        self.bias0 = torch.nn.Parameter(torch.zeros(a.hidden))
        self.rest = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Dropout(a.dropout), torch.nn.Linear(a.hidden, 4))

    def forward(self, idx, off, val):
        return self.rest(self.first(idx, off, per_sample_weights=val) + self.bias0)


def data():
    g = torch.Generator().manual_seed(0)
    cols = [torch.randperm(a.features, generator=g)[:a.nnz] for _ in range(a.rows)]
    vals = [torch.nn.functional.normalize(torch.rand(a.nnz, generator=g), dim=0) for _ in range(a.rows)]
    y = torch.randint(0, 4, (a.rows,), generator=g)
    return cols, vals, y


def run(rank, p, port, out):
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    if p > 1:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ["MASTER_PORT"] = str(port)
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
        dist.init_process_group("gloo", rank=rank, world_size=p)
    cols, vals, y = data()
    model = Net()
    if p > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    lossf = torch.nn.CrossEntropyLoss(label_smoothing=a.label_smoothing)
    per_rank = (a.rows + p - 1) // p   # DistributedSampler with padding: ceil(rows / p) each

    def epoch(e):
        perm = torch.randperm(a.rows, generator=torch.Generator().manual_seed(e)).tolist()
        perm = (perm * 2)[:per_rank * p][rank::p]
        for s in range(0, per_rank, a.local_batch):
            ii = perm[s:s + a.local_batch]
            idx = torch.cat([cols[r] for r in ii])
            off = torch.arange(0, len(ii) * a.nnz, a.nnz)
            val = torch.cat([vals[r] for r in ii])
            opt.zero_grad()
            loss = lossf(model(idx, off, val), y[ii])
            loss.backward()   # DDP all-reduces the gradient buckets here
            opt.step()

    model.train()
    epoch(0)   # warm-up
    if p > 1:
        dist.barrier()
    t0 = time.perf_counter()
    for e in range(1, a.epochs + 1):
        epoch(e)
    if p > 1:
        dist.barrier()
    dt = time.perf_counter() - t0
    if rank == 0:
        out.put(per_rank * p * a.epochs / dt)
    if p > 1:
        dist.destroy_process_group()


def measure(p, port=0):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=run, args=(r, p, port, q)) for r in range(p)]
    for pr in procs:
        pr.start()
    sps = q.get()
    for pr in procs:
        pr.join()
    return sps


if __name__ == "__main__":
    # ABBA: p = 1, p, p, 1, each figure the mean of its two runs, so that a
    # drift of the machine's speed weighs on both alike. Each DDP run gets a
    # port of its own, --port and --port + 1 (the first may still be in
    # TIME_WAIT).
    s1a = measure(1)
    spa = measure(a.np, a.port)
    spb = measure(a.np, a.port + 1)
    s1b = measure(1)
    s1, sp = (s1a + s1b) / 2, (spa + spb) / 2
    nparams = a.features * a.hidden + a.hidden + a.hidden * 4 + 4
    print(f"pytorch {torch.__version__} DDP gloo, {a.threads} thread(s) a rank, model {a.features}-{a.hidden}-4 "
          f"({nparams} params, {nparams * 4 / 1e6:.1f} MB of gradient), local batch {a.local_batch}, "
          f"{a.nnz} non-zeros/row")
    print(f"p=1: {s1:.0f} samples/s   p={a.np}: {sp:.0f} samples/s   efficiency {sp / (a.np * s1):.3f}")
