#!/usr/bin/env python3
"""compare_pytorch.py — samples/s of the same MLP in PyTorch, for comparison
with tagtrain at p = 1 (tagtrain's summary line or its --log summary).

    python3 trainer/compare_pytorch.py [--features 16384] [--hidden 64] [--batch 32] [--epochs 5]
    build/bin/tagtrain --threads N --no-save --quiet --features 16384 --hidden 64 --batch 32 --epochs 5

Same shapes, dropout, Adam, batch and sample count per epoch (611 rows, the
train split); the inputs are random sparse TF-IDF-like rows of the same density,
because only the arithmetic is being timed. PyTorch is NOT a dependency of
collkit: without it this script says so and exits 0.
"""
import argparse
import sys
import time

try:
    import torch
except ImportError:
    print("compare_pytorch: PyTorch is not installed (apt-get install python3-torch); skipping")
    sys.exit(0)

ap = argparse.ArgumentParser()
ap.add_argument("--features", type=int, default=16384)
ap.add_argument("--hidden", default="64")
ap.add_argument("--dropout", type=float, default=0.5)
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--epochs", type=int, default=5)
ap.add_argument("--rows", type=int, default=611)
ap.add_argument("--nnz", type=int, default=40, help="non-zeros per row")
ap.add_argument("--threads", type=int, default=0)
a = ap.parse_args()
if a.threads:
    torch.set_num_threads(a.threads)
torch.manual_seed(0)

widths = [a.features] + [int(w) for w in a.hidden.split(",")]
layers = []
for i in range(len(widths) - 1):
    layers += [torch.nn.Linear(widths[i], widths[i + 1]), torch.nn.ReLU(), torch.nn.Dropout(a.dropout)]
layers.append(torch.nn.Linear(widths[-1], 4))
model = torch.nn.Sequential(*layers)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
lossf = torch.nn.CrossEntropyLoss()

X = torch.zeros(a.rows, a.features)
for r in range(a.rows):
    X[r, torch.randint(0, a.features, (a.nnz,))] = torch.rand(a.nnz)
X = torch.nn.functional.normalize(X, dim=1)
y = torch.randint(0, 4, (a.rows,))

def epoch():
    perm = torch.randperm(a.rows)
    for s in range(0, a.rows, a.batch):
        idx = perm[s:s + a.batch]
        opt.zero_grad()
        loss = lossf(model(X[idx]), y[idx])
        loss.backward()
        opt.step()

model.train()
epoch()  # warm-up
t0 = time.perf_counter()
for _ in range(a.epochs):
    epoch()
dt = time.perf_counter() - t0
print(f"pytorch {torch.__version__}, {torch.get_num_threads()} threads: model {'-'.join(map(str, widths))}-4, "
      f"batch {a.batch}: {a.rows * a.epochs / dt:.0f} samples/s")
