//===- PrintWork.cpp - print each op's work and devices -------------------===//
//
// Prints, per function, what the cost model will see: each op's work
// estimate and device support, straight from the two interfaces.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/Tandem/Transforms/Passes.h"

#include "mlir/IR/Location.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "tandem/Support/Format.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemShapes.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tandem {
#define GEN_PASS_DEF_PRINTWORK
#include "tandem/Dialect/Tandem/Transforms/Passes.h.inc"
} // namespace mlir::tandem

using namespace mlir;
using namespace mlir::tandem;

namespace {

std::string formatDevices(DeviceSupportOpInterface op) {
  std::string text;
  for (DeviceKind kind : {DeviceKind::CPU, DeviceKind::GPU})
    if (op.canRunOn(kind))
      text += (text.empty() ? "" : ",") + stringifyDeviceKind(kind).str();
  return text.empty() ? "none" : text;
}

std::string formatHostOperands(DeviceSupportOpInterface op) {
  std::string text;
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
    if (op.isHostOperand(i))
      text += (text.empty() ? "" : ",") + std::to_string(i);
  return text.empty() ? "-" : text;
}

void printFunction(FunctionOpInterface func, raw_ostream &os) {
  os << "@" << func.getName() << "\n";
  os << llvm::formatv(
      "{0,4}  {1,-20} {2,-32} {3,14} {4,12} {5,12} {6,12}  {7,-8} {8}\n", "#",
      "op", "location", "flops", "bytes_read", "bytes_written", "result_bytes",
      "devices", "host_operands");
  WorkEstimate total;
  int64_t index = 0, weightBytes = 0;
  func->walk([&](Operation *op) {
    auto work = dyn_cast<WorkEstimateOpInterface>(op);
    auto devices = dyn_cast<DeviceSupportOpInterface>(op);
    // A fused group's ops are counted in the group's own row.
    if (!work || !devices || op->getParentOfType<FusedOp>())
      return;
    WorkEstimate estimate = work.estimateWork();
    total.flops += estimate.flops;
    total.bytesRead += estimate.bytesRead;
    total.bytesWritten += estimate.bytesWritten;
    // What the op's results occupy: for a weight, its resident memory.
    int64_t resultBytes = 0;
    for (Value result : op->getResults())
      resultBytes += getNumBytes(result.getType());
    if (isa<WeightOp>(op))
      weightBytes += resultBytes;
    os << llvm::formatv(
        "{0,4}  {1,-20} {2,-32} {3,14} {4,12} {5,12} {6,12}  {7,-8} {8}\n",
        index++, displayName(op), formatLocation(op->getLoc()),
        estimate.flops, estimate.bytesRead, estimate.bytesWritten, resultBytes,
        formatDevices(devices), formatHostOperands(devices));
  });
  os << llvm::formatv("total: {0} ops, {1} flops ({2:F3} GFLOP), {3} bytes "
                      "read ({4}), {5} bytes written ({6}), weights {7} "
                      "bytes ({8})\n",
                      index, total.flops, total.flops / 1e9, total.bytesRead,
                      formatBytes(total.bytesRead), total.bytesWritten,
                      formatBytes(total.bytesWritten), weightBytes,
                      formatBytes(weightBytes));
}

struct PrintWork : tandem::impl::PrintWorkBase<PrintWork> {
  void runOnOperation() override {
    getOperation().walk(
        [&](FunctionOpInterface func) { printFunction(func, llvm::outs()); });
    markAllAnalysesPreserved();
  }
};

} // namespace
