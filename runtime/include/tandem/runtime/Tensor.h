//===- Tensor.h - element types and host tensors of the runtime -*- C++ -*-===//
//
// The runtime is linked into every compiled model: it depends on nothing but
// the C++ standard library (and, per backend, OpenBLAS or CUDA).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_TENSOR_H
#define TANDEM_RUNTIME_TENSOR_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tandem::rt {

/// The element types of the IR contract.
enum class DType : uint8_t { F32, F16, BF16, I64, I32, Bool };

/// Bytes per element (a bool takes one byte).
size_t dtypeSize(DType dtype);

/// "f32", "f16", "bf16", "i64", "i32", "i1": the IR's spelling.
const char *dtypeName(DType dtype);

/// The element count of `shape`, or std::nullopt if it overflows `limit`.
std::optional<uint64_t> elementCount(const std::vector<int64_t> &shape,
                                     uint64_t limit = UINT64_MAX);

/// "[4, 3]".
std::string formatShape(const std::vector<int64_t> &shape);

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_TENSOR_H
