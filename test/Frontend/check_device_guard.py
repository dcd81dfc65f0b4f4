"""tandem.device_guard: the ops traced inside carry tandem.pin in the
exported IR, and placement honours the pin, even against its own choice."""
import os
import sys

import torch

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples", "pytorch"))
import tandem  # noqa: E402
from recommender import Recommender  # noqa: E402  user story 1's model


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
    """The (device, pinned) of each op `name`, alone or in a fused group
    (fused(linear+sigmoid) holds tandem.sigmoid)."""
    short = name.removeprefix("tandem.")
    return [(op["device"], op["pinned"]) for op in ops
            if op["name"] == name or (op["name"].startswith("fused(") and
                                      short in op["name"][6:-1].split("+"))]


torch.manual_seed(0)
ids = torch.randint(0, 50000, (1024, 16))
work = sys.argv[1]
for pin_lookup, pin_head in ((False, False), (True, True)):
    model = Recommender(rows=50000, width=64, tower=(1024, 1024),
                        pin_lookup=pin_lookup, pin_head=pin_head)
    label = "pinned" if pin_lookup else "free"
    folder = os.path.join(work, label)
    ops, error = placement(model, ids, folder)
    print(f"{label}: embedding {device_of(ops, 'tandem.embedding')}, "
          f"reduce_sum {device_of(ops, 'tandem.reduce_sum')}, "
          f"head sigmoid {device_of(ops, 'tandem.sigmoid')}, "
          f"max error {error:.1e}")
    if error > 1e-5:
        sys.exit(f"{label}: differs from PyTorch")
