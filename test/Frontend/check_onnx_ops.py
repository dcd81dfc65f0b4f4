"""The ONNX operators one by one, with the attributes and spellings that
PyTorch's exporters never write (asymmetric and SAME padding, negative slice
steps, Gemm's transposes and scales, exclusive reverse cumulative sums, the
attribute forms of opset 13, the per-group scales of opset 18...). Each case
is a small subgraph; all of an opset's cases are one model with one output
per case, compiled once all on the CPU and once all on the sim GPU, and each
output is compared with ONNX Runtime's:

    check_onnx_ops.py WORKDIR

Prints one line per case and backend, then the count; exits 1 when one
differs by more than 1e-5 of its largest magnitude (exactly, for integer and
boolean results)."""
import os
import sys

import numpy as np
import onnx
import onnxruntime
import torch
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import tandem  # noqa: E402

TOLERANCE = 1e-5
rng = np.random.default_rng(0)
INPUTS = {  # name -> value (the model's inputs, shared by the cases)
    "x": rng.standard_normal((2, 4, 7, 9)).astype(np.float32),
    "m": rng.standard_normal((5, 6)).astype(np.float32),
    "k": rng.integers(-20, 20, (5, 6)).astype(np.int64),
    "ids": rng.integers(0, 5, (3, 2)).astype(np.int64),
}
ELEMENTS = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64}


class Case:
    """Collects one case's nodes and initializers under unique names."""

    def __init__(self, name, opset):
        self.name, self.opset = name, opset
        self.nodes, self.initializers, self.count = [], [], 0
        self.rank = None  # the result's rank, where ONNX cannot infer it

    def const(self, value, dtype=np.int64):
        name = f"{self.name}.c{len(self.initializers)}"
        self.initializers.append(numpy_helper.from_array(np.asarray(value, dtype), name))
        return name

    def op(self, op_type, inputs, outputs=1, **attributes):
        names = [f"{self.name}.v{self.count + k}" for k in range(outputs)]
        self.count += outputs
        self.nodes.append(helper.make_node(op_type, inputs, names,
                                           name=f"{self.name}.{op_type}{self.count}",
                                           **attributes))
        return names[0] if outputs == 1 else names


CASES = []


def case(*opsets):
    def register(build):
        CASES.append((build, opsets or (13, 18, 21)))
        return build
    return register


def axes(c, values, since):
    """Axes as an input (opset >= since) or as an attribute."""
    return ([c.const(values)], {}) if c.opset >= since else ([], {"axes": values})


@case()
def conv_asymmetric_pads(c):
    w = c.const(rng.standard_normal((6, 4, 3, 2)), np.float32)
    return c.op("Conv", ["x", w], pads=[1, 0, 0, 1], strides=[2, 1])


@case()
def conv_same_upper_grouped(c):
    w = c.const(rng.standard_normal((4, 2, 3, 3)), np.float32)
    b = c.const(rng.standard_normal(4), np.float32)
    return c.op("Conv", ["x", w, b], auto_pad="SAME_UPPER", strides=[2, 2], group=2)


@case()
def conv_same_lower_dilated(c):
    w = c.const(rng.standard_normal((3, 4, 3, 3)), np.float32)
    same = c.op("Conv", ["x", w], auto_pad="SAME_LOWER", strides=[2, 3])
    dilated = c.op("Conv", ["x", w], pads=[2, 1, 2, 1], dilations=[2, 1],
                   strides=[2, 3])
    return c.op("Add", [same, dilated])


@case()
def max_pool_asymmetric_ceil(c):
    return c.op("MaxPool", ["x"], kernel_shape=[3, 2], strides=[2, 2],
                pads=[0, 1, 1, 0], ceil_mode=1)


@case()
def average_pool_excluding_pads(c):
    return c.op("AveragePool", ["x"], kernel_shape=[3, 3], strides=[2, 2],
                pads=[1, 1, 1, 1])


@case()
def average_pool_asymmetric_excluding_pads(c):
    return c.op("AveragePool", ["x"], kernel_shape=[2, 3], pads=[0, 2, 1, 0])


