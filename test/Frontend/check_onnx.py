"""ONNX round trips: each model is exported to ONNX by PyTorch's exporters,
imported by Tandem (tandem.load_onnx), compiled for a V100 and run on the sim
backend, and compared with ONNX Runtime on the same inputs:

    check_onnx.py [--exporter legacy|dynamo] [--workdir W] NAME[@BUDGET]...

NAME is a model of models.py or a torchvision classifier; @BUDGET sets a GPU
budget (e.g. gpt2@4MiB, to force a CPU/GPU split; asserted). `legacy` is
torch.onnx.export's TorchScript exporter at opset 17 (shape arithmetic in the
graph, Gemm, Erf-spelled GELU), `dynamo` its torch.export-based one at opset
18 (reductions with axes as inputs, LayerNormalization). Prints each model's
error against ONNX Runtime, max |tandem - ort| / max |ort|, against 1e-4;
exits 1 when one fails."""
import argparse
import os
import sys
import warnings

import numpy as np
import onnxruntime
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
sys.path.insert(0, os.path.dirname(__file__))
import models  # noqa: E402
import tandem  # noqa: E402

TOLERANCE = 1e-4
OPSETS = {"legacy": 17, "dynamo": 18}


def build(name):
    if name in models.MODELS:
        return models.MODELS[name]()
    import torchvision
    torch.manual_seed(0)
    options = {"aux_logits": False, "init_weights": True} if name == "googlenet" else {}
    model = models.randomize_batch_norm(getattr(torchvision.models, name)(**options))
    with torch.no_grad():
        for parameter in model.parameters():
            if not parameter.any():  # e.g. ViT's zero-initialized head
                parameter.normal_(0, 0.02)
    shape = (1, 3, 224, 224) if name.startswith(("vit", "swin")) else (2, 3, 64, 64)
    return model, (torch.randn(*shape),)


def to_onnx(model, args, path, exporter):
    model.eval()
    with warnings.catch_warnings(), open(os.devnull, "w") as quiet:
        warnings.simplefilter("ignore")
        stdout = os.dup(1)
        os.dup2(quiet.fileno(), 1)  # the dynamo exporter prints its progress
        try:
            torch.onnx.export(model, args, path, dynamo=exporter == "dynamo",
                              opset_version=OPSETS[exporter])
        finally:
            os.dup2(stdout, 1)
            os.close(stdout)


def ort_outputs(path, args):
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {i.name: a.numpy() for i, a in zip(session.get_inputs(), args)}
    return [torch.from_numpy(np.asarray(o)) for o in session.run(None, feeds)]


def check(spec, exporter, workdir):
    name, _, budget = spec.partition("@")
    model, args = build(name)
    path = os.path.join(workdir, f"{name}.{exporter}.onnx")
    to_onnx(model, args, path, exporter)
    try:
        module, example_args = tandem.load_onnx(path)
        run = tandem.compile(module, example_args, gpu_memory=budget or None,
                             device_profile="v100-32gb", backend="sim",
                             workdir=workdir)
    except tandem.TandemError as error:
        print(f"{name} ({exporter}): FAILED: {error}", flush=True)
        return False
    outputs = run(*args)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    expected = ort_outputs(path, args)
    report, devices = run.report, run.devices()
    run.close()
    failures = []
    if budget and (not devices.get("gpu") or not devices.get("cpu")):
        failures.append("expected ops on both devices")
    if report["peak_gpu_bytes"] > report["gpu_memory_budget_bytes"]:
        failures.append("the placement exceeds the budget")
    errors = []
    for k, (got, want) in enumerate(zip(outputs, expected)):
        if tuple(got.shape) != tuple(want.shape):
            failures.append(f"result {k} is {tuple(got.shape)}, ONNX Runtime "
                            f"gives {tuple(want.shape)}")
            continue
        if not want.abs().max() > 0:  # an error relative to zeros says nothing
            failures.append(f"ONNX Runtime's result {k} is all zeros")
        errors.append(models.relative_error(got, want))
    if len(outputs) != len(expected):
        failures.append(f"{len(outputs)} results, ONNX Runtime gives {len(expected)}")
    error = max(errors, default=float("nan"))
    if not error <= TOLERANCE:
        failures.append("differs from ONNX Runtime")
    where = f"budget {budget}, " if budget else ""
    print(f"{name} ({exporter}): {where}{devices.get('gpu', 0)} ops on the gpu, "
          f"{devices.get('cpu', 0)} on the cpu; max |tandem - ort| / max |ort| = "
          f"{error:.1e} {'ok' if not failures else 'FAILED: ' + '; '.join(failures)}",
          flush=True)
    return not failures


parser = argparse.ArgumentParser()
parser.add_argument("models", nargs="+")
parser.add_argument("--exporter", choices=sorted(OPSETS), default="legacy")
parser.add_argument("--workdir", required=True)
options = parser.parse_args()
os.makedirs(options.workdir, exist_ok=True)
results = [check(spec, options.exporter, options.workdir) for spec in options.models]
sys.exit(0 if all(results) else 1)
