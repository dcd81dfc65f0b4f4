//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reads and writes NumPy's .npy format (versions 1.0, 2.0 and 3.0), little
// endian, C order, for the element types of the IR contract: <f4, <f2, <i8,
// <i4 and |b1. Anything else is rejected with a message that names the
// problem: NumPy has no bfloat16, big-endian and Fortran-order arrays are not
// accepted, a header or data that is cut short is reported as such.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_NPY_H
#define TANDEM_RUNTIME_NPY_H

#include "tandem/runtime/Tensor.h"

#include <string>
#include <vector>

namespace tandem::rt {

struct NpyArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

/// Parses the bytes of an .npy file; on failure returns false and sets
/// `error` (without the file name).
bool parseNpy(const uint8_t *bytes, size_t size, NpyArray &array,
              std::string &error);

/// Reads `path`; on failure returns false with `error` naming the file.
bool readNpy(const std::string &path, NpyArray &array, std::string &error);

/// The bytes of an .npy file (version 1.0) holding `data`.
std::vector<uint8_t> encodeNpy(DType dtype, const std::vector<int64_t> &shape,
                               const void *data);

/// Writes `path`; on failure returns false with `error`.
bool writeNpy(const std::string &path, DType dtype,
              const std::vector<int64_t> &shape, const void *data,
              std::string &error);

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_NPY_H
