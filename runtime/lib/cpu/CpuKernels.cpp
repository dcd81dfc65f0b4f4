//===- CpuKernels.cpp - the CPU backend's dispatch ------------------------===//
//
// Every op of the IR contract on the CPU, through a table of kernels indexed
// by kind that each family's file fills (OpKinds.def names the family of
// each kind). f16 and bf16 compute in f32 here, for every family but data
// movement: the operands are widened and the result rounded to nearest
// even, as PyTorch's CPU kernels do for most ops; data movement copies
// elements of any size as they are.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "CpuSupport.h"

using namespace tandem::rt;
using namespace tandem::rt::cpu;

namespace {

/// Built on first use; holds only function pointers, so nothing runs when
/// a model's library is unloaded.
const CpuKernelTable &kernelTable() {
  static const CpuKernelTable table = [] {
    CpuKernelTable table{};
    registerDataMovementKernels(table);
    registerElementwiseKernels(table);
    registerGemmKernels(table);
    registerConvKernels(table);
    registerNormKernels(table);
    registerReduceKernels(table);
    return table;
  }();
  return table;
}

CpuKernel kernelOf(int64_t kind) {
  return kind >= 0 && kind < img::kNumOpKinds ? kernelTable()[kind] : nullptr;
}

} // namespace

bool tandem::rt::hasCpuKernel(int64_t kind) { return kernelOf(kind); }

FusedParts tandem::rt::fusedParts(const std::vector<TensorView> &operands,
                                  const TensorView &result,
                                  const std::vector<int64_t> &attrs) {
  auto fused = img::readAttrs<img::FusedAttrs>(attrs);
  FusedParts parts;
  size_t at = img::wordCount<img::FusedAttrs>();
  // The operand indices, then the kind's attribute words (all of the rest
  // where nothing follows).
  auto read = [&](int64_t kind, int64_t count, bool last,
                  std::vector<TensorView> operandsFirst) {
    FusedPart part{kind, std::move(operandsFirst), {}, {}};
    part.sources.assign(part.operands.size(), -1); // the result
    for (int64_t k = 0; k < count; ++k) {
      int source = int(attrs[at++]);
      part.operands.push_back(operands[source]);
      part.sources.push_back(source);
    }
    size_t end = last ? attrs.size() : at + size_t(img::attrWordCount(kind));
    part.attrs.assign(attrs.begin() + at, attrs.begin() + end);
    at = end;
    return part;
  };
  bool hasConsumer = fused.consumerKind >= 0;
  if (fused.producerKind >= 0)
    parts.producer =
        read(fused.producerKind, fused.producerOperands, !hasConsumer, {});
  if (hasConsumer)
    parts.consumer =
        read(fused.consumerKind, fused.consumerOperands, true, {result});
  return parts;
}

void tandem::rt::bindFusedParts(FusedParts &parts,
                                const std::vector<TensorView> &operands,
                                const TensorView &result) {
  for (std::optional<FusedPart> *part : {&parts.producer, &parts.consumer})
    if (*part)
      for (size_t k = 0; k < (*part)->operands.size(); ++k) {
        int source = (*part)->sources[k];
        (*part)->operands[k].data =
            source < 0 ? result.data : operands[source].data;
      }
}

