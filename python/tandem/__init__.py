"""Tandem's PyTorch frontend.

    import tandem
    tandem.export(module, example_args, "out/model")   # model.mlir + .safetensors
    run = tandem.compile(module, example_args, gpu_memory="4GiB")
    y = run(x)                                          # computed by the binary
    with tandem.device_guard("cpu"): ...                # pins ops (tandem.pin)
    module, args = tandem.load_onnx("model.onnx")       # an ONNX model as a module
    tandem.import_onnx("model.onnx", "out/model")       # model.mlir + .safetensors

Install it with `pip install ./python` (from the repository; add
`--no-build-isolation` to build offline, `./python[torch]` to pull in
PyTorch too), or import it in place with PYTHONPATH=<repository>/python.
See docs/frontend.md.
"""
from .compiled import CompiledModel, compile, find_compiler
from .errors import CompileError, ExportError, RuntimeFailure, TandemError
from .exporter import device_guard, export
from .onnx_import import import_onnx, load_onnx

__all__ = ["export", "compile", "device_guard", "import_onnx", "load_onnx",
           "CompiledModel", "find_compiler",
           "TandemError", "ExportError", "CompileError", "RuntimeFailure"]
