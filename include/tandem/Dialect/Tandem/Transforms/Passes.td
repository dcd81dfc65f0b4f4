//===- Passes.td - tandem passes ---------------------------*- tablegen -*-===//

#ifndef TANDEM_DIALECT_TANDEM_TRANSFORMS_PASSES_TD
#define TANDEM_DIALECT_TANDEM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PrintWork : Pass<"tandem-print-work", "::mlir::ModuleOp"> {
  let summary = "Print each op's work estimate and the devices that can run it";
  let description = [{
    For every function, prints one row per op that implements the work and
    device contracts: its index in program order, name, source location,
    FLOPs, bytes read, bytes written, the bytes its results occupy (for a
    weight, its resident memory), the devices that can run it and the
    operands it reads on the host; then the totals. The IR is unchanged.

    This is what the cost model sees before any placement decision.
  }];
}

def SinkSources : Pass<"tandem-sink-sources"> {
  let summary = "Move each op without operands to just before its first user";
  let description = [{
    Weights, fills, iotas and constants have no operands and no side
    effects, so where they sit in the block is free; exporters put all of a
    model's weights at the top. Placement copies a value right after its
    producer, so a weight streamed to the GPU from the top would hold GPU
    memory from the start of the run to its first user. This pass moves
    every such op to just before its first user in the same block (those of
    one user keep their order), so a streamed weight is copied just in time
    and a fill lives only as long as it is needed. Ops without users stay.
    `--tandem-place` runs it, with canonicalization and CSE, before it
    prices a function.
  }];
}

def FoldAtLoad : Pass<"tandem-fold-at-load", "::mlir::ModuleOp"> {
  let summary = "Compute the subgraphs on weights once, when the weights are "
                "loaded";
  let description = [{
    An op whose operands all follow from weights, fills and iotas (through
    reshapes) computes the same tensor in every run: a transposed weight, a
    batch norm's scale and shift, a causal mask, a position embedding looked
    up at `iota` ids. For each model function, this pass moves those ops
    into a new function, `@NAME_at_load` (no arguments; marked
    `tandem.at_load = @NAME`; every op placed on the CPU), which returns the
    values the model reads, and makes each of them a `tandem.weight` of the
    model carrying `tandem.folded = K`, the index of the at-load function's
    result it is. The runtime runs the at-load function once, after it
    reads the weights and before the first run; placement then sees folded
    values as the weights they are (resident on the GPU or streamed), and
    the model's runs no longer compute them.

    An op is left in the model where it is pinned or placed, cannot run on
    the CPU, or where a value it would hand the model is larger than both
    1 MiB and the weights it is computed from (a broadcast of a bias to a
    whole activation is cheaper to compute than to keep).
  }];
  let dependentDialects = ["::mlir::tandem::TandemDialect"];
}

def Fuse : Pass<"tandem-fuse"> {
  let summary = "Group chains of elementwise ops into tandem.fused ops";
  let description = [{
    Runs before placement, so that placement, transfers, the schedule and
    memory planning see each group as one op whose body's values take no
    memory. Walking each block from its end, every fusible op
    (`tandem::isFusible`: float arithmetic and unary functions on f32,
    compares and selects of f32, casts between f32 and i1) that gives f32
    and is not yet in a group starts one, and the group takes in the producers
    of its operands that are fusible, have the group's shape (a smaller
    operand is broadcast when read, never recomputed per element), are read
    by the group's ops alone (a value read elsewhere is materialized, so its
    producer stays out) and carry the same `tandem.pin` as the group (the
    group keeps it). A GEMM or convolution (`tandem::isEpilogueProducer`)
    may join as the group's producer, one per group: the elementwise ops
    after it become its epilogue, and its operands stay the group's inputs.
    A softmax, log_softmax, l2_normalize or layer norm
    (`tandem::isGroupConsumer`) roots a group that
    it ends, kept where a fusible op computing its input joins; so does a
    reduction over trailing axes (`tandem::isRowReduction`), whose group has
    its input's shape and takes no GEMM or convolution. The
    elementwise ops read their operands through the chains of views that
    end in them (`tandem::composeViews`: the longest end of a chain that is
    one strided access), cloned into the body, and compute the f32 fills
    they read in the body (`tandem::isFusedConstant`). A group of one op is
    left as it is, unless it reads through a view that would copy or a fill
    nothing else reads. Then every chain
    of views still read by a non-view op, holding two or more views that
    copy, becomes a group of views alone; views and fills nothing reads are
    erased.

    The group is built where its last op was: its inputs are the values its
    ops read from outside, in order of first use, and its body holds its ops
    in their order. The ops' locations are fused into the group's.
  }];
  let dependentDialects = ["::mlir::tandem::TandemDialect"];
}

