//===- ModelImage.h - what tandem-compile tells the runtime -----*- C++ -*-===//
//
// A compiled model carries a "model image": an array of int64 words that
// describes its inputs, outputs, weights and every op (kind, device, shapes,
// attributes), and a table of NUL-terminated strings (names, locations). The
// compiled code calls the runtime once per op with the op's index and its
// buffers; the runtime reads the rest from the image. This header is shared
// by the compiler (which writes images) and the runtime (which reads them);
// it has no dependencies.
//
// Layout (version 2):
//   kMagic, version, numInputs, numOutputs, numWeights, numOps,
//   cpuArenaBytes, gpuArenaBytes, gpuBudgetBytes,
//   numInputs  x tensor,
//   numOutputs x tensor,
//   numWeights x (nameOffset, device, arenaOffset, tensor),
//   numOps     x (wordCount, kind, device, arenaOffset, nameOffset, locOffset,
//                 numOperands, numOperands x (device, tensor), result tensor,
//                 numAttrs, numAttrs x word)
// where tensor = (dtype, rank, rank x dim). Float attributes are stored as
// the bits of a double; axes are normalized (non-negative). An op's
// arenaOffset is where its result lives in its device's arena (what the
// runtime names when a budget refuses the plan).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_MODELIMAGE_H
#define TANDEM_RUNTIME_MODELIMAGE_H

#include <cstdint>

namespace tandem::image {

constexpr int64_t kMagic = 0x54414e44454d494dLL; // "TANDEMIM"
constexpr int64_t kVersion = 2;

/// Devices, as the image and the ABI number them.
enum Device : int64_t { kCpu = 0, kGpu = 1 };

/// Element types (the runtime's DType values).
enum ElementType : int64_t { kF32 = 0, kF16, kBF16, kI64, kI32, kBool };

/// Op kinds the runtime executes. Attributes per kind are listed after it.
enum OpKind : int64_t {
  kTransfer = 0, // (none): copy to the op's device
  kFill,         // value (as double bits)
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMaximum,
  kMinimum,
  kPow,
  kNeg,
  kAbs,
  kExp,
  kLog,
  kSqrt,
  kRsqrt,
  kTanh,
  kSigmoid,
  kRelu,
  kGelu,
  kSilu,
  kMatmul,
  kLinear,  // hasBias
  kReshape,
  kCompare,     // predicate (eq ne lt le gt ge = 0..5)
  kSelect,
  kCast,
  kIota,        // axis
  kConv2d,      // strideH, strideW, padH, padW, dilationH, dilationW, groups, hasBias
  kMaxPool2d,   // kernelH, kernelW, strideH, strideW, padH, padW
  kAvgPool2d,   // kernelH, kernelW, strideH, strideW, padH, padW
  kBatchNorm,   // epsilon
  kSoftmax,     // axis
  kLogSoftmax,  // axis
  kLayerNorm,   // axis, epsilon
  kL2Normalize, // axis, epsilon
  kReduceSum,   // axes...
  kReduceMean,  // axes...
  kReduceMax,   // axes...
  kReduceMin,   // axes...
  kArgmax,      // axis
  kTranspose,   // perm...
  kConcat,      // axis
  kSlice,       // starts..., strides...
  kBroadcastTo,
  kEmbedding,
  kGather,      // axis
  kDynamicSlice,
  kShape,
  kConstant,    // the result's bytes, 8 to a word
  kNumOpKinds
};

} // namespace tandem::image

#endif // TANDEM_RUNTIME_MODELIMAGE_H
