"""Bad ONNX input, each a clear error (tandem.ExportError from the API, one
line and exit 1 from `python3 -m tandem`), and the dynamic-shape path that
works once the shape is given:

    check_onnx_errors.py WORKDIR

Prints `CASE: message` for each refusal (FileCheck reads them), and exits 1
when something that must fail does not, or fails without a TandemError."""
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import tandem  # noqa: E402

workdir = sys.argv[1]
os.makedirs(workdir, exist_ok=True)
failed = False


def model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "bad", inputs, outputs, list(initializers))
    made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    made.ir_version = 8
    return made


def save(name, proto):
    path = os.path.join(workdir, name)
    onnx.save(proto, path)
    return path


def tensor(name, shape, element=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, element, shape)


def refused(case, call):
    global failed
    try:
        call()
    except tandem.TandemError as error:
        print(f"{case}: {type(error).__name__}: {error}")
        return
    except Exception as error:  # noqa: BLE001  not a clear error
        print(f"{case}: FAILED: {type(error).__name__}: {error}")
    else:
        print(f"{case}: FAILED: accepted")
    failed = True


relu = model([helper.make_node("Relu", ["x"], ["y"], name="act")],
             [tensor("x", [2, 3])], [tensor("y", [2, 3])])
good = save("relu.onnx", relu)

# A file cut short, an empty file, a missing file, a folder.
with open(good, "rb") as f:
    data = f.read()
