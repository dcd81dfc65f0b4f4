"""Writes tensors in the safetensors format (what the compiled model reads).

The format: an 8-byte little-endian header length, a JSON header mapping each
name to its dtype, shape and byte range, padded with spaces to 8 bytes, then
the data. Written here rather than through the `safetensors` package so that
the frontend needs PyTorch only.
"""
import json
import struct

import torch

SAFETENSORS_DTYPES = {
    torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
    torch.int64: "I64", torch.int32: "I32", torch.bool: "BOOL",
}


def tensor_bytes(tensor: torch.Tensor) -> bytes:
    tensor = tensor.detach().to("cpu").contiguous()
    if tensor.dtype == torch.bfloat16:  # numpy has no bf16: go through int16
        tensor = tensor.view(torch.int16)
    return tensor.numpy().tobytes()


def write_safetensors(path: str, tensors: dict):
    """Writes {name: torch.Tensor} to `path`, names in sorted order."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        tensor = tensors[name]
        if tensor.dtype not in SAFETENSORS_DTYPES:
            raise ValueError(f"weight '{name}' has dtype {tensor.dtype}, which "
                             "Tandem does not support (float32, float16, "
                             "bfloat16, int64, int32, bool)")
        data = tensor_bytes(tensor)
        header[name] = {"dtype": SAFETENSORS_DTYPES[tensor.dtype],
                        "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
