//===- Format.cpp - how Tandem prints locations, sizes and times ----------===//

#include "tandem/Analysis/Format.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

std::string tandem::formatLocation(Location loc) {
  std::string text = "-";
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      text = llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(),
                           file.getLine(), file.getColumn());
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

std::string tandem::formatBytes(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = bytes;
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? llvm::formatv("{0} B", bytes).str()
                   : llvm::formatv("{0:F2} {1}", value, units[unit]).str();
}
