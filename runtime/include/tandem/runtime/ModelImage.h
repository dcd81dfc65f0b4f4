//===- ModelImage.h - what tandem-compile tells the runtime -----*- C++ -*-===//
//
// A compiled model carries a "model image": an array of int64 words that
// describes its inputs, outputs, weights and every op (kind, device, shapes,
// attributes), and a table of NUL-terminated strings (names, locations). The
// compiled code calls the runtime once per op with the op's index and its
// buffers; the runtime reads the rest from the image. This header is shared
// by the compiler (which writes images) and the runtime (which reads them);
// it depends on nothing but the C++ standard library.
//
// Layout (version 11):
//   kMagic, version, numInputs, numOutputs, numWeights, numOps,
//   cpuArenaBytes, gpuArenaBytes, gpuBudgetBytes, scheduled,
//   predictedMakespanNs, predictedSerialNs, numKernels, ptxOffset,
//   atLoadOffset,
//   numInputs  x tensor,
//   numOutputs x tensor,
//   numWeights x (nameOffset, device, arenaOffset, folded, tensor),
//   numOps     x (wordCount, kind, device, arenaOffset, nameOffset, locOffset,
//                 familyOffset, queue, predictedNs, numWaits, numWaits x op,
//                 numOperands, numOperands x (device, producer, tensor),
//                 result tensor, numAttrs, numAttrs x word)
// where tensor = (dtype, rank, rank x dim). The kinds and the layout of
// each kind's attribute words are in OpKinds.def and ImageAttrs.h. An op's
// arenaOffset is where its result lives in its device's arena (what the
// runtime names when a budget refuses the plan). In a scheduled model
// (scheduled = 1) each op names its queue (Queue) and the earlier ops its
// queue waits for before it starts; an operand's producer is the earlier op
// whose result it reads (through views), or -1 for an input or a weight.
// The predicted times (nanoseconds, 0 when the model was compiled without a
// device profile) are the compiler's cost model: each op's time on its
// device or link, and the schedule's makespan and serial sum; the sim
// backend paces ops to them with --sim-timing=profile, and the profile
// prints them beside what was measured, per op, per op kind and per the
// cost model's op family (familyOffset: "gemm", "conv_depthwise", ...,
// "transfer"). numKernels counts the generated kernels of fused groups
// (kFused ops name theirs by index): the compiled model hands the runtime a
// table of that many CPU entry points (FusedKernel). ptxOffset is the string
// holding the PTX of the GPU-placed groups' kernels (named tandem_fused_N
// after their index), or -1 when no group is on the GPU.
// atLoadOffset is the word at which the image of the model's at-load
// function starts (laid out as this one, its atLoadOffset -1), or -1 when
// it has none: the subgraphs on weights the compiler moved out of the model
// (--tandem-fold-at-load), run once when the weights are loaded. A weight
// whose `folded` is K >= 0 is not read from the weights file: it is result
// K of the at-load function.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_MODELIMAGE_H
#define TANDEM_RUNTIME_MODELIMAGE_H

#include "tandem/runtime/ImageAttrs.h"

#include <cstdint>

namespace tandem::image {

constexpr int64_t kMagic = 0x54414e44454d494dLL; // "TANDEMIM"
constexpr int64_t kVersion = 11;

/// Header words the compiler patches after laying out the image.
constexpr int64_t kNumKernelsWord = 12;
constexpr int64_t kAtLoadOffsetWord = 14;
constexpr int64_t kHeaderWords = 15;

/// A fused group's generated CPU kernel: computes the result's elements
/// [begin, end) (row-major) from the operands' buffers.
using FusedKernel = void (*)(void *const *operands, void *result,
                             int64_t begin, int64_t end);

/// The highest tensor rank the GPU kernels take (their layouts hold this
/// many dimensions): placement keeps ops on higher-rank tensors on the CPU.
constexpr int kMaxGpuRank = 8;

/// Devices, as the image and the ABI number them.
enum Device : int64_t { kCpu = 0, kGpu = 1 };

/// Queues of a schedule, as the image numbers them (the dialect's QueueKind).
enum Queue : int64_t { kCpuQueue = 0, kGpuQueue, kH2DQueue, kD2HQueue, kNumQueues };

/// Element types (the runtime's DType values).
enum ElementType : int64_t { kF32 = 0, kF16, kBF16, kI64, kI32, kBool };

/// Op kinds the runtime executes (OpKinds.def lists them, with their
/// attributes).
enum OpKind : int64_t {
#define TANDEM_OP_KIND(Name, Family, Attrs) k##Name,
#include "tandem/runtime/OpKinds.def"
  kNumOpKinds
};

/// The kernel families, one file of kernels per backend each.
enum class KernelFamily {
  DataMovement,
  Elementwise,
  Gemm,
  Conv,
  Norm,
  Reduce,
  Generated // the model's own kernels, from its kernel table
};

/// The family of a kind below kNumOpKinds.
inline KernelFamily familyOf(int64_t kind) {
  static constexpr KernelFamily families[] = {
#define TANDEM_OP_KIND(Name, Family, Attrs) KernelFamily::Family,
#include "tandem/runtime/OpKinds.def"
  };
  return families[kind];
}

/// The kind's name as the runtime prints it ("Conv2d").
inline const char *kindName(int64_t kind) {
  static constexpr const char *names[] = {
#define TANDEM_OP_KIND(Name, Family, Attrs) #Name,
#include "tandem/runtime/OpKinds.def"
  };
  return kind >= 0 && kind < kNumOpKinds ? names[kind] : "unknown";
}

/// How many attribute words a kind below kNumOpKinds takes; -1 for a list.
inline int64_t attrWordCount(int64_t kind) {
  static constexpr int64_t counts[] = {
#define TANDEM_OP_KIND(Name, Family, Attrs) wordCount<Attrs>(),
#include "tandem/runtime/OpKinds.def"
  };
  return counts[kind];
}

/// Whether a fused group's consumer of `kind` is a reduction: the group's
/// result is the reduction's, and its kernel's values never reach memory
/// (the CPU folds them a block of rows at a time from scratch; the GPU's
/// kernel folds them itself).
inline bool isFusedReduction(int64_t kind) {
  return kind == kReduceSum || kind == kReduceMean || kind == kReduceMax ||
         kind == kReduceMin;
}

/// The GPU threads that fold one output of a fused group's reduction: a
/// warp, whose lanes' folds its kernel combines by shuffles (so a launch's
/// blocks hold whole warps).
constexpr int64_t kFusedReductionThreads = 32;

} // namespace tandem::image

#endif // TANDEM_RUNTIME_MODELIMAGE_H
