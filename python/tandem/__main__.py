"""python3 -m tandem export|compile MODEL -o PREFIX [options]

MODEL is `package.module:factory` or `path/to/file.py:factory`: a callable
that returns an nn.Module, or (module, example_args). Without example args
from the factory, give each input's shape with --shape (e.g. 1x3x224x224, or
4x64:int64); their values do not matter, only shapes and dtypes do.

    export   writes PREFIX.mlir and PREFIX.safetensors
    compile  also runs tandem-compile: PREFIX is the executable (--emit=exe,
             which reads PREFIX.safetensors by default) or the shared library
             (--emit=lib); --report writes the placement report
"""
import argparse
import importlib
import importlib.util
import os
import sys

import torch

from .compiled import run_compiler
from .errors import TandemError
from .exporter import export

DTYPES = {"float32": torch.float32, "float16": torch.float16,
          "bfloat16": torch.bfloat16, "int64": torch.int64,
          "int32": torch.int32, "bool": torch.bool}


def load_factory(spec: str):
    target, sep, name = spec.rpartition(":")
    if not sep or not target or not name:
        raise TandemError(f"model '{spec}': expected package.module:factory or "
                          "path/to/file.py:factory")
    if target.endswith(".py"):
        if not os.path.exists(target):
            raise TandemError(f"model '{spec}': no file {target}")
        module_spec = importlib.util.spec_from_file_location(
            os.path.splitext(os.path.basename(target))[0], target)
        module = importlib.util.module_from_spec(module_spec)
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
        module_spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as error:
            raise TandemError(f"model '{spec}': cannot import {target}: {error}") \
                from None
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
    try:
        shape = [int(d) for d in dims.split("x")] if dims else []
    except ValueError:
        raise TandemError(f"--shape {text}: expected dimensions like 1x3x224x224") \
            from None
    if any(d <= 0 for d in shape):
        raise TandemError(f"--shape {text}: dimensions must be positive")
    return torch.zeros(shape, dtype=DTYPES[dtype])


def model_and_inputs(options):
    made = load_factory(options.model)()
    module, example_args = made, None
    if isinstance(made, tuple) and len(made) == 2:
        module, example_args = made
    if options.shape:
        example_args = tuple(parse_shape(s) for s in options.shape)
    if example_args is None:
        raise TandemError(f"{options.model} returns no example inputs: give "
                          "each input's shape with --shape")
    return module, example_args


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m tandem",
                                     description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("export", "compile"):
        command = commands.add_parser(name)
        command.add_argument("model", help="package.module:factory or file.py:factory")
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