@case()
def average_pool_same_including_pads(c):
    return c.op("AveragePool", ["x"], kernel_shape=[3, 3], strides=[2, 2],
                auto_pad="SAME_UPPER", count_include_pad=1)


@case()
def global_pools(c):
    return c.op("Add", [c.op("GlobalAveragePool", ["x"]),
                        c.op("GlobalMaxPool", ["x"])])


@case()
def gemm_transposed_scaled(c):
    a = c.const(rng.standard_normal((6, 3)), np.float32)
    bias = c.const(rng.standard_normal((5, 1)), np.float32)
    return c.op("Gemm", ["m", a, bias], transA=0, transB=0, alpha=0.5, beta=2.0)


@case()
def gemm_transpose_a(c):
    b = c.const(rng.standard_normal((4, 5)), np.float32)
    return c.op("Gemm", ["m", b], transA=1, transB=1)


@case()
def matmul_batched(c):
    w = c.const(rng.standard_normal((9, 3)), np.float32)
    return c.op("MatMul", ["x", w])


@case()
def einsum_contraction(c):
    w = c.const(rng.standard_normal((6, 2)), np.float32)
    return c.op("Einsum", ["m", w], equation="ij,jk->ik")


@case()
def elementwise_unary(c):
    y = c.op("Abs", ["m"])
    y = c.op("Add", [c.op("Sqrt", [y]), c.op("Log", [c.op("Add", [y, c.const(1.0, np.float32)])])])
    y = c.op("Sub", [c.op("Erf", [y]), c.op("Reciprocal", [c.op("Add", [y, c.const([2.0], np.float32)])])])
    return c.op("Mul", [c.op("Exp", [c.op("Neg", [y])]), c.op("Tanh", ["m"])])


@case()
def rounding(c):
    scaled = c.op("Mul", ["m", c.const(2.5, np.float32)])
    return c.op("Sum", [c.op("Floor", [scaled]), c.op("Ceil", [scaled]),
                        c.op("Round", [scaled])])


@case()
def activations(c):
    parts = [c.op("LeakyRelu", ["m"], alpha=0.2), c.op("Elu", ["m"], alpha=0.7),
             c.op("Selu", ["m"]), c.op("HardSigmoid", ["m"], alpha=0.3, beta=0.4),
             c.op("Softplus", ["m"]),
             c.op("ThresholdedRelu", ["m"], alpha=0.5), c.op("Sigmoid", ["m"]),
             c.op("Relu", ["m"]), c.op("Softsign", ["m"]), c.op("Celu", ["m"], alpha=1.5)]
    return c.op("Concat", parts, axis=0)


@case(18, 21)
def hard_swish_and_mish(c):
    return c.op("Add", [c.op("HardSwish", ["m"]), c.op("Mish", ["m"])])


@case(21)
def gelu_both(c):
    return c.op("Add", [c.op("Gelu", ["m"]), c.op("Gelu", ["m"], approximate="tanh")])


@case()
def prelu_per_column(c):
    return c.op("PRelu", ["m", c.const(rng.standard_normal(6), np.float32)])


@case()
def clip_inputs(c):
    return c.op("Clip", ["m", c.const(-0.5, np.float32), c.const(0.25, np.float32)])


@case()
def clip_upper_only(c):
    return c.op("Clip", ["m", "", c.const(0.1, np.float32)])


@case()
def variadic_max_min_mean(c):
    row = c.const(rng.standard_normal(6), np.float32)
    return c.op("Sub", [c.op("Max", ["m", row, c.op("Neg", ["m"])]),
                        c.op("Mean", ["m", row, c.op("Min", ["m", row])])])


@case()
def power_and_division(c):
    return c.op("Div", [c.op("Pow", [c.op("Abs", ["m"]), c.const(1.5, np.float32)]),
                        c.op("Add", [c.op("Abs", ["m"]), c.const(0.5, np.float32)])])


@case()
def integer_division_truncates(c):
    return c.op("Div", ["k", c.const([3, -3, 4, -4, 5, 7])])


