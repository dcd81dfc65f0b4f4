//===- Tensor.cpp - element types and shapes ------------------------------===//

#include "tandem/runtime/Tensor.h"

using namespace tandem::rt;

size_t tandem::rt::dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I64:
    return 8;
  case DType::Bool:
    return 1;
  }
  return 1;
}

const char *tandem::rt::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I64:
    return "i64";
  case DType::I32:
    return "i32";
  case DType::Bool:
    return "i1";
  }
  return "?";
}

std::optional<uint64_t>
tandem::rt::elementCount(const std::vector<int64_t> &shape, uint64_t limit) {
  uint64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return std::nullopt;
    if (dim != 0 && count > limit / uint64_t(dim))
      return std::nullopt;
    count *= uint64_t(dim);
  }
  return count;
}

std::string tandem::rt::formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}
