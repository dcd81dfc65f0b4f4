//===- TandemShapes.h - shape rules shared by the dialect -------*- C++ -*-===//
//
// The handful of shape rules several ops (and later the runtime lowering)
// share: NumPy broadcasting, PyTorch-style negative axes, byte sizes.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_TANDEM_IR_TANDEMSHAPES_H
#define TANDEM_DIALECT_TANDEM_IR_TANDEMSHAPES_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::tandem {

/// The NumPy broadcast of two shapes, or std::nullopt when they clash.
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// True if `from` broadcasts to exactly `to` (right-aligned, each of `from`'s
/// dimensions 1 or equal).
bool isBroadcastableTo(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to);

/// `axis` in [-rank, rank) mapped to [0, rank), or std::nullopt if outside.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// "[4, 3]", for diagnostics.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Bytes one element of `elementType` occupies in memory (i1 takes a byte).
int64_t getElementByteSize(Type elementType);

/// The most bytes one tensor may occupy: 2^48 (256 TiB), beyond any
/// machine's memory and far from where sizes and offsets overflow int64.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;

/// Number of elements of a statically shaped type (1 for a scalar);
/// INT64_MAX if the product overflows.
int64_t getNumElements(Type type);

/// Bytes a statically shaped tensor or scalar occupies (0 for other types);
/// INT64_MAX if that overflows.
int64_t getNumBytes(Type type);

/// getNumBytes, or std::nullopt if the type takes more than
/// kMaxTensorBytes (or its size overflows).
std::optional<int64_t> getCheckedNumBytes(Type type);

} // namespace mlir::tandem

#endif // TANDEM_DIALECT_TANDEM_IR_TANDEMSHAPES_H