bool tandem::rt::runFusedGroup(img::FusedKernel kernel,
                               const std::vector<TensorView> &operands,
                               const TensorView &result,
                               const std::vector<int64_t> &attrs,
                               const FusedParts &parts, std::string &error) {
  auto fused = img::readAttrs<img::FusedAttrs>(attrs);
  constexpr size_t kInline = 16;
  void *inlinePointers[kInline];
  std::vector<void *> heapPointers;
  void **pointers = inlinePointers;
  if (operands.size() > kInline) {
    heapPointers.resize(operands.size());
    pointers = heapPointers.data();
  }
  for (size_t k = 0; k < operands.size(); ++k)
    pointers[k] = operands[k].data;
  // A reduction at the end folds what the kernel computes, a block of rows
  // at a time from scratch: the kernel writes element i of its values at
  // out + i, so `into` (element `begin`) is passed as that base.
  if (parts.consumer && img::isFusedReduction(parts.consumer->kind)) {
    reduceComputedRows(
        parts.consumer->kind, countOf(result.shape), parts.consumer->attrs[0],
        fused.costPerElement, static_cast<float *>(result.data),
        [&](int64_t begin, int64_t end, float *into) {
          auto base = reinterpret_cast<uintptr_t>(into) -
                      uintptr_t(begin) * sizeof(float);
          kernel(pointers, reinterpret_cast<void *>(base), begin, end);
        });
    return true;
  }
  BlockEpilogue epilogue = [&](int64_t begin, int64_t end) {
    kernel(pointers, result.data, begin, end);
  };
  // The generated kernel runs on each block of the GEMM or convolution as
  // soon as it is written (f32 groups only: the only ones that fuse).
  int64_t producerKind = parts.producer ? parts.producer->kind : -1;
  bool blocked = result.dtype == DType::F32 &&
                 (producerKind == img::kLinear || producerKind == img::kMatmul ||
                  producerKind == img::kConv2d);
  if (blocked) {
    const FusedPart &producer = *parts.producer;
    bool done = producerKind == img::kConv2d
                    ? conv2dWithEpilogue(producer.operands, result,
                                         producer.attrs, &epilogue, error)
                    : gemmWithEpilogue(producerKind, producer.operands, result,
                                       producer.attrs, &epilogue, error);
    if (!done)
      return false;
  } else {
    if (parts.producer &&
        !runCpuKernel(parts.producer->kind, parts.producer->operands, result,
                      parts.producer->attrs, error))
      return false;
    parallelFor(countOf(result.shape), fused.costPerElement,
                [&](int64_t begin, int64_t end) { epilogue(begin, end); });
  }
  return !parts.consumer ||
         runCpuKernel(parts.consumer->kind, parts.consumer->operands, result,
                      parts.consumer->attrs, error);
}

bool tandem::rt::runCpuKernel(int64_t kind,
                              const std::vector<TensorView> &operands,
                              const TensorView &result,
                              const std::vector<int64_t> &attrs,
                              std::string &error) {
  CpuKernel kernel = kernelOf(kind);
  if (!kernel) {
    error = std::string("no CPU kernel for op kind ") + img::kindName(kind);
    return false;
  }
  if (img::familyOf(kind) == img::KernelFamily::DataMovement)
    return kernel(kind, operands, result, attrs, error);
  bool widen = isHalf(result.dtype);
  for (const TensorView &operand : operands)
    widen |= isHalf(operand.dtype);
  if (!widen)
    return kernel(kind, operands, result, attrs, error);
  // f16/bf16: compute in f32, round the result back.
  std::vector<std::vector<float>> storage;
  std::vector<TensorView> wide;
  for (const TensorView &operand : operands) {
    if (!isHalf(operand.dtype)) {
      wide.push_back(operand);
      continue;
    }
    uint64_t n = countOf(operand.shape);
    storage.emplace_back(n);
    for (uint64_t i = 0; i < n; ++i)
      storage.back()[i] = float(loadDouble(operand.dtype, operand.data, i));
    wide.push_back({DType::F32, operand.shape, storage.back().data()});
  }
  TensorView out = result;
  std::vector<float> wideResult;
  if (isHalf(result.dtype)) {
    wideResult.resize(countOf(result.shape));
    out = {DType::F32, result.shape, wideResult.data()};
  }
  if (!kernel(kind, wide, out, attrs, error))
    return false;
  if (isHalf(result.dtype))
    for (uint64_t i = 0; i < wideResult.size(); ++i)
      storeDouble(result.dtype, result.data, i, wideResult[i]);
  return true;
}
