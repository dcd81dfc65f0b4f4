"""python3 -m tandem export|compile MODEL -o PREFIX [options]

MODEL is `package.module:factory` or `path/to/file.py:factory`: a callable
that returns an nn.Module, or (module, example_args). Without example args
from the factory, give each input's shape with --shape (e.g. 1x3x224x224, or
4x64:int64); their values do not matter, only shapes and dtypes do.

MODEL may also be an ONNX file (`model.onnx`): its inputs' shapes and types
come from the model; --shape gives the shapes where it leaves a dimension
dynamic: once per input, in order, or by name for the inputs that need it
(--shape tokens=4x64).

    export   writes PREFIX.mlir and PREFIX.safetensors
    compile  also runs tandem-compile: PREFIX is the executable (--emit=exe,
             which reads PREFIX.safetensors by default) or the shared library
             (--emit=lib); --report writes the placement report
"""
import argparse
import importlib
import importlib.util
import math
import os
import re
import sys

import torch

from .compiled import run_compiler
from .errors import TandemError
from .exporter import export

DTYPES = {"float32": torch.float32, "float16": torch.float16,
          "bfloat16": torch.bfloat16, "int64": torch.int64,
          "int32": torch.int32, "bool": torch.bool}
MAX_TENSOR_BYTES = 1 << 48  # the runtime's bound on one tensor
ZEROED_BYTES = 1 << 28  # example inputs above this are left uninitialized


def describe_exception(error) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def import_file(spec, target):
    if os.path.isdir(target):
        raise TandemError(f"model '{spec}': {target} is a folder, not a Python file")
    if not os.path.exists(target):
        raise TandemError(f"model '{spec}': no file {target}")
    name = os.path.splitext(os.path.basename(target))[0]
    module_spec = importlib.util.spec_from_file_location(name, target)
    if module_spec is None or module_spec.loader is None:
        raise TandemError(f"model '{spec}': cannot load {target} as Python")
    module = importlib.util.module_from_spec(module_spec)
    folder = os.path.dirname(os.path.abspath(target))
    if folder not in sys.path:  # its own imports find its neighbours
        sys.path.insert(0, folder)
    try:
        module_spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:  # noqa: BLE001  the user's code
        raise import_failure(spec, target, error) from None
    return module


def import_failure(spec, target, error, by_name=False) -> TandemError:
    """The TandemError for the user's module `target` failing to import
    (`by_name`: imported as package.module, which may itself be missing)."""
    if by_name and isinstance(error, ImportError):
        return TandemError(f"model '{spec}': cannot import {target}: {error}")
    if isinstance(error, SyntaxError):
        where = error.filename if error.filename else target
        return TandemError(f"model '{spec}': {where} has a syntax error at line "
                           f"{error.lineno}: {error.msg}")
    return TandemError(f"model '{spec}': importing {target} raised "
                       f"{describe_exception(error)}")


def load_factory(spec: str):
    target, sep, name = spec.rpartition(":")
    if not sep or not target or not name:
        raise TandemError(f"model '{spec}': expected package.module:factory or "
                          "path/to/file.py:factory")
    if target.endswith(".py"):
        module = import_file(spec, target)
    else:
        try:
            module = importlib.import_module(target)
        except (Exception, SystemExit) as error:  # noqa: BLE001  the user's code
            raise import_failure(spec, target, error, by_name=True) from None
    factory = getattr(module, name, None)
    if not callable(factory):
        raise TandemError(f"model '{spec}': {target} has no callable '{name}'")
    return factory


def parse_shape(text: str):
    dims, _, dtype = text.partition(":")
    dtype = dtype or "float32"
    if dtype not in DTYPES:
        raise TandemError(f"--shape {text}: unknown dtype '{dtype}' (expected "
                          f"{', '.join(DTYPES)})")
    parts = dims.split("x") if dims else []
    if not all(re.fullmatch(r"-?[0-9]+", d.strip()) for d in parts):
        raise TandemError(f"--shape {text}: expected dimensions like 1x3x224x224")
    shape = [int(d) for d in parts]
    if any(d <= 0 for d in shape):
        raise TandemError(f"--shape {text}: dimensions must be positive")
    size = math.prod(shape) * DTYPES[dtype].itemsize
    if size > MAX_TENSOR_BYTES:
        raise TandemError(f"--shape {text}: {size} bytes, over Tandem's bound of "
                          f"2^48 bytes per tensor")
    # The values do not matter (only shapes and dtypes do): large inputs are
    # not written at all.
    make = torch.zeros if size <= ZEROED_BYTES else torch.empty
    try:
        return make(shape, dtype=DTYPES[dtype])
    except (RuntimeError, MemoryError) as error:
        first = (str(error).strip().splitlines() or [""])[0]
        raise TandemError(f"--shape {text}: cannot allocate the example input of "
                          f"{size} bytes: {first}") from None


