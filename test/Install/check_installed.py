"""The Python frontend of an installed Tandem: imported from ROOT (the
install's site-packages or a virtual environment), it must find the
installed tandem-compile on its own and compile a model that matches
PyTorch.

Usage: check_installed.py ROOT   (ROOT: where `tandem` must be imported from)
"""
import os
import sys

import torch

import tandem
from tandem.compiled import find_compiler

root = os.path.realpath(sys.argv[1])
package = os.path.realpath(os.path.dirname(tandem.__file__))
if not package.startswith(root + os.sep):
    sys.exit(f"tandem was imported from {package}, not from under {root}")
print("imported from the install: yes")
print("tandem-compile:", find_compiler())

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                            torch.nn.Linear(16, 4)).eval()
x = torch.randn(3, 8)
with tandem.compile(model, (x,), device_profile="v100-32gb",
                    gpu_memory="1MiB", backend="sim") as run:
    got = run(x)
    expected = model(x)
    error = float((got - expected).abs().max())
    print("devices:", run.devices())
    print("max |tandem - torch| =", error)
    if error > 1e-5:
        sys.exit("the installed Tandem disagrees with PyTorch")
print("ok")