def Place : Pass<"tandem-place", "::mlir::ModuleOp"> {
  let summary = "Choose the CPU or the GPU for every op, under a GPU memory "
                "budget";
  let description = [{
    Prices every op on each device from the device profile (a roofline plus
    dispatch overhead) and every value's transfer in each direction, then
    picks a device per op with the chosen strategy and writes it as
    `tandem.device`. Pins (`tandem.pin`) are honoured; no op is put where it
    cannot run. The budget bounds the GPU arena the placement's buffers are
    laid out in (as --tandem-plan-memory lays them out): resident weights,
    activations, streamed weights and copies alike, each rounded up to 64
    bytes.

    It prices the program that will be emitted: before placing a function it
    folds it (canonicalize), merges duplicate ops (CSE) and moves each
    weight, fill and constant to its first reader (--tandem-sink-sources), so
    nothing after it changes what its report describes. A function that is
    already placed (its ops carry `tandem.device`, or it has
    `tandem.transfer` ops) keeps its devices; it is priced and checked
    against the budget.

    Strategies: `auto` (default; a minimum cut when the budget does not bind;
    otherwise the fastest of a budget-independent frontier of placements,
    which never gets slower with more memory, or the optimum when branch and
    bound proves it where at most 64 ops are free to move), `exact` (branch and bound,
    provably optimal under the budget, for graphs with up to 64 ops free to
    move), and the baselines `mincut` (ignores the budget), `greedy`
    (program order onto the GPU while the weights fit, as accelerate's
    infer_auto_device_map), `all-cpu`, `all-gpu`.

    The objective (`objective=`) is what `auto` and `exact` minimize. With
    `makespan` (default) a placement is priced by the schedule
    --tandem-schedule will make of it, the four queues running at once:
    `auto` starts from the serial answer above and keeps the fastest
    schedule among the frontier's placements within the budget and local
    moves from the best of them; `exact` proves the optimum by branch and
    bound where at most 20 ops are free to move. With `serial`, the sum of every op and copy is minimized,
    as if the program ran one op at a time.

    With `report=FILE` it writes the placement and its predicted cost as JSON
    (docs/placement.md lists the keys); with `explain` it emits a remark per
    op with both costs, the transfers it causes and what bound the choice.
  }];
  let options = [
    Option<"gpuMemory", "gpu-memory", "std::string", /*default=*/"\"\"",
           "GPU memory budget in bytes, with an optional suffix (KiB, MiB, "
           "GiB, ...); default: the profile's GPU memory">,
    Option<"deviceProfile", "device-profile", "std::string", "\"h200\"",
           "Builtin profile (h200, a100-80gb, v100-32gb, host) or the path "
           "of a JSON profile">,
    Option<"strategy", "strategy", "std::string", "\"auto\"",
           "auto, exact, mincut, greedy, all-cpu or all-gpu">,
    Option<"report", "report", "std::string", "\"\"",
           "Write the placement report (JSON) to this file">,
    Option<"explain", "explain", "bool", "false",
           "Emit a remark per op explaining its device">,
    Option<"objective", "objective", "std::string", "\"makespan\"",
           "What auto and exact minimize: makespan (the predicted makespan "
           "of the schedule --tandem-schedule makes, the four queues "
           "running at once) or serial (the sum of every op and copy)">
  ];
  // It creates tandem attributes even in a function with no tandem op, and
  // canonicalization materializes folded constants in arith.
  let dependentDialects = ["::mlir::tandem::TandemDialect", "::mlir::arith::ArithDialect"];
}

