"""Runs the compiled stories against NumPy and prints their profiles."""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tandem_e2e  # noqa: E402

recommender, windowed, work, report_path = sys.argv[1:5]
rng = np.random.default_rng(11)


def normal(*shape):
    return (rng.standard_normal(shape) * 0.1).astype(np.float32)


# Story 1.
weights = {"embedding.weight": normal(20000, 64),
           "bottom.weight": normal(64, 13), "bottom.bias": normal(64),
           "top.0.weight": normal(512, 128), "top.0.bias": normal(512),
           "top.1.weight": normal(512, 512), "top.1.bias": normal(512),
           "top.2.weight": normal(1, 512), "top.2.bias": normal(1)}
ids = rng.integers(0, 20000, (256, 8))
dense = normal(256, 13)
bag = weights["embedding.weight"][ids].sum(1)
d1 = np.maximum(dense @ weights["bottom.weight"].T + weights["bottom.bias"], 0)
x0 = np.concatenate([bag, d1], 1)
a1 = np.maximum(x0 @ weights["top.0.weight"].T + weights["top.0.bias"], 0)
a2 = np.maximum(a1 @ weights["top.1.weight"].T + weights["top.1.bias"], 0)
h3 = a2 @ weights["top.2.weight"].T + weights["top.2.bias"]
expected = (1 / (1 + np.exp(-h3))).astype(np.float32)
profile_path = os.path.join(work, "recommender-profile.json")
outputs, _ = tandem_e2e.run(recommender, [ids, dense], weights,
                            os.path.join(work, "recommender"),
                            ["--device-backend", "sim", "--profile-json",
                             profile_path])
tandem_e2e.check("recommender", outputs[0], expected, rtol=1e-4, atol=1e-4)
profile = json.load(open(profile_path))
devices = {op["name"]: op["device"] for op in profile["ops"]}
# The tower's GEMMs run as tandem.linear, or fused with their activations
# (fused(linear+relu)).
gemms = {device for name, device in devices.items() if "linear" in name}
print(f"recommender placement: tandem.embedding {devices['tandem.embedding']}, "
      f"the tower's GEMMs {' and '.join(sorted(gemms))}")
copies = profile["copies"]
predicted = json.load(open(report_path))["transfers"]
same = (copies["h2d_count"], copies["d2h_count"], copies["h2d_bytes"],
        copies["d2h_bytes"]) == (predicted["h2d_count"], predicted["d2h_count"],
                                 predicted["h2d_bytes"], predicted["d2h_bytes"])
print(f"recommender copies as the placement report predicted: "
      f"{'yes' if same else 'NO'} (h2d {copies['h2d_count']} "
      f"d2h {copies['d2h_count']})")
fits = profile["gpu_arena_bytes"] <= profile["gpu_budget_bytes"]
print(f"recommender GPU arena within budget: {'yes' if fits else 'no'}")

# Story 2.
x = normal(2048, 2048)
w = normal(2048, 2048)
expected = (x @ w)[1792:2048, 1792:2048]
profile_path = os.path.join(work, "windowed-profile.json")
outputs, _ = tandem_e2e.run(windowed, [x], {"proj.weight": w},
                            os.path.join(work, "windowed"),
                            ["--device-backend", "sim", "--profile-json",
                             profile_path])
tandem_e2e.check("windowed matmul", outputs[0], expected, rtol=1e-4, atol=1e-4)
copies = json.load(open(profile_path))["copies"]
print(f"windowed matmul copies: h2d {copies['h2d_count']} "
      f"({copies['h2d_bytes']} bytes) d2h {copies['d2h_count']} "
      f"({copies['d2h_bytes']} bytes)")
# The schedule puts the copies on the copy engines' queues: asynchronous.
print(f"windowed matmul copies: sync {copies['sync_count']} "
      f"async {copies['async_count']}")
