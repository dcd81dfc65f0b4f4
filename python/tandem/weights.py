"""Writes tensors in the safetensors format (what the compiled model reads).

The format: an 8-byte little-endian header length, a JSON header mapping each
name to its dtype, shape and byte range, padded with spaces to 8 bytes, then
the data. Written here rather than through the `safetensors` package so that
the frontend needs PyTorch only; it takes torch tensors or NumPy arrays and
imports neither, so the NumPy-only end-to-end tests use it too.
"""
import json
import struct

SAFETENSORS_DTYPES = {"float32": "F32", "float16": "F16", "bfloat16": "BF16",
                      "int64": "I64", "int32": "I32", "bool": "BOOL"}


def dtype_name(tensor) -> str:
    """"float32" for torch.float32 and numpy's float32 alike."""
    return str(tensor.dtype).replace("torch.", "")


def is_supported(tensor) -> bool:
    return dtype_name(tensor) in SAFETENSORS_DTYPES


def tensor_bytes(tensor) -> bytes:
    if hasattr(tensor, "detach"):  # a torch tensor
        tensor = tensor.detach().to("cpu").contiguous()
        if dtype_name(tensor) == "bfloat16":  # numpy has no bf16
            tensor = tensor.view(dtype=__import__("torch").int16)
        return tensor.numpy().tobytes()
    import numpy
    return numpy.ascontiguousarray(tensor).tobytes()


def write_safetensors(path: str, tensors: dict):
    """Writes {name: tensor} to `path`, names in sorted order."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        tensor = tensors[name]
        if not is_supported(tensor):
            raise ValueError(f"weight '{name}' has dtype {tensor.dtype}, which "
                             "Tandem does not support (float32, float16, "
                             "bfloat16, int64, int32, bool)")
        data = tensor_bytes(tensor)
        header[name] = {"dtype": SAFETENSORS_DTYPES[dtype_name(tensor)],
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
