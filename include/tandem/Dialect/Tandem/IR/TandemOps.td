//===- TandemOps.td - tandem op definitions ----------------*- tablegen -*-===//
//
// Every op of the IR contract. Names, operands and attribute
// names and kinds are fixed interfaces: tests, users and the Python exporter
// write them in the generic form.
//
// Each op documents its work estimate ("Work:") next to its semantics; the
// estimates follow the conventions of WorkEstimateOpInterface.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_TANDEM_IR_TANDEMOPS_TD
#define TANDEM_DIALECT_TANDEM_IR_TANDEMOPS_TD

include "tandem/Dialect/Tandem/IR/TandemDialect.td"
include "tandem/Dialect/Tandem/IR/TandemAttrs.td"
include "tandem/Dialect/Tandem/IR/TandemInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ViewLikeInterface.td"

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

defvar Tandem_FloatTypes = [F32, F16, BF16];
defvar Tandem_IntTypes = [I32, I64];

def Tandem_Tensor : StaticShapeTensorOf<[F32, F16, BF16, I32, I64, I1]>;
def Tandem_FloatTensor : StaticShapeTensorOf<Tandem_FloatTypes>;
def Tandem_NumericTensor : StaticShapeTensorOf<[F32, F16, BF16, I32, I64]>;
def Tandem_IndexTensor : StaticShapeTensorOf<Tandem_IntTypes>;
def Tandem_BoolTensor : StaticShapeTensorOf<[I1]>;
def Tandem_I64Tensor : StaticShapeTensorOf<[I64]>;

//===----------------------------------------------------------------------===//
// Attribute kinds shared by several ops
//===----------------------------------------------------------------------===//

def Tandem_Pair : ConfinedAttr<DenseI64ArrayAttr, [DenseArrayCount<2>]>;

//===----------------------------------------------------------------------===//
// Traits
//===----------------------------------------------------------------------===//

/// The operand shapes broadcast together (NumPy rules) to the result shape.
def Tandem_BroadcastsOperands : NativeOpTrait<"BroadcastsOperands"> {
  let cppNamespace = "::mlir::tandem::OpTrait";
}

/// Every operand and result fits in what one tensor may occupy
/// (kMaxTensorBytes), so no size or offset overflows downstream.
def Tandem_AddressableTensors : NativeOpTrait<"AddressableTensors"> {
  let cppNamespace = "::mlir::tandem::OpTrait";
}

/// The op runs as runtime kind `kind` (OpKinds.def). Ops with attributes
/// list "writeRuntimeAttrs" in `overridden` and write them in
/// TandemRuntime.cpp, with the layout ImageAttrs.h gives their kind.
class Tandem_RunsAsTrait<string kind>
    : ParamNativeOpTrait<"RunsAs", "::mlir::tandem::RuntimeKind::" # kind> {
  let cppNamespace = "::mlir::tandem::OpTrait";
}
class Tandem_RunsAs<string kind, list<string> overridden = []>
    : TraitList<[Tandem_RunsAsTrait<kind>,
                 DeclareOpInterfaceMethods<Tandem_RuntimeOpInterface,
                                           overridden>]>;

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

/// An op whose work estimate is computed by its own `estimateWork`.
defvar Tandem_OwnWork =
    DeclareOpInterfaceMethods<Tandem_WorkEstimateOpInterface, ["estimateWork"]>;

/// Every tandem op is pure (no side effect but its result), implements both
/// placement contracts (`devices` is overridden by ops with a device rule)
/// and has tensors of addressable size.
class Tandem_Op<string mnemonic, list<Trait> traits = [],
                Trait devices = Tandem_DeviceSupportOpInterface>
    : Op<Tandem_Dialect, mnemonic,
         traits # [Pure, devices, Tandem_AddressableTensors]>;

/// An op computing each result element from the matching operand elements
/// with `flops` operations.
class Tandem_ElementwiseWork<int flops> {
  code definition = [{
    ::mlir::tandem::WorkEstimate $cppClass::estimateWork() {
      return ::mlir::tandem::estimateElementwiseWork(getOperation(), }] #
      flops # [{);
    }
  }];
}

class Tandem_UnaryOp<string mnemonic, string kind, Type tensorType, int flops,
                     string semantics>
    : Tandem_Op<mnemonic, [SameOperandsAndResultType, Tandem_OwnWork,
                           Tandem_RunsAs<kind>]> {
  let summary = "elementwise " # mnemonic;
  let description = semantics # "\n\nWork: " # flops #
      " FLOP per element; reads x, writes the result.\n";
  let arguments = (ins tensorType:$x);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
  let extraClassDefinition = Tandem_ElementwiseWork<flops>.definition;
}

