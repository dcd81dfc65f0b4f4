"""More of torchvision's models than resnet18 and mobilenet_v2, exported,
compiled for a V100 (automatic placement, no budget), run on sim and
compared with PyTorch in eval mode:

    check_torchvision.py NAME...

Weights are torchvision's initialization under a fixed seed (batch norm
statistics and zero-initialized heads randomized, so that every layer does
real work). Prints each model's error relative to its output's largest
magnitude, against 1e-4; exits 1 when one fails."""
import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
sys.path.insert(0, os.path.dirname(__file__))
import tandem  # noqa: E402
from models import randomize_batch_norm, relative_error  # noqa: E402

TOLERANCE = 1e-4
# Vision transformers take their native 224 x 224; the CNNs a small image.
INPUTS = {"vit_b_16": (1, 3, 224, 224), "swin_t": (1, 3, 224, 224),
          "segmentation.lraspp_mobilenet_v3_large": (1, 3, 96, 96),
          "segmentation.deeplabv3_mobilenet_v3_large": (1, 3, 96, 96)}

failed = False
def build(name):
    """torchvision.models.NAME, or torchvision.models.segmentation.NAME for
    `segmentation.NAME` (untrained, without the auxiliary head)."""
    if name.startswith("segmentation."):
        factory = getattr(torchvision.models.segmentation, name.split(".", 1)[1])
        return factory(weights=None, weights_backbone=None, aux_loss=False)
    options = {"aux_logits": False, "init_weights": True} if name == "googlenet" else {}
    return getattr(torchvision.models, name)(**options)


for name in sys.argv[1:]:
    torch.manual_seed(0)
    model = randomize_batch_norm(build(name)).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            if not parameter.any():  # e.g. ViT's zero-initialized head
                parameter.normal_(0, 0.02)
    x = torch.randn(*INPUTS.get(name, (2, 3, 64, 64)))
    run = tandem.compile(model, (x,), device_profile="v100-32gb", backend="sim")
    with torch.no_grad():
        expected = model(x)
    if isinstance(expected, dict):  # segmentation models: {"out": tensor}
        expected = expected["out"]
    error = relative_error(run(x), expected)
    devices = run.devices()
    run.close()
    ok = error <= TOLERANCE
    failed |= not ok
    print(f"{name}: {devices.get('gpu', 0)} ops on the gpu, {devices.get('cpu', 0)} "
          f"on the cpu; max |tandem - torch| / max |torch| = {error:.1e} "
          f"{'ok' if ok else 'FAILED'}")
sys.exit(1 if failed else 0)