@case()
def integer_arithmetic(c):
    return c.op("Sub", [c.op("Mul", ["k", c.const(3)]), c.op("Add", ["k", c.const(-7)])])


@case()
def compare_and_select(c):
    small = c.op("Less", ["m", c.const(0.0, np.float32)])
    large = c.op("GreaterOrEqual", ["m", c.const(0.5, np.float32)])
    mask = c.op("Or", [c.op("And", [small, c.op("Not", [large])]),
                       c.op("Equal", ["k", c.const(0)])])
    return c.op("Where", [mask, "m", c.op("Neg", ["m"])])


@case()
def cast_round_trip(c):
    as_int = c.op("Cast", [c.op("Mul", ["m", c.const(10.0, np.float32)])],
                  to=TensorProto.INT64)
    return c.op("Cast", [c.op("Add", [as_int, "k"])], to=TensorProto.FLOAT)


@case(18, 21)
def cast_like(c):
    return c.op("Add", [c.op("CastLike", ["k", "m"]), "m"])


@case()
def softmax_axes(c):
    return c.op("Add", [c.op("Softmax", ["x"], axis=1), c.op("LogSoftmax", ["x"], axis=-2)])


@case()
def batch_norm(c):
    p = [c.const(rng.uniform(0.5, 1.5, 4), np.float32) for _ in range(4)]
    return c.op("BatchNormalization", ["x"] + p, epsilon=1e-3)


@case()
def instance_norm(c):
    scale = c.const(rng.uniform(0.5, 1.5, 4), np.float32)
    bias = c.const(rng.standard_normal(4), np.float32)
    return c.op("InstanceNormalization", ["x", scale, bias], epsilon=1e-4)


@case(18, 21)
def layer_norm_two_axes(c):
    scale = c.const(rng.uniform(0.5, 1.5, (7, 9)), np.float32)
    bias = c.const(rng.standard_normal((7, 9)), np.float32)
    return c.op("LayerNormalization", ["x", scale, bias], axis=-2, epsilon=1e-4)


@case(18)
def group_norm_scale_per_group(c):
    c.rank = 4  # ONNX infers no shape for GroupNormalization
    scale = c.const(rng.uniform(0.5, 1.5, 2), np.float32)
    bias = c.const(rng.standard_normal(2), np.float32)
    return c.op("GroupNormalization", ["x", scale, bias], num_groups=2)


@case(21)
def group_norm_scale_per_channel(c):
    c.rank = 4  # ONNX infers no shape for GroupNormalization
    scale = c.const(rng.uniform(0.5, 1.5, 4), np.float32)
    bias = c.const(rng.standard_normal(4), np.float32)
    return c.op("GroupNormalization", ["x", scale, bias], num_groups=2)


@case()
def reshape_zero_and_infer(c):
    return c.op("Reshape", ["x", c.const([0, -1, 9])])


@case()
def flatten_axis_zero(c):
    return c.op("Flatten", ["x"], axis=0)


@case()
def flatten_axis_three(c):
    return c.op("Flatten", ["x"], axis=3)


@case()
def flatten_negative_axis(c):
    return c.op("Add", [c.op("Flatten", ["x"], axis=-1),
                        c.op("Reshape", [c.op("Flatten", ["x"], axis=-3),
                                         c.const([56, 9])])])


@case()
def integer_reductions_keep_their_type(c):
    small = c.op("Cast", ["k"], to=TensorProto.INT32)
    total = c.op("ReduceSum", [small, c.const([1])], keepdims=1)
    running = c.op("CumSum", [small, c.const(1)])
    if c.opset >= 18:
        mean = c.op("ReduceMean", [small, c.const([1])], keepdims=1)
    else:
        mean = c.op("ReduceMean", [small], axes=[1], keepdims=1)
    return c.op("Concat", [total, running, mean], axis=1)


@case()
def signed_zero_initializer(c):
    zeros = c.const([0.0, -0.0, 0.0, -0.0, 0.0, 0.0], np.float32)
    return c.op("Less", [c.op("Div", ["m", zeros]), c.const(0.0, np.float32)])