class Tandem_BinaryOp<string mnemonic, string kind, Type tensorType,
                      int flops, string semantics>
    : Tandem_Op<mnemonic, [SameOperandsAndResultElementType,
                           Tandem_OwnWork, Tandem_RunsAs<kind>,
                           Tandem_BroadcastsOperands]> {
  let summary = "elementwise " # mnemonic # " with NumPy broadcasting";
  let description = semantics # "\n\n"
      "The operand shapes broadcast as in NumPy (right-aligned; a dimension "
      "of 1 stretches) and the result has the broadcast shape. Operands and "
      "result share one element type: there is no implicit promotion.\n\n"
      "Work: " # flops # " FLOP per result element; reads both operands, "
      "writes the result.\n";
  let arguments = (ins tensorType:$lhs, tensorType:$rhs);
  let results = (outs tensorType:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:`
    custom<BroadcastTypes>(type($lhs), type($rhs), type($result))
  }];
  let extraClassDefinition = Tandem_ElementwiseWork<flops>.definition;
}

class Tandem_ReductionOp<string mnemonic, string kind, Type tensorType,
                         string semantics>
    : Tandem_Op<mnemonic, [SameOperandsAndResultElementType, Tandem_OwnWork,
                           Tandem_RunsAs<kind, ["writeRuntimeAttrs"]>]> {
  let summary = mnemonic # " over the given axes";
  let description = semantics # "\n\n"
      "`axes` lists distinct dimensions (negative ones count from the end). "
      "With `keepdims` the reduced dimensions stay as 1, otherwise they are "
      "removed.\n\n"
      "Work: one FLOP per input element; reads x, writes the result.\n";
  let arguments = (ins tensorType:$x, DenseI64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "false">:$keepdims);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

def Tandem_WeightOp : Tandem_Op<"weight", [Tandem_OwnWork]> {
  let summary = "a named tensor from the weights file";
  let description = [{
    `name` is the key of the tensor in the model's weights file (safetensors).
    A weight is resident where it is placed: it is loaded once, before the
    first run.

    Work: none per run (0 FLOPs, 0 bytes): its cost is the memory it occupies.

    ```mlir
    %w = tandem.weight "fc1.weight" : tensor<16x13xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Tandem_Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tandem_FillOp : Tandem_Op<"fill", [Tandem_RunsAs<"Fill", ["writeRuntimeAttrs"]>,
     Tandem_OwnWork]> {
  let summary = "a tensor with every element equal to `value`";
  let description = [{
    `value` is typed like the result's element type (`0.5 : f32`, `3 : i64`).

    Work: 0 FLOPs, 0 bytes read; writes the result.

    ```mlir
    %z = tandem.fill(0.000000e+00 : f32) : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins TypedAttrInterface:$value);
  let results = (outs Tandem_Tensor:$result);
  let assemblyFormat = "`(` $value `)` attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tandem_IotaOp : Tandem_Op<"iota", [Tandem_RunsAs<"Iota", ["writeRuntimeAttrs"]>,
     Tandem_OwnWork]> {
  let summary = "element indices along an axis";
  let description = [{
    Each element holds its index along `axis`, converted to the element type.

    Work: 0 FLOPs, 0 bytes read; writes the result.
  }];
  let arguments = (ins I64Attr:$axis);
  let results = (outs Tandem_NumericTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise binary
//===----------------------------------------------------------------------===//

// Integer arithmetic wraps around in two's complement, as in NumPy and
// PyTorch.
def Tandem_AddOp : Tandem_BinaryOp<"add", "Add", Tandem_NumericTensor, 1,
    "lhs + rhs; integers wrap around.">;
def Tandem_SubOp : Tandem_BinaryOp<"sub", "Sub", Tandem_NumericTensor, 1,
    "lhs - rhs; integers wrap around.">;
def Tandem_MulOp : Tandem_BinaryOp<"mul", "Mul", Tandem_NumericTensor, 1,
    "lhs * rhs; integers wrap around.">;
def Tandem_DivOp : Tandem_BinaryOp<"div", "Div", Tandem_NumericTensor, 1,
    "lhs / rhs; integer division truncates toward zero, MIN / -1 wraps to "
    "MIN, and an integer division by zero is an error at run time (as in "
    "PyTorch).">;
def Tandem_MaximumOp : Tandem_BinaryOp<"maximum", "Maximum", Tandem_NumericTensor, 1,
    "max(lhs, rhs), NaN-propagating as torch.maximum.">;
def Tandem_MinimumOp : Tandem_BinaryOp<"minimum", "Minimum", Tandem_NumericTensor, 1,
    "min(lhs, rhs), NaN-propagating as torch.minimum.">;
// pow is exp(rhs * log(lhs)): 4 + 1 + 4 FLOPs, rounded to 8.
def Tandem_PowOp : Tandem_BinaryOp<"pow", "Pow", Tandem_FloatTensor, 8,
    "lhs raised to the power rhs.">;

//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

// FLOPs per element: 1 for arithmetic; 4 for exp and log (a short polynomial
// after range reduction); tanh, sigmoid and silu add a division and an
// addition or multiplication to an exp; gelu evaluates erf (about 10).
def Tandem_NegOp : Tandem_UnaryOp<"neg", "Neg", Tandem_NumericTensor, 1,
    "-x; -MIN wraps to MIN.">;
def Tandem_AbsOp : Tandem_UnaryOp<"abs", "Abs", Tandem_NumericTensor, 1,
    "|x|; abs(MIN) wraps to MIN.">;
def Tandem_ExpOp : Tandem_UnaryOp<"exp", "Exp", Tandem_FloatTensor, 4, "e^x.">;
def Tandem_LogOp : Tandem_UnaryOp<"log", "Log", Tandem_FloatTensor, 4,
    "Natural logarithm of x.">;
def Tandem_SqrtOp : Tandem_UnaryOp<"sqrt", "Sqrt", Tandem_FloatTensor, 1,
    "Square root of x.">;
def Tandem_RsqrtOp : Tandem_UnaryOp<"rsqrt", "Rsqrt", Tandem_FloatTensor, 1,
    "1 / sqrt(x).">;
def Tandem_TanhOp : Tandem_UnaryOp<"tanh", "Tanh", Tandem_FloatTensor, 6,
    "Hyperbolic tangent of x.">;
def Tandem_SigmoidOp : Tandem_UnaryOp<"sigmoid", "Sigmoid", Tandem_FloatTensor, 6,
    "1 / (1 + e^-x).">;
def Tandem_ReluOp : Tandem_UnaryOp<"relu", "Relu", Tandem_NumericTensor, 1,
    "max(x, 0); relu(NaN) is NaN, as in PyTorch.">;
def Tandem_GeluOp : Tandem_UnaryOp<"gelu", "Gelu", Tandem_FloatTensor, 10,
    "x * Φ(x), the exact erf form: 0.5 * x * (1 + erf(x / sqrt(2))).">;
def Tandem_SiluOp : Tandem_UnaryOp<"silu", "Silu", Tandem_FloatTensor, 6,
    "x * sigmoid(x).">;
def Tandem_ErfOp : Tandem_UnaryOp<"erf", "Erf", Tandem_FloatTensor, 10,
    "The error function, (2/√π) ∫₀ˣ e^(−t²) dt (what a hand-written GELU "
    "calls).">;
// Rounding to an integral value (in the float type); NaN, ±inf and -0 stay.
def Tandem_FloorOp : Tandem_UnaryOp<"floor", "Floor", Tandem_FloatTensor, 1,
    "The largest integral value not above x.">;
def Tandem_CeilOp : Tandem_UnaryOp<"ceil", "Ceil", Tandem_FloatTensor, 1,
    "The smallest integral value not below x.">;
def Tandem_RoundOp : Tandem_UnaryOp<"round", "Round", Tandem_FloatTensor, 1,
    "x rounded to the nearest integral value, halves to even (as "
    "`torch.round` and NumPy's `round`: 0.5 and -0.5 round to 0, 1.5 and 2.5 "
    "to 2).">;
def Tandem_TruncOp : Tandem_UnaryOp<"trunc", "Trunc", Tandem_FloatTensor, 1,
    "x rounded toward zero.">;

//===----------------------------------------------------------------------===//
// Compare, select, cast
//===----------------------------------------------------------------------===//

def Tandem_CompareOp : Tandem_Op<"compare", [Tandem_RunsAs<"Compare", ["writeRuntimeAttrs"]>,
     SameOperandsElementType,
    Tandem_OwnWork,
    Tandem_BroadcastsOperands]> {
  let summary = "elementwise comparison with NumPy broadcasting";
  let description = [{
    Compares lhs and rhs with `predicate` (eq, ne, lt, le, gt, ge), giving an
    i1 mask of the broadcast shape (NumPy rules). Both operands have one
    element type.

    Work: 1 FLOP per result element; reads both operands, writes the mask.

    ```mlir
    %m = tandem.compare lt, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Tandem_ComparePredicateAttr:$predicate,
                   Tandem_Tensor:$lhs, Tandem_Tensor:$rhs);
  let results = (outs Tandem_BoolTensor:$result);
  let assemblyFormat = [{
    custom<ComparePredicate>($predicate) `,` $lhs `,` $rhs attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDefinition = Tandem_ElementwiseWork<1>.definition;
}

def Tandem_SelectOp : Tandem_Op<"select", [Tandem_RunsAs<"Select">,
     Tandem_OwnWork,
    Tandem_BroadcastsOperands]> {
  let summary = "elementwise choice between two tensors by a mask";
  let description = [{
    `cond ? a : b` elementwise, with cond, a and b broadcast together (NumPy
    rules). `a`, `b` and the result share one element type.

    Work: 1 FLOP per result element; reads all three operands, writes the
    result.
  }];
  let arguments = (ins Tandem_BoolTensor:$cond, Tandem_Tensor:$a,
                   Tandem_Tensor:$b);
  let results = (outs Tandem_Tensor:$result);
  let assemblyFormat = [{
    $cond `,` $a `,` $b attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = Tandem_ElementwiseWork<1>.definition;
}

def Tandem_CastOp : Tandem_Op<"cast", [Tandem_RunsAs<"Cast">,
     SameOperandsAndResultShape,
                                       Tandem_OwnWork]> {
  let summary = "elementwise conversion to the result's element type";
  let description = [{
    Converts each element to the result's element type: floats round to
    nearest even, float to integer truncates toward zero as in PyTorch, to i1
    is `x != 0`. A float that is NaN converts to integer 0, and one beyond the
    integer type's range to its largest or smallest value (saturating, as
    XLA's convert; C++ and NumPy leave these undefined or platform-specific).

    Work: 1 FLOP per element; reads x, writes the result.
  }];
  let arguments = (ins Tandem_Tensor:$x);
  let results = (outs Tandem_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasFolder = 1;
  let extraClassDefinition = Tandem_ElementwiseWork<1>.definition;
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Tandem_MatmulOp : Tandem_Op<"matmul", [Tandem_RunsAs<"Matmul">,
     SameOperandsAndResultElementType,
                                           Tandem_OwnWork]> {
  let summary = "batched matrix product";
  let description = [{
    a: [..., M, K], b: [..., K, N] (both rank ≥ 2) → [..., M, N], the leading
    batch dimensions broadcast as in NumPy (`torch.matmul` for rank ≥ 2).

    Work: 2·B·M·N·K FLOPs (B: product of the broadcast batch dimensions);
    reads a and b, writes the result.
  }];
  let arguments = (ins Tandem_FloatTensor:$a, Tandem_FloatTensor:$b);
  let results = (outs Tandem_FloatTensor:$result);
  let assemblyFormat = "$a `,` $b attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tandem_LinearOp : Tandem_Op<"linear", [Tandem_RunsAs<"Linear", ["writeRuntimeAttrs"]>,
     SameOperandsAndResultElementType,
                                           Tandem_OwnWork]> {
  let summary = "x·wᵀ + b in PyTorch's layout";
  let description = [{
    x: [..., K], w: [N, K], optional b: [N] → [..., N] (`torch.nn.functional.linear`).

    Work: 2·R·N·K FLOPs plus R·N for the bias (R: product of x's leading
    dimensions); reads every operand, writes the result.
  }];
  let arguments = (ins Tandem_FloatTensor:$x, Tandem_FloatTensor:$w,
                   Optional<Tandem_FloatTensor>:$b);
  let results = (outs Tandem_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $w (`,` $b^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

def Tandem_Conv2dOp : Tandem_Op<"conv2d", [Tandem_RunsAs<"Conv2d", ["writeRuntimeAttrs"]>,
     SameOperandsAndResultElementType,
                                           Tandem_OwnWork],
    DeclareOpInterfaceMethods<Tandem_DeviceSupportOpInterface,
                              ["getGpuWorkspaceBytes"]>> {
  let summary = "2-D convolution, NCHW input and OIHW filter";
  let description = [{
    x: [N, C, H, W], w: [O, C/groups, kH, kW], optional b: [O] →
    [N, O, OH, OW] with OH = ⌊(H + 2·pH − dH·(kH − 1) − 1) / sH⌋ + 1 (and the
    same for W), as `torch.nn.functional.conv2d`. `strides`, `padding`
    (symmetric) and `dilation` are (height, width) pairs; `groups` divides C
    and O.

    Work: 2·N·O·OH·OW·(C/groups)·kH·kW FLOPs, plus N·O·OH·OW for the bias;
    reads every operand, writes the result. On a GPU it may use a workspace
    (cuDNN's) of up to one group's im2col matrix, N·(C/groups)·kH·kW·OH·OW
    elements, capped at 32 MiB, and none for a 1x1, stride-1, unpadded
    convolution: planned in the GPU arena for its step and counted in the
    budget.
  }];
  let arguments = (ins Tandem_FloatTensor:$x, Tandem_FloatTensor:$w,
                   Optional<Tandem_FloatTensor>:$b,
                   DefaultValuedAttr<Tandem_Pair, "{1, 1}">:$strides,
                   DefaultValuedAttr<Tandem_Pair, "{0, 0}">:$padding,
                   DefaultValuedAttr<Tandem_Pair, "{1, 1}">:$dilation,
                   DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Tandem_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $w (`,` $b^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

class Tandem_Pool2dOp<string mnemonic, string kind, string semantics>
    : Tandem_Op<mnemonic, [SameOperandsAndResultElementType, Tandem_OwnWork,
                           Tandem_RunsAs<kind, ["writeRuntimeAttrs"]>]> {
  let summary = "2-D " # mnemonic # " over NCHW";
  let description = semantics # "\n\n"
      "x: [N, C, H, W] → [N, C, OH, OW], OH = ⌊(H + 2·pH − kH) / sH⌋ + 1 "
      "(floor mode). `kernel`, `strides` (default: the kernel) and `padding` "
      "(symmetric, at most half the kernel, default 0) are (height, width) "
      "pairs.\n\n"
      "Work: N·C·OH·OW·kH·kW FLOPs; reads x, writes the result.\n";
  let arguments = (ins Tandem_FloatTensor:$x, Tandem_Pair:$kernel,
                   OptionalAttr<Tandem_Pair>:$strides,
                   DefaultValuedAttr<Tandem_Pair, "{0, 0}">:$padding);
  let results = (outs Tandem_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The strides, defaulting to the kernel as in PyTorch.
    ::llvm::ArrayRef<int64_t> getEffectiveStrides() {
      return getStrides() ? *getStrides() : getKernel();
    }
  }];
}

def Tandem_MaxPool2dOp : Tandem_Pool2dOp<"max_pool2d", "MaxPool2d",
    "The maximum of each window; padding never wins (it is -inf).">;
def Tandem_AvgPool2dOp : Tandem_Pool2dOp<"avg_pool2d", "AvgPool2d",
    "The mean of each window; padded zeros count in the divisor, as PyTorch's "
    "default `count_include_pad=True`.">;

def Tandem_BatchNormOp : Tandem_Op<"batch_norm",
    [Tandem_RunsAs<"BatchNorm", ["writeRuntimeAttrs"]>,
     SameOperandsAndResultElementType, Tandem_OwnWork]> {
  let summary = "batch normalization, inference form";
  let description = [{
    x: [N, C, ...], scale, bias, mean, var: [C] →
    (x − mean) / sqrt(var + epsilon) · scale + bias, per channel (dimension 1).

    Work: 2 FLOPs per element of x (a fused multiply-add once the per-channel
    factors are known) plus 4 per channel; reads every operand, writes the
    result.
  }];
  let arguments = (ins Tandem_FloatTensor:$x, Tandem_FloatTensor:$scale,
                   Tandem_FloatTensor:$bias, Tandem_FloatTensor:$mean,
                   Tandem_FloatTensor:$var,
                   DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Tandem_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $scale `,` $bias `,` $mean `,` $var attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

class Tandem_AxisNormOp<string mnemonic, string kind, int flops,
                        string semantics, string epsilon = "">
    : Tandem_Op<mnemonic, [SameOperandsAndResultType, Tandem_OwnWork,
                           Tandem_RunsAs<kind, ["writeRuntimeAttrs"]>]> {
  let description = semantics # "\n\nWork: " # flops #
      " FLOPs per element; reads x, writes the result.\n";
  let arguments = !if(!empty(epsilon),
      (ins Tandem_FloatTensor:$x, I64Attr:$axis),
      (ins Tandem_FloatTensor:$x, I64Attr:$axis,
           DefaultValuedAttr<F32Attr, epsilon>:$epsilon));
  let results = (outs Tandem_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDefinition = Tandem_ElementwiseWork<flops>.definition;
}

// softmax: max, subtract, exp (4), sum and divide: 8 FLOPs per element.
def Tandem_SoftmaxOp : Tandem_AxisNormOp<"softmax", "Softmax", 8,
    "exp(x − max) / Σ exp(x − max) along `axis`."> {
  let summary = "softmax along an axis";
}
// log_softmax: max, subtract, exp (4), sum, subtract the log: 8 per element.
def Tandem_LogSoftmaxOp : Tandem_AxisNormOp<"log_softmax", "LogSoftmax", 8,
    "x − max − log Σ exp(x − max) along `axis`."> {
  let summary = "log of softmax along an axis";
}
// l2_normalize: square, sum, divide: 3 FLOPs per element.
def Tandem_L2NormalizeOp : Tandem_AxisNormOp<"l2_normalize", "L2Normalize", 3,
    "x / max(‖x‖₂, epsilon) along `axis` (`torch.nn.functional.normalize`, "
    "epsilon defaults to 1e-12).", "1.0e-12"> {
  let summary = "divide by the L2 norm along an axis";
}

def Tandem_LayerNormOp : Tandem_Op<"layer_norm",
    [Tandem_RunsAs<"LayerNorm", ["writeRuntimeAttrs"]>,
     SameOperandsAndResultElementType, Tandem_OwnWork]> {
  let summary = "layer normalization over the trailing dimensions";
  let description = [{
    Normalizes x over dimensions axis..rank−1 (mean 0, variance 1 with
    `epsilon` added to the variance), then multiplies by gamma and adds beta,
    both shaped like those dimensions (`torch.nn.functional.layer_norm`).

    Work: 8 FLOPs per element (mean, variance, normalize, scale, shift); reads
    every operand, writes the result.
  }];
  let arguments = (ins Tandem_FloatTensor:$x, Tandem_FloatTensor:$gamma,
                   Tandem_FloatTensor:$beta, I64Attr:$axis,
                   DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Tandem_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $gamma `,` $beta attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Tandem_ReduceSumOp : Tandem_ReductionOp<"reduce_sum", "ReduceSum", Tandem_NumericTensor,
    "Sum of the elements over `axes`.">;
def Tandem_ReduceMeanOp : Tandem_ReductionOp<"reduce_mean", "ReduceMean", Tandem_FloatTensor,
    "Mean of the elements over `axes`.">;
def Tandem_ReduceMaxOp : Tandem_ReductionOp<"reduce_max", "ReduceMax", Tandem_NumericTensor,
    "Maximum over `axes` (NaN-propagating).">;
def Tandem_ReduceMinOp : Tandem_ReductionOp<"reduce_min", "ReduceMin", Tandem_NumericTensor,
    "Minimum over `axes` (NaN-propagating).">;

def Tandem_ArgmaxOp : Tandem_Op<"argmax", [Tandem_RunsAs<"Argmax", ["writeRuntimeAttrs"]>,
     Tandem_OwnWork]> {
  let summary = "index of the maximum along an axis";
  let description = [{
    The index (i64) of the first maximum along `axis`; with `keepdims` that
    dimension stays as 1.

    Work: one FLOP per input element; reads x, writes the result.
  }];
  let arguments = (ins Tandem_NumericTensor:$x, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$keepdims);
  let results = (outs Tandem_I64Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def Tandem_CumsumOp : Tandem_Op<"cumsum", [Tandem_RunsAs<"Cumsum", ["writeRuntimeAttrs"]>,
     SameOperandsAndResultType, Tandem_OwnWork]> {
  let summary = "running sum along an axis";
  let description = [{
    result[..., i, ...] = Σ x[..., j, ...] for j ≤ i along `axis`
    (`torch.cumsum`; the frontend first widens integer inputs to i64, as
    PyTorch does). Floats accumulate in double and round once per element;
    integers wrap around.

    Work: one FLOP per element; reads x, writes the result.
  }];
  let arguments = (ins Tandem_NumericTensor:$x, I64Attr:$axis);
  let results = (outs Tandem_NumericTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let hasVerifier = 1;
  let extraClassDefinition = Tandem_ElementwiseWork<1>.definition;
}

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

def Tandem_ReshapeOp : Tandem_Op<"reshape", [SameOperandsAndResultElementType,
    Tandem_OwnWork, DeclareOpInterfaceMethods<ViewLikeOpInterface>]> {
  let summary = "the same elements in row-major order under another shape";
  let description = [{
    The result has as many elements as x.

    Work: none: a reshape relabels the buffer.
  }];
  let arguments = (ins Tandem_Tensor:$x);
  let results = (outs Tandem_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tandem_TransposeOp : Tandem_Op<"transpose",
    [Tandem_RunsAs<"Transpose", ["writeRuntimeAttrs"]>,
     SameOperandsAndResultElementType, Tandem_OwnWork]> {
  let summary = "permutation of the dimensions";
  let description = [{
    result dimension i is x's dimension perm[i] (`torch.permute`).

    Work: 0 FLOPs; reads x, writes the result.
  }];
  let arguments = (ins Tandem_Tensor:$x, DenseI64ArrayAttr:$perm);
  let results = (outs Tandem_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tandem_ConcatOp : Tandem_Op<"concat", [Tandem_RunsAs<"Concat", ["writeRuntimeAttrs"]>,
     SameOperandsAndResultElementType,
                                           Tandem_OwnWork]> {
  let summary = "join tensors along an axis";
  let description = [{
    One or more inputs of one rank and element type whose dimensions agree
    except along `axis`; the result's `axis` dimension is their sum.

    Work: 0 FLOPs; reads every input, writes the result.
  }];
  let arguments = (ins Variadic<Tandem_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Tandem_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tandem_SliceOp : Tandem_Op<"slice", [Tandem_RunsAs<"Slice", ["writeRuntimeAttrs"]>,
     SameOperandsAndResultElementType,
                                         Tandem_OwnWork]> {
  let summary = "a strided window of static bounds";
  let description = [{
    For each dimension d: elements starts[d], starts[d] + strides[d], ... below
    limits[d], with 0 ≤ starts[d] ≤ limits[d] ≤ dim and strides[d] ≥ 1
    (default 1). Result dimension: ⌈(limits[d] − starts[d]) / strides[d]⌉.

    Work: 0 FLOPs; reads the selected elements, writes the result.
  }];
  let arguments = (ins Tandem_Tensor:$x, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$limits,
                   OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs Tandem_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// The strides, defaulting to 1 in every dimension.
    ::llvm::SmallVector<int64_t> getEffectiveStrides();
  }];
}

def Tandem_BroadcastToOp : Tandem_Op<"broadcast_to",
    [Tandem_RunsAs<"BroadcastTo">,
     SameOperandsAndResultElementType, Tandem_OwnWork]> {
  let summary = "stretch to a larger shape with NumPy broadcasting";
  let description = [{
    x's shape must broadcast to the result's shape (right-aligned; x's
    dimensions are 1 or equal to the result's).

    Work: 0 FLOPs; reads x, writes the result.
  }];
  let arguments = (ins Tandem_Tensor:$x);
  let results = (outs Tandem_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tandem_ShapeOp : Tandem_Op<"shape", [Tandem_RunsAs<"Shape">,
     Tandem_OwnWork],
    DeclareOpInterfaceMethods<Tandem_DeviceSupportOpInterface, ["canRunOn"]>> {
  let summary = "the dimensions of a tensor, as an i64 vector";
  let description = [{
    Result: a 1-D i64 tensor with one entry per dimension of x. Shapes are
    static, so it folds to a constant; it is a host-side query, so it runs on
    the CPU only.

    Work: 0 FLOPs, 0 bytes read; writes the result.
  }];
  let arguments = (ins Tandem_Tensor:$x);
  let results = (outs Tandem_I64Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

def Tandem_EmbeddingOp : Tandem_Op<"embedding", [Tandem_RunsAs<"Embedding">,
     Tandem_OwnWork]> {
  let summary = "rows of a table selected by ids";
  let description = [{
    table: [V, D], ids: integer tensor of any shape → ids.shape + [D], the
    element type of the table (`torch.nn.functional.embedding`). An id
    outside [0, V), negative ones included, is an error at run time.

    Work: 0 FLOPs; reads the ids and the selected rows (not the whole table),
    writes the result.
  }];
  let arguments = (ins Tandem_Tensor:$table, Tandem_IndexTensor:$ids);
  let results = (outs Tandem_Tensor:$result);
  let assemblyFormat = "$table `,` $ids attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tandem_EmbeddingBagOp : Tandem_Op<"embedding_bag",
    [Tandem_RunsAs<"EmbeddingBag", ["writeRuntimeAttrs"]>, Tandem_OwnWork]> {
  let summary = "sums, means or maxima of bags of table rows";
  let description = [{
    table: [V, D] floats, ids: [L] integers, offsets: integers, optional
    weights: [L] of the table's type (`sum` only) → [B, D], the table's
    type (`torch.nn.functional.embedding_bag`). Bag b holds the rows of
    ids[offsets[b] : offsets[b + 1]]; the last bag runs to the end of the
    ids, or, with `include_last_offset`, offsets has B + 1 entries and its
    last ends the last bag. `mode` is "sum" (each row times its weight when
    there are weights), "mean" or "max" (NaN wins). Ids equal to
    `padding_idx` (when it is not −1) are left out, and not counted by the
    mean. An empty bag gives zeros. Errors at run time: an id outside
    [0, V), offsets that do not start at 0, decrease or pass L.

    Work: D FLOPs per id (2·D with weights); reads the ids, the offsets,
    the weights and the selected rows (not the whole table), writes the
    result.
  }];
  let arguments = (ins Tandem_FloatTensor:$table, Tandem_IndexTensor:$ids,
                   Tandem_IndexTensor:$offsets,
                   Optional<Tandem_FloatTensor>:$weights, StrAttr:$mode,
                   DefaultValuedAttr<I64Attr, "-1">:$padding_idx,
                   DefaultValuedAttr<BoolAttr, "false">:$include_last_offset);
  let results = (outs Tandem_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $ids `,` $offsets (`,` $weights^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tandem_GatherOp : Tandem_Op<"gather", [Tandem_RunsAs<"Gather", ["writeRuntimeAttrs"]>,
     Tandem_OwnWork]> {
  let summary = "take along an axis";
  let description = [{
    As `numpy.take(x, indices, axis)`: the result's shape is
    x.shape[:axis] + indices.shape + x.shape[axis+1:]. A negative index counts
    from the end; one outside [-n, n) is an error at run time.

    Work: 0 FLOPs; reads the indices and the selected slices of x, writes the
    result.
  }];
  let arguments = (ins Tandem_Tensor:$x, Tandem_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Tandem_Tensor:$result);
  let assemblyFormat = "$x `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tandem_DynamicSliceOp : Tandem_Op<"dynamic_slice", [Tandem_RunsAs<"DynamicSlice">,
     Tandem_OwnWork],
    DeclareOpInterfaceMethods<Tandem_DeviceSupportOpInterface,
                              ["isHostOperand"]>> {
  let summary = "a window of static size at offsets known at run time";
  let description = [{
    offsets: a 1-D i64 tensor with one entry per dimension of x, read **on the
    host** (it decides the launch); each offset is clamped to [0, dim − size]
    as in XLA. The result's shape is `sizes`.

    Work: 0 FLOPs; reads the offsets and the window, writes the result.
  }];
  let arguments = (ins Tandem_Tensor:$x, Tandem_I64Tensor:$offsets,
                   DenseI64ArrayAttr:$sizes);
  let results = (outs Tandem_Tensor:$result);
  let assemblyFormat = "$x `,` $offsets attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Placement
//===----------------------------------------------------------------------===//

def Tandem_TransferOp : Tandem_Op<"transfer", [Tandem_RunsAs<"Transfer">,
     SameOperandsAndResultType,
                                               Tandem_OwnWork]> {
  let summary = "copy a value to another device";
  let description = [{
    The same tensor, on device `to`. Inserted by `--tandem-insert-transfers`;
    one per value per destination device.

    Work: 0 FLOPs; reads and writes the tensor once (its time is a link
    transfer, priced by the cost model from the device profile).

    ```mlir
    %g = tandem.transfer %x : tensor<4096x150xf32> to #tandem.device<gpu>
    ```
  }];
  let arguments = (ins Tandem_Tensor:$x, Tandem_DeviceAttr:$to);
  let results = (outs Tandem_Tensor:$result);
  // The device comes last: a dialect attribute followed by `: type` would
  // read the type as its own.
  let assemblyFormat = "$x `:` type($result) `to` custom<Device>($to) attr-dict";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def Tandem_FusedOp : Tandem_Op<"fused",
    [IsolatedFromAbove, SingleBlock, Tandem_OwnWork,
     Tandem_RunsAs<"Fused", ["writeRuntimeAttrs"]>],
    DeclareOpInterfaceMethods<Tandem_DeviceSupportOpInterface,
                              ["canRunOn", "getGpuWorkspaceBytes"]>> {
  let summary = "a group of elementwise ops run as one generated kernel";
  let description = [{
    `--tandem-fuse` gathers chains of elementwise ops (arithmetic, unary
    functions, NumPy broadcasting of the group's inputs) into one op: its
    body computes the result from the inputs with the ops of the group, and
    `tandem.yield` gives it. The body's values are never materialized: the
    code generator evaluates the whole body per output element in one loop
    (vectorized on the CPU), so the group reads its inputs once, writes its
    result once and is one launch.

    A group may start with a GEMM or a convolution (`tandem::isEpilogueProducer`:
    `linear`, `matmul`, `conv2d` on f32) whose operands are the block's
    arguments: the runtime runs its prebuilt kernel into the group's result
    buffer, and the generated kernel applies the rest of the body (the
    epilogue: bias, activation, residual add, scaling) in place, reading the
    product from that buffer.

    The body may read its inputs through view ops (`reshape`, `transpose`,
    `slice`, `broadcast_to`), each reading a block argument or another view:
    the kernel reads the input through them without materializing anything,
    so a chain of views that another op reads must be one strided access of
    the input (`tandem::composeViews`). A group may hold views alone: it
    copies its input through them, and its chain need only be strided over
    a refinement of the result's shape (attention's `[B, S, H, D]` head
    split into `[B*H, S, D]`).

    The body's other ops all have the result's shape; only the inputs and
    views of them may broadcast to it (inputs the producer alone reads have
    shapes of their own). Besides views and the producer, the body holds
    fusible ops alone (`tandem::isFusible`: the float arithmetic and unary
    functions on f32, compares and selects of f32, casts between f32 and
    i1) and f32 fills (`tandem::isFusedConstant`), which broadcast as
    inputs do. The result is f32: masks stay inside. Every input is read by
    an op of the body (each is a kernel parameter and a buffer kept live).
    The code generator
    (`--convert-tandem-to-llvm`) numbers each group's kernel in the
    discardable attribute `tandem.kernel`.

    A group may end with a softmax, log_softmax, l2_normalize or layer_norm
    on f32
    (`tandem::isGroupConsumer`) whose input is the result of the group's
    last elementwise op and whose other operands are inputs: the runtime
    runs its prebuilt kernel in place on the group's result after the
    generated kernel. Or, with no producer, it may end with a reduce_sum,
    reduce_mean, reduce_max or reduce_min on f32 over the trailing axes of
    that result, 1 to 32768 elements an output (`tandem::isRowReduction`):
    the group's result is then the reduction's, the body's other ops have
    the reduction's input's shape, and the values it folds never reach
    memory.

    Placement, transfers, the schedule and memory planning see the group as
    one op: its device is the group's, and it can run where every op of the
    body can.

    Work: the sum of its ops' FLOPs; reads its inputs, writes its result.

    ```mlir
    %y = tandem.fused(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
      %s = tandem.add %a, %c : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
      %r = tandem.relu %s : tensor<4x8xf32>
      tandem.yield %r : tensor<4x8xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Tandem_Tensor>:$inputs);
  let results = (outs Tandem_Tensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $result) $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The body's ops, without the terminator, in order.
    auto getBodyOps() { return getBody().front().without_terminator(); }
    /// The value the body yields.
    ::mlir::Value getYielded();
    /// The GEMM or convolution the group starts with, or null.
    ::mlir::Operation *getProducer();
    /// The normalization (softmax, layer_norm) or row reduction the group
    /// ends with, or null.
    ::mlir::Operation *getConsumer();
    /// Whether the body holds views alone: the group copies its input
    /// through them, reading it over a refinement of the result's shape
    /// (tandem::ViewReading::Refined).
    bool isViewsOnly();
    /// The value the generated kernel computes (into the result buffer, or
    /// for a reduction into the runtime's scratch): the consumer's input
    /// where there is a consumer, else the yielded value.
    ::mlir::Value getKernelValue();
    /// Whether input `index` is read by the elementwise ops (per element,
    /// broadcast to the result), not by the producer or consumer alone.
    bool isReadPerElement(unsigned index);
  }];
}

def Tandem_YieldOp : Op<Tandem_Dialect, "yield",
    [Pure, Terminator, HasParent<"FusedOp">]> {
  let summary = "the result of a fused group's body";
  let arguments = (ins Tandem_Tensor:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// Schedule
//===----------------------------------------------------------------------===//

// Not a Tandem_Op: it computes nothing, runs on no device and must not be
// erased as dead (it has no result, and no declared effect keeps it).
def Tandem_WaitOp : Op<Tandem_Dialect, "wait"> {
  let summary = "a queue waits until the ops producing some values complete";
  let description = [{
    In a scheduled function (`--tandem-schedule`), the ops after this one on
    `queue` start only once the ops that produce `values` (on other queues)
    have completed: the values are the producers' completion tokens, as a
    `!gpu.async.token` is a GPU op's. On a GPU this is an event recorded
    after each producer and waited for by the queue's stream. A wait names
    values defined above it, so waits follow block order and cannot form a
    cycle; one for a value defined below it is refused as a use that its
    definition does not dominate.

    ```mlir
    tandem.wait <gpu> for %x, %w : tensor<64x512xf32>, tensor<512x512xf32>
    ```
  }];
  let arguments = (ins Tandem_QueueAttr:$queue,
                   Variadic<Tandem_Tensor>:$values);
  let assemblyFormat = [{
    custom<Queue>($queue) `for` $values attr-dict `:` type($values)
  }];
  let hasVerifier = 1;
}

#endif // TANDEM_DIALECT_TANDEM_IR_TANDEMOPS_TD
