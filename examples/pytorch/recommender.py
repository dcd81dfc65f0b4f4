"""USERS.md story 1 from PyTorch: a recommender whose embedding table
(1,000,000 x 64 float32, 244 MiB) does not fit the GPU budget (128 MiB)
next to the rest. Tandem puts the table and its lookup on the CPU by itself
and keeps the MLP tower on the GPU; with tandem.device_guard("cpu") the
same split is the user's pin, as PaddlePaddle's device_guard is.

    python3 examples/pytorch/recommender.py
"""
import sys

import torch
from torch import nn

from common import OUT, placement_by_module

import tandem


class Recommender(nn.Module):
    def __init__(self, rows=1_000_000, width=64, pin_lookup=False):
        super().__init__()
        self.pin_lookup = pin_lookup
        self.table = nn.Embedding(rows, width)
        self.tower = nn.Sequential(nn.Linear(width, 1024), nn.ReLU(),
                                   nn.Linear(1024, 1024), nn.ReLU(),
                                   nn.Linear(1024, 256), nn.ReLU())
        self.head = nn.Linear(256, 1)

    def forward(self, ids):
        if self.pin_lookup:
            with tandem.device_guard("cpu"):
                pooled = self.table(ids).sum(dim=1)
        else:
            pooled = self.table(ids).sum(dim=1)
        return torch.sigmoid(self.head(self.tower(pooled)))


torch.manual_seed(0)
ids = torch.randint(0, 1_000_000, (4096, 20))
for pin in (False, True):
    model = Recommender(pin_lookup=pin).eval()
    label = "pinned with device_guard" if pin else "placed by Tandem"
    print(f"== {label}: v100-32gb, GPU budget 128MiB")
    run = tandem.compile(model, (ids,), gpu_memory="128MiB",
                         device_profile="v100-32gb", backend="auto",
                         workdir=f"{OUT}/recommender-{'pin' if pin else 'auto'}")
    placement_by_module(run.report)
    with torch.no_grad():
        expected = model(ids)
    error = (run(ids) - expected).abs().max().item()
    print(f"  compiled and run: max |tandem - torch| = {error:.1e}\n")
    if error > 1e-5:
        sys.exit("the compiled model differs from PyTorch")
