//===- Format.cpp - how Tandem prints locations, sizes and times ----------===//

#include "tandem/Support/Format.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

std::string tandem::formatLocation(Location loc) {
  // A frontend names ops after their module ("layer1.0.conv1") around the
  // source line; show both.
  std::string name, file;
  loc->walk([&](Location inner) {
    if (auto named = dyn_cast<NameLoc>(inner); named && name.empty())
      name = named.getName().str();
    if (auto line = dyn_cast<FileLineColLoc>(inner); line && file.empty())
      file = llvm::formatv("{0}:{1}:{2}", line.getFilename().getValue(),
                           line.getLine(), line.getColumn());
    return WalkResult::advance();
  });
  if (!name.empty() && !file.empty())
    return name + " @ " + file;
  if (!name.empty())
    return name;
  return file.empty() ? "-" : file;
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
