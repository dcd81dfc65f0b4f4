//===- Generated.cpp - the model's own GPU kernels (fused groups) ---------===//
//
// A model with fused groups on the GPU carries their kernels as PTX
// (tandem_fused_N, one per group, N its index in the kernel table). The
// CUDA runtime loads it as a library when the model starts (the driver
// compiles the PTX for the GPU at hand, once) and launches a group's kernel
// like any other: on the device's stream, a grid-stride loop of one thread
// per element.
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.h"

#include <string>

using namespace tandem::rt;
using namespace tandem::rt::cuda;
namespace img = tandem::image;

bool cuda::loadGeneratedKernels(Device *device, const std::string &ptx,
                                const std::vector<int64_t> &onGpu,
                                int64_t numKernels, std::string &error) {
  OnDevice onDevice;
  if (!check(cudaLibraryLoadData(&device->generated, ptx.c_str(), nullptr,
                                 nullptr, 0, nullptr, nullptr, 0),
             "loading the model's generated GPU kernels (PTX)", error))
    return false;
  device->generatedKernels.assign(numKernels, nullptr);
  for (int64_t index : onGpu) {
    std::string name = "tandem_fused_" + std::to_string(index);
    if (!check(cudaLibraryGetKernel(&device->generatedKernels[index],
                                    device->generated, name.c_str()),
               ("finding generated kernel " + name).c_str(), error))
      return false;
  }
  return true;
}

namespace {

/// The group's producer, if any, then kernel(input0, ..., result, count),
/// which reads the product from the result and writes the epilogue over it
/// (count: the result's elements; where the group ends in a reduction, its
/// outputs).
bool launchFused(const KernelCall &call) {
  auto attrs = img::readAttrs<img::FusedAttrs>(call.attrs);
  const std::vector<cudaKernel_t> &kernels = call.device.generatedKernels;
  if (attrs.kernel < 0 || size_t(attrs.kernel) >= kernels.size() ||
      !kernels[attrs.kernel]) {
    call.error = "generated kernel " + std::to_string(attrs.kernel) +
                 " is not in the model's PTX";
    return false;
  }
  // The GEMM or convolution first, into the result.
  FusedParts parts = fusedParts(call.ops, call.out, call.attrs);
  if (parts.producer &&
      !runKernel(&call.device, parts.producer->kind, parts.producer->operands,
                 call.out, parts.producer->attrs, call.error))
    return false;
  if (call.n == 0)
    return true;
  std::vector<void *> pointers;
  for (const TensorView &operand : call.ops)
    pointers.push_back(operand.data);
  pointers.push_back(call.out.data);
  int64_t count = call.n;
  std::vector<void *> arguments;
  for (void *&pointer : pointers)
    arguments.push_back(&pointer);
  arguments.push_back(&count);
  // A group that ends in a reduction folds each output with a warp (its
  // kernel's shuffles need whole warps).
  static_assert(kThreadsPerBlock % img::kFusedReductionThreads == 0,
                "blocks of whole warps");
  bool reduces = parts.consumer && img::isFusedReduction(parts.consumer->kind);
  dim3 grid = reduces ? blocksFor(count * img::kFusedReductionThreads) : call.grid;
  if (!check(cudaLaunchKernel(
                 reinterpret_cast<const void *>(kernels[attrs.kernel]),
                 grid, call.block, arguments.data(), 0, call.stream()),
             "launching a generated kernel", call.error))
    return false;
  // The normalization last, in place on the same stream (its kernels read
  // each element before writing it, and only their own row's). A reduction
  // is the generated kernel's own: a warp folds each output.
  return !parts.consumer || reduces ||
         runKernel(&call.device, parts.consumer->kind,
                   parts.consumer->operands, call.out, parts.consumer->attrs,
                   call.error);
}

} // namespace

void cuda::registerGeneratedKernels(CudaKernelTable &table) {
  table.add(img::kFused, launchFused);
}
