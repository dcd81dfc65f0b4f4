//===- Image.h - the model image as the runtime reads it --------*- C++ -*-===//
//
// The model image (ModelImage.h) decoded once when a model starts: its
// inputs, outputs, weights and ops as records the executor, the loaders and
// the reports read, instead of walking the words again.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_IMAGE_H
#define TANDEM_RUNTIME_LIB_IMAGE_H

#include "tandem/runtime/ModelImage.h"
#include "tandem/runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tandem::rt {

struct TensorDesc {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t bytes() const {
    return elementCount(shape).value_or(0) * dtypeSize(dtype);
  }
};

struct OpRecord {
  int64_t kind = 0, device = 0, arenaOffset = 0;
  std::string name, loc;
  /// The cost model's family of the op ("gemm", ..., "transfer").
  std::string family;
  /// The queue it runs on, and the ops that queue waits for before it.
  int64_t queue = 0;
  /// The compiler's predicted seconds for it (0: not predicted).
  double predictedSeconds = 0;
  std::vector<int64_t> waits;
  std::vector<int64_t> operandDevices;
  /// Per operand, the op whose result it reads, or -1 (input, weight).
  std::vector<int64_t> operandProducers;
  std::vector<TensorDesc> operands;
  TensorDesc result;
  std::vector<int64_t> attrs;
};

struct WeightRecord {
  std::string name;
  int64_t device = 0, arenaOffset = 0;
  /// -1: read from the weights file; K >= 0: result K of the at-load
  /// function.
  int64_t folded = -1;
  TensorDesc tensor;
};

struct Image {
  std::vector<TensorDesc> inputs, outputs;
  std::vector<WeightRecord> weights;
  std::vector<OpRecord> ops;
  int64_t cpuArena = 0, gpuArena = 0, gpuBudget = 0;
  /// The ops carry queues and waits (--tandem-schedule).
  bool scheduled = false;
  /// The compiler's predicted makespan and serial time of one run, seconds
  /// (0: compiled without a device profile).
  double predictedMakespanSeconds = 0, predictedSerialSeconds = 0;
  /// The generated kernels of the model's fused groups.
  int64_t numKernels = 0;
  const image::FusedKernel *kernels = nullptr;
  /// The PTX of the GPU-placed groups' kernels; empty when there are none.
  std::string ptx;
  /// The model's at-load function (the subgraphs on weights, run once when
  /// the weights are loaded), or null.
  std::shared_ptr<const Image> atLoad;
};

/// Reads the image into `image`, or says what is wrong with it. The image
/// was written by the compiler of this same build; the checks catch one
/// from another build or a corrupt binary before a kernel reads past its
/// attributes.
/// `kernels` is the model's table of generated kernels (numKernels entries;
/// may be null when there are none).
bool decodeImage(const int64_t *words, const char *strings,
                 const image::FusedKernel *kernels, Image &image,
                 std::string &error);

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_LIB_IMAGE_H
