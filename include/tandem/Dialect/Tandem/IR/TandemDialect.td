//===- TandemDialect.td - The tandem dialect ---------------*- tablegen -*-===//
//
// The dialect definition; the op base classes live in TandemOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_TANDEM_IR_TANDEMDIALECT_TD
#define TANDEM_DIALECT_TANDEM_IR_TANDEMDIALECT_TD

include "mlir/IR/OpBase.td"

def Tandem_Dialect : Dialect {
  let name = "tandem";
  let cppNamespace = "::mlir::tandem";
  let summary = "Tensor ops placed on CPU and GPU under a memory budget";
  let description = [{
    The `tandem` dialect describes a model as a function `@main` over ranked,
    statically shaped builtin tensors. Every op carries two contracts used by
    placement: a work estimate (FLOPs, bytes read, bytes written) and device
    support (which devices can run it, which operands it reads on the host).

    Two discardable attributes are understood on any op:
    `tandem.device = #tandem.device<...>`, where the op runs (written by
    `--tandem-place`), and `tandem.pin = #tandem.device<...>`, the user's fixed
    choice. Both are verified: the value must be a `#tandem.device` and the op
    must be able to run there.

    The placement passes record their results in more discardable
    attributes, each a non-negative i64: `tandem.offset` (an op's buffer
    offset in its device's arena), `tandem.workspace_offset` (where a GPU
    op's workspace is in the GPU arena), and on functions
    `tandem.gpu_memory_budget`, `tandem.cpu_arena_bytes` and
    `tandem.gpu_arena_bytes`.

    `--tandem-schedule` writes `tandem.queue = #tandem.queue<...>` on every
    op and the unit attribute `tandem.scheduled` on the function; the
    verifier then checks the schedule (docs/schedule.md).
  }];

  // `tandem.shape` folds to an `arith.constant`.
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  // Inherent attributes live in the attribute dictionary, so the generic form
  // is `"tandem.softmax"(%x) {axis = 1 : i64}` exactly as the IR contract and
  // the Python exporter write it.
  let usePropertiesForAttributes = 0;

  let extraClassDeclaration = [{
    /// Names of the discardable attributes this dialect understands.
    static constexpr ::llvm::StringLiteral kDeviceAttrName = "tandem.device";
    static constexpr ::llvm::StringLiteral kPinAttrName = "tandem.pin";
    /// Written by --tandem-place on each function: the budget it placed for.
    static constexpr ::llvm::StringLiteral kGpuMemoryBudgetAttrName =
        "tandem.gpu_memory_budget";
    /// Written by --tandem-plan-memory: an op's buffer offset in its
    /// device's arena, and each function's arena sizes.
    static constexpr ::llvm::StringLiteral kOffsetAttrName = "tandem.offset";
    /// Written by --tandem-plan-memory on a GPU op with a workspace
    /// (DeviceSupportOpInterface::getGpuWorkspaceBytes): its arena offset.
    static constexpr ::llvm::StringLiteral kWorkspaceOffsetAttrName =
        "tandem.workspace_offset";
    /// Written by --tandem-schedule: the queue an op runs on, and on the
    /// function the unit attribute that makes the verifier check the
    /// schedule (every cross-queue read waits for its producer).
    static constexpr ::llvm::StringLiteral kQueueAttrName = "tandem.queue";
    static constexpr ::llvm::StringLiteral kScheduledAttrName =
        "tandem.scheduled";
    static constexpr ::llvm::StringLiteral kCpuArenaBytesAttrName =
        "tandem.cpu_arena_bytes";
    static constexpr ::llvm::StringLiteral kGpuArenaBytesAttrName =
        "tandem.gpu_arena_bytes";
    /// Written by --convert-tandem-to-llvm on a tandem.fused: the index of
    /// its generated kernel in the model's kernel table.
    static constexpr ::llvm::StringLiteral kKernelAttrName = "tandem.kernel";
    /// Written by --tandem-fold-at-load: on a tandem.weight, the index of
    /// the result of the at-load function that computes it (a subgraph on
    /// weights computed once, when the weights are loaded); on that
    /// function, the symbol of the function whose weights it computes.
    static constexpr ::llvm::StringLiteral kFoldedAttrName = "tandem.folded";
    static constexpr ::llvm::StringLiteral kAtLoadAttrName = "tandem.at_load";
  }];
}

#endif // TANDEM_DIALECT_TANDEM_IR_TANDEMDIALECT_TD
