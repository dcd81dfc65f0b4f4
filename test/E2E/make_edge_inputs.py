"""Writes the files executable-hardening.test feeds its models: integer
operands (one set dividing by zero), embedding ids (one negative, one
-2^63), a FIFO, and a safetensors file whose tensors overlap."""
import json
import os
import struct
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(name, array):
    np.save(os.path.join(out, name), array)


save("a.npy", np.array([-2**31, 7, -7, 5], np.int32))
save("b.npy", np.array([-1, 2, 2, 1], np.int32))
save("b-zero.npy", np.array([-1, 2, 0, 1], np.int32))
save("a2.npy", np.array([1, 2, 3, 4], np.int32))
save("table.npy", np.arange(30, dtype=np.float32).reshape(10, 3))
save("ids.npy", np.array([0, 9, 3, 1], np.int64))
save("ids-negative.npy", np.array([0, -1, 3, 1], np.int64))
save("ids-lowest.npy", np.array([0, -2**63, 3, 1], np.int64))
save("offsets.npy", np.array([0, 2], np.int64))
save("offsets-late.npy", np.array([1, 2], np.int64))  # bags must start at 0
save("offsets-falling.npy", np.array([0, 5], np.int64))  # past the 4 ids
fifo = os.path.join(out, "fifo.npy")
if not os.path.exists(fifo):
    os.mkfifo(fifo)

# Two tensors sharing bytes 8..16 of the data section.
header = json.dumps({
    "a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
    "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]},
}).encode()
with open(os.path.join(out, "overlap.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(header)) + header + bytes(24))
