"""torchvision's resnet18 compiled for a V100 under a GPU budget that splits
it between the CPU and the GPU: the placement by layer, the placed graph
(Graphviz), and the binary run with its profile, checked against PyTorch.

    python3 examples/pytorch/resnet18.py [BUDGET]   (default 40MiB)
"""
import shutil
import subprocess
import sys

import torch
import torchvision

from common import OUT, placement_by_module, run_binary, tool

import tandem

budget = sys.argv[1] if len(sys.argv) > 1 else "40MiB"
torch.manual_seed(0)
model = torchvision.models.resnet18().eval()  # random weights: no download
x = torch.randn(4, 3, 224, 224)

prefix = f"{OUT}/resnet18"
mlir_path, weights = tandem.export(model, (x,), prefix)
print(f"== exported {mlir_path} and {weights}")
tandem.compiled.run_compiler(mlir_path, prefix, "exe", budget, "v100-32gb",
                             "auto", f"{prefix}.placement.json")
print(f"== placement on v100-32gb under {budget}, by module")
placement_by_module(f"{prefix}.placement.json", limit=14)

subprocess.run([tool("tandem-opt"), mlir_path,
                f"--tandem-placement-pipeline=device-profile=v100-32gb "
                f"gpu-memory={budget}",
                f"--tandem-view-placement={prefix}.dot", "-o", "/dev/null"],
               check=True)
if shutil.which("dot"):
    subprocess.run(["dot", "-Tsvg", f"{prefix}.dot", "-o", f"{prefix}.svg"],
                   check=True)
    print(f"placed graph: {prefix}.svg")

print(f"== {prefix} --profile (GPU ops on the sim backend without a GPU)")
(y,) = run_binary(prefix, [x.numpy()], ["--profile"])
with torch.no_grad():
    expected = model(x).numpy()
error = abs(y - expected).max() / abs(expected).max()
print(f"max |tandem - torch| / max |torch| = {error:.1e}")
sys.exit(0 if error < 1e-4 else 1)
