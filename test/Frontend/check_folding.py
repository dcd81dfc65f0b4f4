"""Batch norm after a convolution, or after a linear layer on rows, is folded
into it at export (folding.py): the exported model has no batch_norm where
the pair folds (and no transpose of a folded linear's weight), keeps it
where it must not fold (the producer's result read elsewhere, a transposed
convolution, a norm over a linear's output seen through a transpose), and
every compiled model matches PyTorch in eval mode. Then
constant subgraphs: a transposed weight, a scaled parameter and a slice of
a table are computed at export (no transpose, no op on them remains), and
a weight's transpose read by a GEMM stays a tandem.linear. Last, what
lowerings do to a weight (a 3-D kernel's depth slices, a transposed
convolution's flipped kernel) is done at export too: no op of the exported
program computes from weights alone.

Usage: check_folding.py WORKDIR
"""
import os
import re
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import tandem  # noqa: E402


class ReadTwice(nn.Module):
    """The convolution's result is also added to the output: not folded."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        y = self.conv(x)
        return self.bn(y) + y


class LinearReadTwice(nn.Module):
    """The linear's result is also added to the output: not folded."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(6, 6)
        self.bn = nn.BatchNorm1d(6)

    def forward(self, x):
        y = self.linear(x)
        return self.bn(y) + y


class LinearOverSequence(nn.Module):
    """A linear on [N, L, C] and a batch norm over its features as channels
    ([N, C, L]): the norm reads a transpose, not the product; not folded."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(5, 7)
        self.bn = nn.BatchNorm1d(7)

    def forward(self, x):
        return self.bn(self.linear(x).transpose(1, 2))


class Constants(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(6, 8))
        self.scale = nn.Parameter(torch.randn(6))
        self.pos = nn.Parameter(torch.randn(1, 10, 6))
        self.m = nn.Parameter(torch.randn(6, 4))

    def forward(self, x):
        y = x @ self.w.t()  # a tandem.linear, reading w as it is
        y = y * (self.scale * 2 + 1)
        return y + self.pos[:, :x.shape[1]] + self.m.t()


def ops_on_weights_alone(text):
    """The ops of an exported program (reshapes, which are views, aside)
    whose operands all come from weights, fills or other such ops."""
    constant, count = set(), 0
    for line in text.splitlines():
        match = re.match(r'\s*%(\w+) = "([\w.]+)"\(([^)]*)\)', line)
        if not match:
            continue
        name, op, operands = match.groups()
        operands = re.findall(r"%(\w+)", operands)
        if all(o in constant for o in operands):
            constant.add(name)
            count += bool(operands) and op != "tandem.reshape"
    return count


class SharedConv3d(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(4, 4, 3, padding=2, dilation=(2, 1, 1), groups=2)

    def forward(self, x):
        return self.conv(torch.relu(self.conv(x)))


class SharedTransposedKernel(nn.Module):
    """One kernel read by two transposed convolutions of different groups:
    two different swapped kernels."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 3, 3, 3))

    def forward(self, x):
        a = nn.functional.conv_transpose2d(x, self.w, stride=2, groups=1)
        b = nn.functional.conv_transpose2d(x, self.w, stride=2, groups=2)
        return torch.cat([a, b], 1)


LOWERING_FOLDS = [
    ("conv3d (depth slices of its kernel)",
     nn.Sequential(nn.Conv3d(2, 4, 3, padding=1), nn.ReLU(),
                   nn.Conv3d(4, 3, (2, 3, 3), stride=(1, 2, 2))),
     (1, 2, 5, 8, 8)),
    ("transposed conv with padding (its kernel swapped and flipped)",
     nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1),
     (1, 4, 5, 5)),
    ("grouped, dilated conv3d applied twice (one kernel's slices, once)",
     SharedConv3d(), (1, 4, 6, 7, 7)),
    ("transposed conv1d (its kernel folded through a reshape)",
     nn.Sequential(nn.ConvTranspose1d(4, 4, 3, stride=2, groups=2), nn.ReLU(),
                   nn.ConvTranspose1d(4, 4, 3, stride=2, groups=2)),
     (1, 4, 9)),
    ("one kernel, transposed convs of groups 1 and 2 (two swapped kernels)",
     SharedTransposedKernel(), (1, 4, 5, 5)),
]


