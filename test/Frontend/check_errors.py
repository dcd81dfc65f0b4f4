"""Bad input to the frontend: each case must raise a TandemError that says
what and where, and leave no file behind. Prints one line per case."""
import os
import sys
import tempfile

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import tandem  # noqa: E402


class DataDependent(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # control flow on a tensor's value
            return x * 2
        return x - 1


class NonTensorOutput(nn.Module):
    def forward(self, x):
        return x + 1, x.shape[0]


class MaskedSelect(nn.Module):
    def forward(self, x):
        return x[x > 0]  # its shape depends on the data


class Unsupported(nn.Module):
    def forward(self, x):
        return torch.cumprod(x, dim=1)


class Untraceable(nn.Module):
    def forward(self, x):
        return torch.from_numpy(x.numpy() * 2)


class Decomposed(nn.Module):
    def forward(self, x):
        return torch.sinc(x)


class DilatedPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(2, dilation=2)

    def forward(self, x):
        return self.pool(x)


class Float64Weights(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(4, dtype=torch.float64))

    def forward(self, x):
        return x * self.scale


x = torch.randn(2, 4)
cases = [
    ("data-dependent control flow", DataDependent(), (x,)),
    ("non-tensor output", NonTensorOutput(), (x,)),
    ("data-dependent shape", MaskedSelect(), (x,)),
    ("unsupported op", Unsupported(), (x,)),
    ("untraceable module", Untraceable(), (x,)),
    ("dilated max pooling", DilatedPool(), (torch.randn(1, 3, 8, 8),)),
    ("op of a decomposition", Decomposed(), (x,)),
    ("float64 parameter", Float64Weights(), (x,)),
    ("float64 input", nn.ReLU(), (x.double(),)),
    ("non-tensor example", nn.ReLU(), (3,)),
    ("not a module", lambda t: t, (x,)),
]
failed = False
with tempfile.TemporaryDirectory() as folder:
    for what, module, args in cases:
        prefix = os.path.join(folder, what.replace(" ", "-"))
        try:
            tandem.export(module, args, prefix)
        except tandem.ExportError as error:
            message = " ".join(str(error).split())
            print(f"{what}: ExportError: {message}")
        except Exception as error:  # anything else is a bug
            print(f"{what}: FAILED: {type(error).__name__}: {error}")
            failed = True
        else:
            print(f"{what}: FAILED: exported")
            failed = True
    left = sorted(os.listdir(folder))
    print(f"files left behind: {left}")

# The compiled model checks what it is called with.
run = tandem.compile(nn.Linear(4, 3), (x,), backend="sim")
for what, call in [("wrong shape", lambda: run(torch.randn(3, 4))),
                   ("wrong dtype", lambda: run(x.double())),
                   ("wrong count", lambda: run(x, x))]:
    try:
        call()
        print(f"{what}: FAILED: ran")
        failed = True
    except tandem.RuntimeFailure as error:
        print(f"{what}: RuntimeFailure: {error}")
folder = os.path.dirname(run.library_path)
run.close()
print(f"temporary folder removed on close: {not os.path.exists(folder)}")


class Scatter(nn.Module):
    def forward(self, x, index):
        return x.scatter(1, index, 1.0)


# An index outside the axis stops the run (PyTorch raises too) rather than
# writing nothing; a good one runs.
for backend in ("auto", "sim"):
    strategy = "all-cpu" if backend == "auto" else "all-gpu"
    run = tandem.compile(Scatter(), (x, torch.zeros(2, 2, dtype=torch.int64)),
                         strategy=strategy, backend=backend)
    good = torch.tensor([[0, 3], [1, 2]])
    print(f"scatter in range ({strategy}): "
          f"{torch.equal(run(x, good), x.scatter(1, good, 1.0))}")
    try:
        run(x, torch.tensor([[0, 4], [1, 2]]))
        print(f"scatter out of range ({strategy}): FAILED: ran")
        failed = True
    except tandem.RuntimeFailure as error:
        print(f"scatter out of range ({strategy}): RuntimeFailure: {error}")
    run.close()
try:
    tandem.compile(nn.Linear(4, 3), (x,), backend="tpu")
except tandem.RuntimeFailure as error:
    print(f"bad backend: RuntimeFailure: {error}")
try:
    tandem.compile(nn.Linear(4, 3), (x,), gpu_memory="lots")
except tandem.CompileError as error:
    print("bad budget: CompileError: " + " ".join(str(error).split()))
sys.exit(1 if failed else 0)