def model_and_inputs(options):
    factory = load_factory(options.model)
    try:
        made = factory()
    except (Exception, SystemExit) as error:  # noqa: BLE001  the user's code
        raise TandemError(f"model '{options.model}': the factory raised "
                          f"{describe_exception(error)}") from None
    module, example_args = made, None
    if isinstance(made, tuple):
        if len(made) != 2:
            raise TandemError(f"model '{options.model}': the factory returned a "
                              f"tuple of {len(made)} items; expected a module or "
                              "(module, example_args)")
        module, example_args = made
    if not isinstance(module, torch.nn.Module):
        raise TandemError(f"model '{options.model}': the factory returned "
                          f"{type(module).__name__}; expected an nn.Module or "
                          "(module, example_args)")
    if options.shape:
        example_args = tuple(parse_shape(s) for s in options.shape)
    if example_args is None:
        raise TandemError(f"{options.model} returns no example inputs: give "
                          "each input's shape with --shape")
    return module, example_args


def onnx_model_and_inputs(options):
    """An ONNX model's module and example inputs; --shape gives shapes in
    input order (every input) or by name (NAME=2x3, only those needed)."""
    from .onnx_import import load_onnx
    specs = options.shape or []
    named = [spec for spec in specs if "=" in spec.split(":")[0]]
    if named and len(named) != len(specs):
        raise TandemError("--shape: give every shape by name (NAME=2x3) or none")
    # (spec, input name or position, example of its shape and dtype)
    given = []
    for k, spec in enumerate(specs):
        name, _, text = spec.rpartition("=") if named else ("", "", spec)
        given.append((spec, name if named else k, parse_shape(text)))
    shapes = None
    if given:
        shapes = ({key: tuple(e.shape) for _, key, e in given} if named else
                  [tuple(e.shape) for _, _, e in given])
    module, example_args = load_onnx(options.model, shapes)
    inputs = module.graph.inputs
    for spec, key, example in given:
        k = inputs.index(key) if named else key
        if ":" in spec and example.dtype != example_args[k].dtype:
            raise TandemError(f"--shape {spec}: input '{inputs[k]}' of "
                              f"{options.model} is {example_args[k].dtype}, not "
                              f"{example.dtype}")
    return module, example_args


def is_onnx_file(model: str) -> bool:
    return model.lower().endswith(".onnx") and ":" not in os.path.basename(model)


def check_output(output: str):
    if not output:
        raise TandemError("-o/--output is empty")
    if output.endswith(os.sep) or os.path.basename(output) in (".", ".."):
        raise TandemError(f"-o {output} names a folder: give a file path inside "
                          f"it, such as {os.path.join(output, 'model')}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m tandem",
                                     description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("export", "compile"):
        command = commands.add_parser(name)
        command.add_argument("model", help="package.module:factory, file.py:factory "
                             "or model.onnx")
        command.add_argument("-o", "--output", required=True,
                             help="output prefix (export) or file (compile)")
        command.add_argument("--shape", action="append",
                             help="an input's shape[:dtype], once per input")
    compile_command = commands.choices["compile"]
    compile_command.add_argument("--gpu-memory")
    compile_command.add_argument("--device-profile")
    compile_command.add_argument("--strategy", default="auto")
    compile_command.add_argument("--emit", default="exe", choices=("exe", "lib"))
    compile_command.add_argument("--report")
    options = parser.parse_args(argv)
    try:
        check_output(options.output)
        if is_onnx_file(options.model):
            module, example_args = onnx_model_and_inputs(options)
        else:
            module, example_args = model_and_inputs(options)
        mlir_path, weights_path = export(module, example_args, options.output)
        print(f"wrote {mlir_path} and {weights_path}")
        if options.command == "compile":
            run_compiler(mlir_path, options.output, options.emit,
                         options.gpu_memory, options.device_profile,
                         options.strategy, options.report)
            print(f"wrote {options.output}")
    except TandemError as error:
        print(f"tandem: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tandem: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