def randomize(model):
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.modules.batchnorm._BatchNorm):
                module.running_mean.uniform_(-1, 1)
                module.running_var.uniform_(0.5, 2)
                if module.affine:
                    module.weight.uniform_(0.5, 1.5)
                    module.bias.uniform_(-1, 1)
    return model.eval()


CASES = [
    ("conv+bn+relu, conv without bias + bn without affine",
     nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                   nn.Conv2d(8, 4, 3, bias=False),
                   nn.BatchNorm2d(4, affine=False)),
     (2, 3, 10, 10), 0),
    ("depthwise conv + bn",
     nn.Sequential(nn.Conv2d(6, 6, 3, groups=6), nn.BatchNorm2d(6)),
     (1, 6, 9, 9), 0),
    ("conv read twice", ReadTwice(), (1, 4, 6, 6), 1),
    ("transposed conv + bn",
     nn.Sequential(nn.ConvTranspose2d(4, 4, 2, stride=2), nn.BatchNorm2d(4)),
     (1, 4, 5, 5), 1),
    ("linear+bn+relu, linear without bias + bn without affine",
     nn.Sequential(nn.Linear(12, 16), nn.BatchNorm1d(16), nn.ReLU(),
                   nn.Linear(16, 5, bias=False), nn.BatchNorm1d(5, affine=False)),
     (6, 12), 0),
    ("linear read twice", LinearReadTwice(), (4, 6), 1),
    ("linear over a sequence, bn over its features", LinearOverSequence(),
     (3, 4, 5), 1),
]


def main():
    workdir = sys.argv[1]
    os.makedirs(workdir, exist_ok=True)
    torch.manual_seed(0)
    failures = 0
    for k, (name, model, shape, kept) in enumerate(CASES):
        model = randomize(model)
        x = torch.randn(*shape)
        mlir, _ = tandem.export(model, (x,), os.path.join(workdir, f"m{k}"))
        with open(mlir) as f:
            text = f.read()
        norms = text.count("tandem.batch_norm")
        # A folded linear reads its folded weight as it is.
        transposes = text.count('"tandem.transpose"') if kept == 0 else 0
        got = tandem.compile(model, (x,))(x)
        want = model(x).detach()
        error = float((got - want).abs().max())
        ok = norms == kept and transposes == 0 and error <= 1e-4
        failures += not ok
        print(f"{name}: {norms} batch_norm left (expected {kept}), "
              f"{transposes} transposes, max error {error:.2e}: "
              f"{'ok' if ok else 'FAILED'}")
    model = Constants().eval()
    x = torch.randn(2, 4, 8)
    mlir, _ = tandem.export(model, (x,), os.path.join(workdir, "constants"))
    with open(mlir) as f:
        text = f.read()
    left = sum(text.count(f'"tandem.{op}"') for op in ("transpose", "slice"))
    folded = text.count('name = "folded.')
    linear = text.count('"tandem.linear"')
    error = float((tandem.compile(model, (x,))(x) - model(x).detach()).abs().max())
    ok = left == 0 and folded == 3 and linear == 1 and error <= 1e-5
    failures += not ok
    print(f"constant subgraphs: {folded} folded weights, {left} transposes or "
          f"slices left, max error {error:.2e}: {'ok' if ok else 'FAILED'}")
    for k, (name, model, shape) in enumerate(LOWERING_FOLDS):
        model = model.eval()
        x = torch.randn(*shape)
        mlir, _ = tandem.export(model, (x,), os.path.join(workdir, f"l{k}"))
        with open(mlir) as f:
            text = f.read()
        left = ops_on_weights_alone(text)
        # Each weight folded once: no name written twice (a second fold of
        # the same kernel would be `<name>_`).
        names = re.findall(r'name = "([^"]+)"', text)
        repeated = sum(n.endswith("_") and n[:-1] in names for n in names)
        error = float((tandem.compile(model, (x,))(x) - model(x).detach()).abs().max())
        ok = left == 0 and repeated == 0 and error <= 1e-4
        failures += not ok
        print(f"{name}: {left} ops on weights alone, {repeated} weights folded "
              f"twice, max error {error:.2e}: {'ok' if ok else 'FAILED'}")
    print(f"{len(CASES) + 1 + len(LOWERING_FOLDS)} cases, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