def InsertTransfers : Pass<"tandem-insert-transfers", "::mlir::ModuleOp"> {
  let summary = "Make every host/device copy an explicit tandem.transfer";
  let description = [{
    For every value of a placed function and every device it is read on
    other than its own (ordinary operands are read on their op's device;
    host operands and results on the CPU), inserts one `tandem.transfer`
    right after its producer (function arguments: at the top) and makes the
    readers on that device use it. A weight resident on the GPU is not copied
    back for CPU readers: they read the host copy of the weights file, a
    clone of the weight op placed on the CPU (without the user's pin).
    Copies that are already explicit are kept; an op that reads a value on
    another device than the one it is on is an error naming the operand.
  }];
  // It creates tandem attributes even in a function with no tandem op.
  let dependentDialects = ["::mlir::tandem::TandemDialect"];
}

def Schedule : Pass<"tandem-schedule", "::mlir::ModuleOp"> {
  let summary = "Put every op on a queue and make every cross-queue "
                "dependency an explicit wait";
  let description = [{
    Runs after --tandem-insert-transfers. Every op that runs gets
    `tandem.queue`: its device's queue (`cpu`, `gpu`), or for a transfer
    the copy engine of its direction (`h2d`, `d2h`). Each queue runs its ops
    in block order, concurrently with the others; a `tandem.wait` before an
    op makes its queue wait for the ops producing the values it names.

    Every operand produced on another queue is waited for (once: a wait
    already implied by earlier ones is left out). Beyond those, queues that
    share an arena are kept within a window of each other: an op waits for
    the ops of the other queues more than `window` ops before it, so that
    buffers can be reused and a copy is not issued arbitrarily early. How
    far ahead copies run (a streamed weight's prefetch depth) is therefore
    bounded by the window; the pass tries windows from unbounded down to 1
    (the GPU arena's ops in program order, whose memory plan is the one
    placement checked) and keeps the one with the shortest predicted
    makespan whose GPU arena, laid out under the schedule as
    --tandem-plan-memory will, fits the budget (`tandem.gpu_memory_budget`).
    Where the budget refused a wider window, each host-to-device copy then
    gets the widest window of its own that still fits, one copy at a time
    in block order (a chosen window only; a fixed one is kept as given).

    With `report=FILE`, adds the schedule to the placement report in FILE:
    the predicted makespan and serial time, each queue's busy time, the copy
    time hidden under compute, a lower bound on any schedule's makespan and
    every op's queue, start and end (docs/schedule.md).
  }];
  let options = [
    Option<"deviceProfile", "device-profile", "std::string", "\"h200\"",
           "Builtin profile (h200, a100-80gb, v100-32gb, host) or the path "
           "of a JSON profile: the op and copy times the makespan is "
           "predicted with">,
    Option<"report", "report", "std::string", "\"\"",
           "A placement report (JSON, from --tandem-place) to add the "
           "schedule to">,
    Option<"window", "window", "int64_t", "0",
           "Fix the window instead of choosing it (0: choose; a negative "
           "value: unbounded)">
  ];
  // It creates tandem attributes and ops even in a function with no tandem op.
  let dependentDialects = ["::mlir::tandem::TandemDialect"];
}

def PlanMemory : Pass<"tandem-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Give every buffer a static offset in its device's arena";
  let description = [{
    Computes each buffer's lifetime over program order (from the op that
    writes it to its last reader; a weight resident on the GPU lives for the
    whole run); in a scheduled function, from the first op its writer may
    run beside to the last op any of its readers may run beside, in every
    interleaving the waits allow. It then assigns offsets in one arena per device (greedy by size, as
    TFLite's planner) and records them: `tandem.offset` on each op with a
    buffer, `tandem.cpu_arena_bytes` and `tandem.gpu_arena_bytes` on the
    function. Function arguments and weights on the CPU (read from the
    mapped weights file) have no arena buffer. A GPU op with a workspace
    (DeviceSupportOpInterface::getGpuWorkspaceBytes: a convolution's cuDNN
    workspace) gets arena bytes live at that op only, recorded as
    `tandem.workspace_offset`.

    Fails when the GPU arena exceeds the budget (`gpu-memory`, or the
    `tandem.gpu_memory_budget` that --tandem-place recorded), naming the
    peak point and the values alive there.
  }];
  let options = [
    Option<"gpuMemory", "gpu-memory", "std::string", /*default=*/"\"\"",
           "GPU memory budget in bytes, with an optional suffix; default: "
           "the function's tandem.gpu_memory_budget">
  ];
  // It creates tandem attributes even in a function with no tandem op.
  let dependentDialects = ["::mlir::tandem::TandemDialect"];
}

def ViewPlacement : Pass<"tandem-view-placement", "::mlir::ModuleOp"> {
  let summary = "Write a Graphviz picture of the placed graph";
  let description = [{
    Writes the placed function as Graphviz DOT: ops coloured by device
    (CPU blue, GPU green), pinned ops with a bold border, transfers drawn as
    orange edges labelled with their bytes. Works before or after
    --tandem-insert-transfers. After --tandem-schedule, each queue (cpu,
    gpu, h2d, d2h) is a lane, a cluster of its ops in their order, and each
    wait a dotted edge from the op waited for to the op that waits.
    `--tandem-view-placement=FILE` is short for
    `--tandem-view-placement=file=FILE`.
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"-\"",
           "Where to write the DOT text ('-': standard output)">
  ];
  // It creates tandem attributes even in a function with no tandem op.
  let dependentDialects = ["::mlir::tandem::TandemDialect"];
}

#endif // TANDEM_DIALECT_TANDEM_TRANSFORMS_PASSES_TD
