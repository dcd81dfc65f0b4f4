"""User story 3: the 13->16->32->1 regression MLP on 506 rows. Tandem
keeps all of it on the CPU, with a GPU right there and no budget: the cost
model says why (each op's CPU and GPU time, and what moving x in and the
result out would add), and the compiled binary shows the time it takes.

    python3 examples/pytorch/mlp.py
"""
import json
import sys

import torch
from torch import nn

from common import OUT, placement_by_module, run_binary

import tandem

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(13, 16), nn.ReLU(), nn.Linear(16, 32), nn.ReLU(),
                      nn.Linear(32, 1)).eval()
x = torch.randn(506, 13)
prefix = f"{OUT}/mlp"
mlir_path, _ = tandem.export(model, (x,), prefix)
predicted = {}
for strategy in ("auto", "all-gpu"):
    tandem.compiled.run_compiler(mlir_path, f"{prefix}-{strategy}", "exe", None,
                                 "h200", strategy, f"{prefix}-{strategy}.json")
    with open(f"{prefix}-{strategy}.json") as f:
        predicted[strategy] = json.load(f)["predicted_us"]
print("== placement on h200, no budget (strategy auto)")
placement_by_module(f"{prefix}-auto.json")
gpu = predicted["all-gpu"]
print(f"== why: all on the GPU would take {gpu['total']:.1f} us: "
      f"{gpu['gpu_compute']:.1f} us of kernels (5 launches at 5 us each "
      f"dominate), {gpu['transfer']:.1f} us to copy x in and the result out; "
      f"the CPU does it in {predicted['auto']['total']:.1f} us")
print(f"== {prefix}-auto --repeat 1000 --profile")
(y,) = run_binary(f"{prefix}-auto", [x.numpy()], ["--repeat", "1000", "--profile",
                                                  "--weights", f"{prefix}.safetensors"])
with torch.no_grad():
    error = abs(y - model(x).numpy()).max()
print(f"max |tandem - torch| = {error:.1e}")
sys.exit(0 if error < 1e-5 else 1)
