"""User story 1 from PyTorch: a recommender whose embedding table
(1,000,000 x 64 float32, 244 MiB) does not fit the GPU budget (128 MiB)
next to the rest. Tandem puts the table and its lookup on the CPU by itself
and keeps the MLP tower on the GPU; with tandem.device_guard("cpu") the
same split is the user's pin, as PaddlePaddle's device_guard is.

    python3 examples/pytorch/recommender.py
"""
import sys
from contextlib import nullcontext

import torch
from torch import nn

from common import OUT, placement_by_module

import tandem


class Recommender(nn.Module):
    """A table lookup, sum-pooled, then an MLP tower and a click head;
    `pin_lookup`/`pin_head` wrap those parts in tandem.device_guard (the test
    of device_guard uses this model too)."""

    def __init__(self, rows=1_000_000, width=64, pin_lookup=False, pin_head=False,
                 tower=(1024, 1024, 256)):
        super().__init__()
        self.pin_lookup, self.pin_head = pin_lookup, pin_head
        self.table = nn.Embedding(rows, width)
        layers, previous = [], width
        for size in tower:
            layers += [nn.Linear(previous, size), nn.ReLU()]
            previous = size
        self.tower = nn.Sequential(*layers)
        self.head = nn.Linear(previous, 1)

    def forward(self, ids):
        with tandem.device_guard("cpu") if self.pin_lookup else nullcontext():
            pooled = self.table(ids).sum(dim=1)
        hidden = self.tower(pooled)
        with tandem.device_guard("gpu") if self.pin_head else nullcontext():
            return torch.sigmoid(self.head(hidden))


def main():
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


if __name__ == "__main__":
    main()