@case(18, 21)
def pad_edge_and_reflect_two_axes(c):
    return c.op("Add", [c.op("Pad", ["m", c.const([1, 2, 2, 1])], mode="edge"),
                        c.op("Pad", ["m", c.const([1, 2, 2, 1])], mode="reflect")])


@case()
def scatter_elements_negative_indices(c):
    return c.op("ScatterElements", ["m", c.const([[-1, 0, -6], [2, -2, 1]]),
                                    c.const(np.ones((2, 3)) * 7, np.float32)], axis=1)


@case()
def squeeze_unsqueeze(c):
    inputs, attributes = axes(c, [0, 3], 13)
    grown = c.op("Unsqueeze", ["m"] + inputs, **attributes)
    inputs, attributes = axes(c, [-1], 13)
    return c.op("Squeeze", [grown] + inputs, **attributes)


@case()
def transpose_default_and_given(c):
    return c.op("Add", [c.op("Transpose", ["m"]),
                        c.op("Transpose", [c.op("Transpose", ["m"], perm=[1, 0])],
                             perm=[0, 1])])


@case()
def concat_negative_axis(c):
    return c.op("Concat", ["x", c.op("Neg", ["x"])], axis=-3)


@case()
def split_sizes(c):
    if c.opset >= 13:
        parts = c.op("Split", ["x", c.const([2, 5])], outputs=2, axis=2)
    else:
        parts = c.op("Split", ["x"], outputs=2, axis=2, split=[2, 5])
    return c.op("Sub", [c.op("ReduceSum", [parts[1], c.const([2])], keepdims=1), parts[0]])


@case(18, 21)
def split_num_outputs_uneven(c):
    parts = c.op("Split", ["m"], outputs=3, axis=1, num_outputs=3)
    return c.op("Concat", parts, axis=0)


@case(13)
def split_equal(c):
    parts = c.op("Split", ["m"], outputs=2, axis=1)
    return c.op("Mul", parts)


@case()
def slice_negative_steps(c):
    return c.op("Slice", ["x", c.const([-1, 8, 1]), c.const([-100, 0, 7]),
                          c.const([3, 2, 1]), c.const([-2, -3, 2])])


@case()
def slice_clamped_bounds(c):
    return c.op("Slice", ["m", c.const([1, -4]), c.const([1 << 62, 1 << 40])])


@case()
def gather_negative_static_indices(c):
    return c.op("Gather", ["x", c.const([[-1, 0], [2, -3]])], axis=2)


@case()
def gather_scalar_index(c):
    return c.op("Gather", ["m", c.const(-2)], axis=1)


@case()
def gather_runtime_indices(c):
    return c.op("Gather", ["m", "ids"], axis=0)


@case()
def gather_nd_batch_dims(c):
    index = c.const([[[1], [3]], [[0], [5]], [[2], [2]], [[4], [0]], [[1], [1]]])
    return c.op("GatherND", ["m", index], batch_dims=1)


@case()
def gather_nd_tuples(c):
    return c.op("GatherND", ["x", c.const([[0, 3], [1, -1], [1, 0]])])


@case()
def expand_and_tile(c):
    row = c.const(rng.standard_normal((1, 6)), np.float32)
    grown = c.op("Expand", [row, c.const([3, 1, 6])])
    return c.op("Add", [c.op("Tile", ["m", c.const([1, 1])]),
                        c.op("ReduceMean", [grown] + axes(c, [0], 18)[0],
                             **axes(c, [0], 18)[1], keepdims=0)])


@case()
def pad_constant_negative(c):
    return c.op("Pad", ["x", c.const([0, 1, 2, -1, 0, 0, -2, 3]),
                        c.const(1.5, np.float32)])


@case(18, 21)
def pad_with_axes(c):
    return c.op("Pad", ["x", c.const([1, 2, 0, 1]), c.const(0.0, np.float32),
                        c.const([3, 1])])


@case()
def resize_nearest_scales(c):
    return c.op("Resize", ["x", "", c.const([1, 1, 2, 3], np.float32)],
                mode="nearest", coordinate_transformation_mode="asymmetric",
                nearest_mode="floor")


