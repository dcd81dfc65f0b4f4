"""tandem.device_guard: the ops traced inside carry tandem.pin in the
exported IR, and placement honours the pin, even against its own choice."""
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import tandem  # noqa: E402


class Recommender(nn.Module):
    """USERS.md story 1 in small: a table lookup, then an MLP tower."""

    def __init__(self, pin_lookup, pin_head):
        super().__init__()
        self.pin_lookup, self.pin_head = pin_lookup, pin_head
        self.table = nn.Embedding(50000, 64)
        self.tower = nn.Sequential(nn.Linear(64, 1024), nn.ReLU(),
                                   nn.Linear(1024, 1024), nn.ReLU())
        self.head = nn.Linear(1024, 1)

    def forward(self, ids):
        if self.pin_lookup:
            with tandem.device_guard("cpu"):
                pooled = self.table(ids).sum(dim=1)
        else:
            pooled = self.table(ids).sum(dim=1)
        hidden = self.tower(pooled)
        if self.pin_head:
            with tandem.device_guard("gpu"):
                return torch.sigmoid(self.head(hidden))
        return torch.sigmoid(self.head(hidden))


def placement(model, ids, workdir):
    run = tandem.compile(model, (ids,), device_profile="v100-32gb",
                         backend="sim", workdir=workdir)
    with torch.no_grad():
        expected = model.eval()(ids)
    error = (run(ids) - expected).abs().max().item()
    ops = run.report["ops"]
    run.close()
    return ops, error


def device_of(ops, name):
    return [(op["device"], op["pinned"]) for op in ops if op["name"] == name]


torch.manual_seed(0)
ids = torch.randint(0, 50000, (1024, 16))
work = sys.argv[1]
for pin_lookup, pin_head in ((False, False), (True, True)):
    model = Recommender(pin_lookup, pin_head)
    label = "pinned" if pin_lookup else "free"
    folder = os.path.join(work, label)
    ops, error = placement(model, ids, folder)
    print(f"{label}: embedding {device_of(ops, 'tandem.embedding')}, "
          f"reduce_sum {device_of(ops, 'tandem.reduce_sum')}, "
          f"head sigmoid {device_of(ops, 'tandem.sigmoid')}, "
          f"max error {error:.1e}")
    if error > 1e-5:
        sys.exit(f"{label}: differs from PyTorch")
