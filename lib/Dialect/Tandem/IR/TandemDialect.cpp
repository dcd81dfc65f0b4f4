//===- TandemDialect.cpp - The tandem dialect -----------------------------===//

#include "tandem/runtime/ModelImage.h"
#include "tandem/Dialect/Tandem/IR/TandemDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemSchedule.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tandem;

#include "tandem/Dialect/Tandem/IR/TandemDialect.cpp.inc"
#include "tandem/Dialect/Tandem/IR/TandemEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "tandem/Dialect/Tandem/IR/TandemAttrs.cpp.inc"

void TandemDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tandem/Dialect/Tandem/IR/TandemOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tandem/Dialect/Tandem/IR/TandemAttrs.cpp.inc"
      >();
}

Operation *TandemDialect::materializeConstant(OpBuilder &builder,
                                              Attribute value, Type type,
                                              Location loc) {
  if (!arith::ConstantOp::isBuildableWith(value, type))
    return nullptr;
  return builder.create<arith::ConstantOp>(loc, type, cast<TypedAttr>(value));
}

LogicalResult TandemDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  if (name == kOffsetAttrName || name == kWorkspaceOffsetAttrName ||
      name == kGpuMemoryBudgetAttrName || name == kKernelAttrName ||
      name == kCpuArenaBytesAttrName || name == kGpuArenaBytesAttrName) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || !value.getType().isSignlessInteger(64) ||
        value.getValue().isNegative())
      return op->emitError() << "'" << name
                             << "' must be a non-negative i64, got "
                             << attr.getValue();
    return success();
  }
  if (name == kQueueAttrName) {
    if (!isa<QueueKindAttr>(attr.getValue()))
      return op->emitError() << "'" << name
                             << "' must be a #tandem.queue attribute, got "
                             << attr.getValue();
    return success();
  }
  if (name == kScheduledAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' is a unit attribute, got "
                             << attr.getValue();
    return verifySchedule(op);
  }
  if (name == kFoldedAttrName) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<WeightOp>(op) || !value ||
        !value.getType().isSignlessInteger(64) || value.getValue().isNegative())
      return op->emitError() << "'" << name
                             << "' is a non-negative i64 on a tandem.weight";
    return success();
  }
  if (name == kAtLoadAttrName) {
    if (!isa<FlatSymbolRefAttr>(attr.getValue()) ||
        !isa<FunctionOpInterface>(op))
      return op->emitError() << "'" << name
                             << "' is a function's symbol, on a function";
    return success();
  }
  if (name != kDeviceAttrName && name != kPinAttrName)
    return op->emitError() << "unknown attribute '" << name
                           << "': the tandem dialect understands '"
                           << kDeviceAttrName << "', '" << kPinAttrName
                           << "', '" << kOffsetAttrName << "', '"
                           << kWorkspaceOffsetAttrName << "', '"
                           << kQueueAttrName << "', '" << kScheduledAttrName
                           << "', '" << kGpuMemoryBudgetAttrName << "', '"
                           << kCpuArenaBytesAttrName << "', '"
                           << kGpuArenaBytesAttrName << "', '"
                           << kKernelAttrName << "', '" << kFoldedAttrName
                           << "' and '" << kAtLoadAttrName << "'";
  auto device = dyn_cast<DeviceAttr>(attr.getValue());
  if (!device)
    return op->emitError() << "'" << name
                           << "' must be a #tandem.device attribute, got "
                           << attr.getValue();
  auto support = dyn_cast<DeviceSupportOpInterface>(op);
  if (!support)
    return op->emitError() << "'" << name << "' is set on '" << op->getName()
                           << "', which Tandem does not place";
  if (!support.canRunOn(device.getKind())) {
    InFlightDiagnostic diag = op->emitError()
                              << "'" << name << "' asks for " << device
                              << " but '" << op->getName()
                              << "' cannot run on a "
                              << stringifyDeviceKind(device.getKind());
    if (device.isGPU() && !fitsGpuKernels(op))
      diag << " (a tensor of rank above " << ::tandem::image::kMaxGpuRank
           << ", the most the GPU kernels take)";
    return diag;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// DeviceAttr
//===----------------------------------------------------------------------===//

Attribute DeviceAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  SMLoc kindLoc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseOptionalKeyword(&keyword)) {
    parser.emitError(kindLoc, "expected a device kind: 'cpu' or 'gpu'");
    return {};
  }
  std::optional<DeviceKind> kind = symbolizeDeviceKind(keyword);
  if (!kind) {
    parser.emitError(kindLoc, "unknown device kind '")
        << keyword << "': expected 'cpu' or 'gpu'";
    return {};
  }
  int64_t ordinal = 0;
  if (succeeded(parser.parseOptionalComma())) {
    SMLoc ordinalLoc = parser.getCurrentLocation();
    if (*kind == DeviceKind::CPU) {
      parser.emitError(ordinalLoc, "the CPU device takes no ordinal");
      return {};
    }
    if (parser.parseInteger(ordinal))
      return {};
    if (ordinal < 0) {
      parser.emitError(ordinalLoc, "GPU ordinal must be non-negative, got ")
          << ordinal;
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return DeviceAttr::get(parser.getContext(), *kind, ordinal);
}

void DeviceAttr::print(AsmPrinter &printer) const {
  printer << '<' << stringifyDeviceKind(getKind());
  if (getOrdinal() != 0)
    printer << ", " << getOrdinal();
  printer << '>';
}

LogicalResult DeviceAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 DeviceKind kind, int64_t ordinal) {
  if (ordinal < 0)
    return emitError() << "device ordinal must be non-negative, got "
                       << ordinal;
  if (kind == DeviceKind::CPU && ordinal != 0)
    return emitError() << "the CPU device takes no ordinal";
  return success();
}