@case()
def resize_linear_half_pixel_sizes(c):
    return c.op("Resize", ["x", "", "", c.const([2, 4, 14, 5])], mode="linear")


@case()
def resize_linear_align_corners(c):
    return c.op("Resize", ["x", "", c.const([1, 1, 2, 2], np.float32)], mode="linear",
                coordinate_transformation_mode="align_corners")


@case(18, 21)
def grid_sample_both(c):
    grid = c.const(rng.uniform(-1.2, 1.2, (2, 3, 5, 2)), np.float32)
    return c.op("Add", [c.op("GridSample", ["x", grid], align_corners=1),
                        c.op("GridSample", ["x", grid], padding_mode="border")])


@case()
def top_k(c):
    values, indices = c.op("TopK", ["m", c.const([2])], outputs=2, axis=1)
    smallest = c.op("TopK", ["m", c.const([3])], outputs=2, axis=-1, largest=0)
    return c.op("Concat", [values, c.op("Cast", [indices], to=TensorProto.FLOAT),
                           smallest[0], c.op("Cast", [smallest[1]], to=TensorProto.FLOAT)],
                axis=1)


@case()
def scatter_elements(c):
    values, indices = c.op("TopK", ["m", c.const([2])], outputs=2, axis=1)
    gates = c.op("ScatterElements", [c.op("Mul", ["m", c.const(0.0, np.float32)]),
                                     indices, c.op("Softmax", [values], axis=1)], axis=1)
    if c.opset < 16:  # reduction arrived at 16
        return gates
    added = c.op("ScatterElements", ["m", c.const([[0, 4, 4, 1, 2, 0]]),
                                     c.const(np.ones((1, 6)), np.float32)],
                 axis=0, reduction="add")
    return c.op("Concat", [gates, added], axis=0)


@case()
def depth_and_space(c):
    moved = c.op("SpaceToDepth", [c.op("Slice", ["x", c.const([0, 0]),
                                                  c.const([6, 8]), c.const([2, 3])])],
                 blocksize=2)
    return c.op("Add", [c.op("DepthToSpace", [moved], blocksize=2, mode="DCR"),
                        c.op("DepthToSpace", [moved], blocksize=2, mode="CRD")])


@case()
def reductions(c):
    if c.opset >= 18:
        parts = [c.op(op, ["x", c.const([1, 3])], keepdims=0) for op in
                 ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceL1",
                  "ReduceSumSquare", "ReduceLogSumExp")]
    else:
        parts = [c.op(op, ["x"], axes=[1, 3], keepdims=0) for op in
                 ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceL1",
                  "ReduceSumSquare", "ReduceLogSumExp")]
    parts.append(c.op("ReduceSum", ["x", c.const([-1, 1])], keepdims=0))
    return c.op("Concat", parts, axis=0)


@case()
def reduce_all_axes(c):
    return c.op("ReduceSum", ["m"], keepdims=1)


@case()
def arg_max_last_index(c):
    ties = c.op("Round", ["m"])
    return c.op("Add", [c.op("ArgMax", [ties], axis=1, keepdims=0, select_last_index=1),
                        c.op("ArgMax", [ties], axis=1, keepdims=0)])


@case()
def cumsum_exclusive_reverse(c):
    return c.op("Add", [c.op("CumSum", ["m", c.const(1)], exclusive=1, reverse=1),
                        c.op("CumSum", ["m", c.const(-2)])])


@case(18, 21)
def trilu(c):
    return c.op("Add", [c.op("Trilu", ["m", c.const(1)], upper=1),
                        c.op("Trilu", ["m"], upper=0)])


@case()
def shape_arithmetic(c):
    """What the legacy exporter writes for x.view(x.size(0), -1)."""
    c.rank = 2
    shape = c.op("Shape", ["x"])
    first = c.op("Gather", [shape, c.const(0)], axis=0)
    target = c.op("Concat", [c.op("Unsqueeze", [first] + axes(c, [0], 13)[0],
                                  **axes(c, [0], 13)[1]), c.const([-1])], axis=0)
    return c.op("Reshape", ["x", target])


