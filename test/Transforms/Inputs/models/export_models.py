"""Writes the model-shaped graphs of the placement property tests.

Each is a PyTorch model exported with tandem.export; only the .mlir is kept
(the property tests price and place, they never run). Run from the
repository root to regenerate the checked-in files:

    PYTHONPATH=python python3 test/Transforms/Inputs/models/export_models.py
"""
import os
import sys
import tempfile

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "Frontend"))
import models  # noqa: E402  (the frontend tests' models)
import tandem  # noqa: E402


class PreNormDecoderLayer(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(width, dim=2)
        shape = (batch, length, self.heads, width // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        attention = nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=True)
        x = x + self.proj(attention.transpose(1, 2).reshape(x.shape))
        return x + self.down(nn.functional.gelu(self.up(self.norm2(x))))


class PreNormDecoder(nn.Module):
    """The pre-norm decoder of docs/placement.md: 4 layers, width 1024,
    8 heads (192 MiB of weights)."""

    def __init__(self, layers=4, width=1024, heads=8):
        super().__init__()
        self.layers = nn.ModuleList(PreNormDecoderLayer(width, heads)
                                    for _ in range(layers))
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


def decoder():
    torch.manual_seed(0)
    return PreNormDecoder().eval(), (torch.randn(2, 512, 1024),)


def gpt_block_batch8():
    torch.manual_seed(0)
    block = models.GPT2Block(128, 4, 64).eval()
    return block, (torch.randn(8, 64, 128),)


def mlp_tower():
    torch.manual_seed(0)
    layers = []
    for _ in range(4):
        layers += [nn.Linear(1024, 1024), nn.ReLU()]
    return nn.Sequential(*layers).eval(), (torch.randn(256, 1024),)


def small_cnn():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
    return model.eval(), (torch.randn(16, 3, 64, 64),)


MODELS = {
    "decoder": decoder,
    "gpt-block-b8": gpt_block_batch8,
    "gpt2": lambda: models.gpt2(),
    "mlp-tower": mlp_tower,
    "small-cnn": small_cnn,
    "resnet18": lambda: models.resnet18(),
    "mobilenet-v2": lambda: models.mobilenet_v2(),
    "transformer-encoder": lambda: models.transformer_encoder(),
    "dlrm": lambda: models.dlrm(),
}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    names = sys.argv[1:] or list(MODELS)
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            model, args = MODELS[name]()
            if isinstance(model, nn.Module):
                model = model.eval()
            prefix = os.path.join(scratch, name)
            tandem.export(model, args, prefix)
            with open(prefix + ".mlir") as source, \
                    open(os.path.join(here, name + ".mlir"), "w") as target:
                target.write(source.read())
            print(f"wrote {name}.mlir")


if __name__ == "__main__":
    main()
