//===- TandemShapes.cpp - shape rules shared by the dialect ---------------===//

#include "tandem/Dialect/Tandem/IR/TandemShapes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <limits>

using namespace mlir;

std::optional<llvm::SmallVector<int64_t>>
tandem::broadcastShapes(llvm::ArrayRef<int64_t> lhs,
                        llvm::ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  llvm::SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned: a missing leading dimension behaves as 1.
    int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    if (l != r && l != 1 && r != 1)
      return std::nullopt;
    result[rank - 1 - i] = l == 1 ? r : l;
  }
  return result;
}

bool tandem::isBroadcastableTo(llvm::ArrayRef<int64_t> from,
                               llvm::ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[offset + i])
      return false;
  return true;
}

std::optional<int64_t> tandem::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::string tandem::formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os);
  os << ']';
  return text;
}

int64_t tandem::getElementByteSize(Type elementType) {
  // i1 masks are stored one per byte.
  return std::max<int64_t>(1, (elementType.getIntOrFloatBitWidth() + 7) / 8);
}

int64_t tandem::getNumElements(Type type) {
  // Ranked tensors first: a type-ID compare, where ShapedType is an
  // interface lookup (this runs for every value on every verification).
  ArrayRef<int64_t> shape;
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    shape = tensor.getShape();
  else if (auto shaped = dyn_cast<ShapedType>(type))
    shape = shaped.getShape();
  else
    return 1;
  int64_t count = 1;
  for (int64_t dim : shape)
    if (dim < 0 || llvm::MulOverflow(count, dim, count))
      return std::numeric_limits<int64_t>::max();
  return count;
}

int64_t tandem::getNumBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  Type elementType =
      tensor ? tensor.getElementType() : getElementTypeOrSelf(type);
  if (!elementType.isIntOrIndexOrFloat())
    return 0;
  int64_t bytes;
  if (llvm::MulOverflow(getNumElements(type), getElementByteSize(elementType),
                        bytes))
    return std::numeric_limits<int64_t>::max();
  return bytes;
}

std::optional<int64_t> tandem::getCheckedNumBytes(Type type) {
  int64_t bytes = getNumBytes(type);
  if (bytes > kMaxTensorBytes)
    return std::nullopt;
  return bytes;
}
