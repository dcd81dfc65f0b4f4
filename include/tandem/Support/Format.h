//===- Format.h - how Tandem prints locations, sizes and times --*- C++ -*-===//

#ifndef TANDEM_SUPPORT_FORMAT_H
#define TANDEM_SUPPORT_FORMAT_H

#include "mlir/IR/Location.h"

#include <cstdint>
#include <string>

namespace mlir::tandem {

/// `file:line:col` of the first file location inside `loc`, else "-".
std::string formatLocation(Location loc);

/// 1536 → "1.50 KiB".
std::string formatBytes(int64_t bytes);

} // namespace mlir::tandem

#endif // TANDEM_SUPPORT_FORMAT_H