@case()
def constants_of_shape_and_range(c):
    ones = c.op("ConstantOfShape", [c.op("Shape", ["m"])],
                value=numpy_helper.from_array(np.array([2.0], np.float32)))
    steps = c.op("Cast", [c.op("Range", [c.const(0), c.const(6), c.const(1)])],
                 to=TensorProto.FLOAT)
    zero = c.op("Constant", [], value_float=0.5)
    return c.op("Add", [c.op("Mul", ["m", ones]), c.op("Add", [steps, zero])])


@case()
def modulo_both(c):
    return c.op("Add", [c.op("Mod", ["k", c.const(7)]),
                        c.op("Mod", ["k", c.const(-5)])])


def build_model(opset):
    cases, nodes, initializers, outputs, ranks = [], [], [], [], {}
    for build, opsets in CASES:
        if opset not in opsets:
            continue
        c = Case(build.__name__, opset)
        result = build(c)
        nodes += c.nodes
        initializers += c.initializers
        outputs.append(helper.make_empty_tensor_value_info(result))
        ranks[result] = c.rank
        cases.append(build.__name__)
    inputs = [helper.make_tensor_value_info(name, ELEMENTS[value.dtype.type],
                                            value.shape)
              for name, value in INPUTS.items()]
    graph = helper.make_graph(nodes, f"ops{opset}", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True,
                                                  data_prop=True)
    types = {v.name: v.type for v in list(inferred.graph.value_info) +
             list(inferred.graph.output) if v.type.tensor_type.HasField("shape")}
    for output in model.graph.output:  # a reshape to a computed shape stays
        if output.name in types:        # untyped: its case says its rank
            output.type.CopyFrom(types[output.name])
        elif ranks[output.name] is None:
            sys.exit(f"opset {opset}: ONNX's shape inference does not type "
                     f"{output.name}, and its case gives no rank")
        else:
            output.CopyFrom(helper.make_tensor_value_info(
                output.name, TensorProto.FLOAT, [f"d{k}" for k in range(ranks[output.name])]))
    return model, cases


def compare(got, want):
    got, want = got.double(), torch.from_numpy(np.asarray(want)).double()
    if tuple(got.shape) != tuple(want.shape):
        return f"shape {tuple(got.shape)}, ONNX Runtime {tuple(want.shape)}", False
    if not want.dtype.is_floating_point or not np.issubdtype(np.asarray(want).dtype,
                                                            np.floating):
        wrong = int((got != want).sum())
        return f"{wrong} of {want.numel()} differ", wrong == 0
    error = ((got - want).abs().max() / want.abs().max().clamp_min(1e-30)).item()
    return f"{error:.1e}", error <= TOLERANCE


workdir = sys.argv[1]
os.makedirs(workdir, exist_ok=True)
failed = total = 0
for opset in (13, 18, 21):
    model, cases = build_model(opset)
    path = os.path.join(workdir, f"ops{opset}.onnx")
    onnx.save(model, path)
    quiet = onnxruntime.SessionOptions()
    quiet.log_severity_level = 3
    session = onnxruntime.InferenceSession(path, quiet,
                                           providers=["CPUExecutionProvider"])
    expected = session.run(None, dict(INPUTS))
    module, example_args = tandem.load_onnx(path)
    arguments = [torch.from_numpy(INPUTS[name]) for name in INPUTS]
    for backend, strategy in (("auto", "all-cpu"), ("sim", "all-gpu")):
        run = tandem.compile(module, example_args, strategy=strategy,
                             device_profile="h200", backend=backend,
                             workdir=workdir)
        outputs = run(*arguments)
        run.close()
        for name, got, want in zip(cases, outputs, expected):
            detail, ok = compare(got, want)
            total += 1
            failed += not ok
            print(f"opset {opset} {strategy}: {name}: {detail} "
                  f"{'ok' if ok else 'FAILED'}")
print(f"{total - failed} of {total} outputs match ONNX Runtime")
sys.exit(1 if failed else 0)
