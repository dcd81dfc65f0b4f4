"""The model zoo survey (a program, not a test): every model a new user might
bring, exported from PyTorch, compiled for a V100 (automatic placement, no
budget), run on the sim backend and compared with PyTorch in eval mode; or
the clear refusal it gets. Prints one line per model and a summary:

    python3 bench/zoo/survey.py [--only NAME...] [--workdir W]

Weights are each model's own initialization under a fixed seed (batch norm
statistics randomized, zero-initialized parameters drawn small); inputs are
small images, clips or sequences so that the whole survey runs in minutes.
A model matches when max |tandem - torch| / max |torch| <= 1e-4."""
import argparse
import logging
import os
import sys
import tempfile
import time
import warnings

import torch
from torch import nn

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "test", "Frontend"))
import models  # noqa: E402  (the frontend tests' models)
import tandem  # noqa: E402

TOLERANCE = 1e-4


def vision(name, shape=(1, 3, 64, 64), **options):
    def build():
        import torchvision
        factory = torchvision.models
        for part in name.split(".")[:-1]:
            factory = getattr(factory, part)
        return getattr(factory, name.split(".")[-1])(**options), (torch.randn(*shape),)
    return build


class LSTMTagger(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.embed = nn.Embedding(1000, 64)
        self.rnn = cell(64, 128, num_layers=2, batch_first=True)
        self.head = nn.Linear(128, 10)

    def forward(self, ids):
        out, _ = self.rnn(self.embed(ids))
        return self.head(out)


def recurrent(cell):
    return lambda: (LSTMTagger(cell), (torch.randint(0, 1000, (4, 16)),))


class Raft(nn.Module):
    """RAFT (small) with two flow updates; the last flow field."""

    def __init__(self):
        super().__init__()
        import torchvision
        self.raft = torchvision.models.optical_flow.raft_small()

    def forward(self, first, second):
        return self.raft(first, second, num_flow_updates=2)[-1]


class Seq2Seq(nn.Module):
    """nn.Transformer encoder-decoder (T5/Whisper-shaped), causal decoder."""

    def __init__(self):
        super().__init__()
        self.model = nn.Transformer(128, 4, 2, 2, 256, batch_first=True)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(16),
                             persistent=False)

    def forward(self, source, target):
        return self.model(source, target, tgt_mask=self.mask, tgt_is_causal=True)


ZOO = {
    # torchvision classifiers
    "alexnet": vision("alexnet", (1, 3, 96, 96)),
    "vgg11_bn (32x32: adaptive 1x1 -> 7x7)": vision("vgg11_bn", (1, 3, 32, 32)),
    "resnet50": vision("resnet50"),
    "resnext50_32x4d": vision("resnext50_32x4d"),
    "wide_resnet50_2": vision("wide_resnet50_2"),
    "densenet121": vision("densenet121"),
    "inception_v3": vision("inception_v3", (1, 3, 96, 96), aux_logits=False,
                           init_weights=True),
    "googlenet": vision("googlenet", aux_logits=False, init_weights=True),
    "mobilenet_v3_large": vision("mobilenet_v3_large"),
    "mnasnet1_0": vision("mnasnet1_0"),
    "shufflenet_v2_x1_0": vision("shufflenet_v2_x1_0"),
    "squeezenet1_0": vision("squeezenet1_0"),
    "efficientnet_b0": vision("efficientnet_b0"),
    "efficientnet_v2_s": vision("efficientnet_v2_s"),
    "regnet_x_1_6gf": vision("regnet_x_1_6gf"),
    "convnext_tiny": vision("convnext_tiny"),
    "vit_b_16": vision("vit_b_16", (1, 3, 224, 224)),
    "swin_t": vision("swin_t", (1, 3, 224, 224)),
    "maxvit_t": vision("maxvit_t", (1, 3, 224, 224)),
    # segmentation, video, optical flow, detection
    "segmentation.fcn_resnet50": vision("segmentation.fcn_resnet50", (1, 3, 64, 64),
                                        weights_backbone=None, aux_loss=False),
    "segmentation.deeplabv3_mobilenet_v3_large": vision(
        "segmentation.deeplabv3_mobilenet_v3_large", (1, 3, 96, 96),
        weights_backbone=None, aux_loss=False),
    "video.r3d_18": vision("video.r3d_18", (1, 3, 8, 32, 32)),
    "video.mc3_18": vision("video.mc3_18", (1, 3, 8, 32, 32)),
    "video.r2plus1d_18": vision("video.r2plus1d_18", (1, 3, 8, 32, 32)),
    "optical_flow.raft_small (2 flow updates)": lambda: (
        Raft(), (torch.randn(1, 3, 128, 128), torch.randn(1, 3, 128, 128))),
    "detection.fasterrcnn_mobilenet_v3_large_320_fpn": vision(
        "detection.fasterrcnn_mobilenet_v3_large_320_fpn", (1, 3, 128, 128),
        weights_backbone=None),
    # sequence models
    "LSTM tagger (2 layers)": recurrent(nn.LSTM),
    "GRU tagger (2 layers)": recurrent(nn.GRU),
    "nn.Transformer encoder-decoder": lambda: (Seq2Seq(), (torch.randn(2, 24, 128),
                                                          torch.randn(2, 16, 128))),
}
for name in ("gpt2", "clip_text", "transformer_encoder", "dlrm", "bag_recommender",
             "moe", "unet", "style_net", "mobilenet_v2", "resnet18"):
    ZOO[f"{name} (frontend tests)"] = models.MODELS[name]


def prepare(model):
    model = models.randomize_batch_norm(model).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.numel() and not parameter.any():
                parameter.normal_(0, 0.02)
    return model


def outputs_of(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in outputs_of(v)]
    return []


def survey(name, build, workdir):
    torch.manual_seed(0)
    try:
        model, args = build()
        model = prepare(model)
    except Exception as error:  # noqa: BLE001  this survey's own setup
        return "unbuilt", f"{type(error).__name__}: {error}"[:200]
    start = time.perf_counter()
    try:
        run = tandem.compile(model, args, device_profile="v100-32gb", backend="sim",
                             workdir=workdir)
    except tandem.TandemError as error:
        return "refused", " ".join(str(error).split())[:400]
    try:
        got = outputs_of(run(*args))
        with torch.no_grad():
            want = outputs_of(model(*args))
        devices = run.devices()
    finally:
        run.close()
    error = max(models.relative_error(g, w) for g, w in zip(got, want))
    seconds = time.perf_counter() - start
    detail = (f"{devices.get('gpu', 0)} ops on the gpu, {devices.get('cpu', 0)} on "
              f"the cpu; error {error:.1e}; {seconds:.0f} s")
    return ("matches" if error <= TOLERANCE and len(got) == len(want) else "DIFFERS"), detail


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--workdir")
    options = parser.parse_args()
    warnings.simplefilter("ignore")
    logging.getLogger("torch").setLevel(logging.CRITICAL)  # export's own dumps
    names = [n for n in ZOO if not options.only or any(o in n for o in options.only)]
    counts = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            status, detail = survey(name, ZOO[name], options.workdir or scratch)
            counts[status] = counts.get(status, 0) + 1
            print(f"{name:<48} {status:<8} {detail}", flush=True)
    print(", ".join(f"{count} {status}" for status, count in counts.items()) +
          f" of {len(names)} models")


if __name__ == "__main__":
    main()
