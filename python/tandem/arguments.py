"""Checks of the arguments users pass to the frontend's functions: each
failure is the calling function's TandemError, naming the argument."""
import os

import torch


def path_argument(name, value, error_class, empty_ok=False, example=None) -> str:
    """`value` (str, bytes or os.PathLike) as a str path, or `error_class`
    naming the argument (and, in the message, an `example` of a good one)."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, bytes):
        value = os.fsdecode(value)
    if not isinstance(value, str):
        such_as = f" such as '{example}'" if example else ""
        raise error_class(f"{name} must be a path (str or os.PathLike){such_as}, "
                          f"got {type(value).__name__}")
    if not value and not empty_ok:
        raise error_class(f"{name} is empty")
    if "\0" in value:
        raise error_class(f"{name} {value!r} contains a NUL character")
    return value


def non_dense_layout(tensor):
    """How `tensor` is not a dense strided tensor ("nested", "torch.sparse_coo",
    ...), or None if it is one."""
    if tensor.is_nested:
        return "nested"
    if tensor.layout != torch.strided:
        return str(tensor.layout)
    return None
