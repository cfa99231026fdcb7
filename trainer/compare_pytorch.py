#!/usr/bin/env python3
"""compare_pytorch.py — samples/s of the same MLP in PyTorch, for comparison
with tagtrain at p = 1 (tagtrain's summary line or its --log summary).

    python3 trainer/compare_pytorch.py --threads 1 [--input sparse|dense]
    build/bin/tagtrain --threads 1 --no-save --quiet --epochs 10

Same shapes (65536 hashed features -> 128 -> 4 by default, tagtrain's default
model), dropout, label smoothing, AdamW (decoupled weight decay), global batch and samples per
epoch (764 rows: tagtrain trains on all of dataset.csv). The inputs are random sparse TF-IDF-like
rows with tagtrain's measured density (241 non-zeros per row with its default
features: tagtrain prints it), because only the arithmetic is timed.

--input sparse (default) is tagtrain's representation: each row is a list of
(bucket, value) pairs and the input layer gathers those rows of W_0
(nn.EmbeddingBag(mode="sum", per_sample_weights=...), PyTorch's CSR-input
linear layer), with a DENSE gradient of W_0 and a dense AdamW step over all
parameters — exactly what tagtrain does. --input dense multiplies the whole
[batch x features] matrix (nn.Linear), which is what a naive port would do.

PyTorch is NOT a dependency of collkit: without it this script says so and
exits 0.
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
ap.add_argument("--features", type=int, default=65536)
ap.add_argument("--hidden", default="128")
ap.add_argument("--dropout", type=float, default=0.5)
ap.add_argument("--label-smoothing", type=float, default=0.1)
ap.add_argument("--lr", type=float, default=1e-2)
ap.add_argument("--weight-decay", type=float, default=0.2)
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--epochs", type=int, default=5)
ap.add_argument("--rows", type=int, default=764)
ap.add_argument("--nnz", type=int, default=241, help="non-zeros per row")
ap.add_argument("--threads", type=int, default=0)
ap.add_argument("--input", choices=["sparse", "dense"], default="sparse")
ap.add_argument("--foreach", action="store_true", help="AdamW's multi-tensor (foreach) implementation")
a = ap.parse_args()
if a.threads:
    torch.set_num_threads(a.threads)
torch.manual_seed(0)

hidden = [int(w) for w in a.hidden.split(",")]
widths = [a.features] + hidden


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        if a.input == "sparse":
            self.first = torch.nn.EmbeddingBag(a.features, hidden[0], mode="sum")
            self.bias0 = torch.nn.Parameter(torch.zeros(hidden[0]))
        else:
            self.first = torch.nn.Linear(a.features, hidden[0])
        rest = []
        for i in range(1, len(widths) - 1):
            rest += [torch.nn.ReLU(), torch.nn.Dropout(a.dropout), torch.nn.Linear(widths[i], widths[i + 1])]
        rest += [torch.nn.ReLU(), torch.nn.Dropout(a.dropout), torch.nn.Linear(widths[-1], 4)]
        self.rest = torch.nn.Sequential(*rest)

    def forward(self, x):
        if a.input == "sparse":
            idx, off, val = x
            z = self.first(idx, off, per_sample_weights=val) + self.bias0
        else:
            z = self.first(x)
        return self.rest(z)


model = Net()
opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=a.weight_decay, foreach=a.foreach or None)
lossf = torch.nn.CrossEntropyLoss(label_smoothing=a.label_smoothing)

# Random rows: nnz distinct buckets each, positive values, unit L2 norm (TF-IDF).
cols = [torch.randperm(a.features)[:a.nnz] for _ in range(a.rows)]
vals = [torch.nn.functional.normalize(torch.rand(a.nnz), dim=0) for _ in range(a.rows)]
y = torch.randint(0, 4, (a.rows,))
if a.input == "dense":
    X = torch.zeros(a.rows, a.features)
    for r in range(a.rows):
        X[r, cols[r]] = vals[r]


def batch(idx):
    if a.input == "dense":
        return X[idx]
    # CSR of the batch: concatenated buckets and values, row offsets.
    ii = idx.tolist()
    return (torch.cat([cols[r] for r in ii]), torch.arange(0, len(ii) * a.nnz, a.nnz),
            torch.cat([vals[r] for r in ii]))


def epoch():
    perm = torch.randperm(a.rows)
    for s in range(0, a.rows, a.batch):
        idx = perm[s:s + a.batch]
        opt.zero_grad()
        loss = lossf(model(batch(idx)), y[idx])
        loss.backward()
        opt.step()


model.train()
epoch()  # warm-up
t0 = time.perf_counter()
for _ in range(a.epochs):
    epoch()
dt = time.perf_counter() - t0
nparams = sum(p.numel() for p in model.parameters())
print(f"pytorch {torch.__version__}, {torch.get_num_threads()} threads, {a.input} input: model "
      f"{'-'.join(map(str, widths))}-4 ({nparams} params), batch {a.batch}, {a.nnz} non-zeros/row: "
      f"{a.rows * a.epochs / dt:.0f} samples/s")