truncated = os.path.join(workdir, "truncated.onnx")
with open(truncated, "wb") as f:
    f.write(data[:len(data) // 2])
refused("truncated", lambda: tandem.load_onnx(truncated))
empty = os.path.join(workdir, "empty.onnx")
open(empty, "wb").close()
refused("empty", lambda: tandem.load_onnx(empty))
refused("missing", lambda: tandem.load_onnx(os.path.join(workdir, "none.onnx")))
refused("folder", lambda: tandem.load_onnx(workdir))
refused("not a model", lambda: tandem.load_onnx(3.5))

# An operator Tandem does not import, another domain's, control flow.
unknown = model([helper.make_node("NonMaxSuppression", ["x", "s"], ["y"], name="nms")],
                [tensor("x", [1, 4, 4]), tensor("s", [1, 1, 4])],
                [tensor("y", [4, 3], TensorProto.INT64)])
refused("unknown operator", lambda: tandem.load_onnx(save("unknown.onnx", unknown)))
custom = model([helper.make_node("FusedGemm", ["x", "x"], ["y"], name="fused",
                                 domain="com.microsoft")],
               [tensor("x", [3, 3])], [tensor("y", [3, 3])])
custom.opset_import.append(helper.make_opsetid("com.microsoft", 1))
refused("other domain", lambda: tandem.load_onnx(save("custom.onnx", custom)))
branch = helper.make_graph([helper.make_node("Identity", ["x"], ["z"])], "b", [],
                           [tensor("z", [2, 3])])
control = model([helper.make_node("If", ["c"], ["y"], name="branch",
                                  then_branch=branch, else_branch=branch)],
                [tensor("c", [], TensorProto.BOOL), tensor("x", [2, 3])],
                [tensor("y", [2, 3])])
refused("control flow", lambda: tandem.load_onnx(save("control.onnx", control)))

# Opset older than 13.
old = model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", [2])],
            [tensor("y", [2])], opset=11)
refused("old opset", lambda: tandem.load_onnx(save("old.onnx", old)))

# A dynamic dimension, with and without its shape.
dynamic = model([helper.make_node("Relu", ["x"], ["y"], name="act")],
                [tensor("x", ["batch", 3])], [tensor("y", ["batch", 3])])
dynamic_path = save("dynamic.onnx", dynamic)
refused("dynamic dimension", lambda: tandem.load_onnx(dynamic_path))
refused("shape that does not fit", lambda: tandem.load_onnx(dynamic_path, [(4, 5)]))
refused("shape count", lambda: tandem.load_onnx(dynamic_path, [(4, 3), (1,)]))
refused("shape name", lambda: tandem.load_onnx(dynamic_path, {"y": (4, 3)}))
refused("shape value", lambda: tandem.load_onnx(dynamic_path, [(4, 0)]))
module, args = tandem.load_onnx(dynamic_path, {"x": (4, 3)})
print(f"dynamic dimension given: example input {tuple(args[0].shape)}")

# A Reshape whose shape is computed from the input's values.
computed = model([helper.make_node("Cast", ["n"], ["s"], to=TensorProto.INT64),
                  helper.make_node("Reshape", ["x", "s"], ["y"], name="resize")],
                 [tensor("x", [6]), tensor("n", [2])], [tensor("y", [2, 3])])
refused("shape computed at run time",
        lambda: tandem.load_onnx(save("computed.onnx", computed)))

# An output declared other than it computes: refused, never a silently
# different result.
declared = model([helper.make_node("Relu", ["x"], ["y"], name="act")],
                 [tensor("x", [2, 3])], [tensor("y", [2, 4])])
refused("declared output", lambda: tandem.load_onnx(save("declared.onnx", declared)))

# A Range over a value computed at run time.
ranged = model([helper.make_node("ReduceMax", ["x"], ["n"], keepdims=0),
                helper.make_node("Range", ["z", "n", "one"], ["y"], name="count")],
               [tensor("x", [3]), tensor("z", []), tensor("one", [])],
               [tensor("y", [3])])
refused("range at run time", lambda: tandem.load_onnx(save("range.onnx", ranged)))

# An initializer whose external data file is missing.
weight = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
external = model([helper.make_node("Add", ["x", "w"], ["y"], name="bias")],
                 [tensor("x", [2, 3])], [tensor("y", [2, 3])], [weight])
external_path = os.path.join(workdir, "external.onnx")
onnx.save(external, external_path, save_as_external_data=True,
          all_tensors_to_one_file=True, location="external.bin",
          size_threshold=0)
module, args = tandem.load_onnx(external_path)  # with its data: fine
print(f"external data present: {module(torch.zeros(2, 3)).sum().item():.1f}")
os.remove(os.path.join(workdir, "external.bin"))
refused("external data missing", lambda: tandem.load_onnx(external_path))

# A node the ATen lowering refuses names the ONNX node.
fmod = model([helper.make_node("Mod", ["x", "x"], ["y"], name="remainder", fmod=1)],
             [tensor("x", [2, 3])], [tensor("y", [2, 3])])
fmod_module, fmod_args = tandem.load_onnx(save("fmod.onnx", fmod))
refused("lowering refused", lambda: tandem.import_onnx(
    os.path.join(workdir, "fmod.onnx"), os.path.join(workdir, "fmod")))
print(f"lowering refused wrote nothing: "
      f"{not os.path.exists(os.path.join(workdir, 'fmod.mlir'))}")

# The command line: one line, exit 1; and the shape given there.
environment = dict(os.environ)
for case, arguments in (("cli dynamic", [dynamic_path]),
                        ("cli truncated", [truncated]),
                        ("cli dtype", [dynamic_path, "--shape", "4x3:int64"]),
                        ("cli mixed shapes", [dynamic_path, "--shape", "x=4x3",
                                              "--shape", "2x2"])):
    done = subprocess.run([sys.executable, "-m", "tandem", "export", *arguments,
                           "-o", os.path.join(workdir, "cli")],
                          capture_output=True, text=True, env=environment)
    lines = done.stderr.strip().splitlines()
    ok = done.returncode == 1 and len(lines) == 1
    failed |= not ok
    print(f"{case}: exit {done.returncode}: {lines[-1] if lines else ''}"
          f"{'' if ok else ' FAILED'}")
for case, shape in (("cli shape given", "4x3"), ("cli shape by name", "x=4x3")):
    done = subprocess.run([sys.executable, "-m", "tandem", "export", dynamic_path,
                           "--shape", shape, "-o", os.path.join(workdir, "cli")],
                          capture_output=True, text=True, env=environment)
    print(f"{case}: exit {done.returncode}: {done.stdout.strip()}")
    failed |= done.returncode != 0
sys.exit(1 if failed else 0)
