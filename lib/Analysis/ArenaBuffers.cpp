//===- ArenaBuffers.cpp - a function's buffers and their lifetimes --------===//

#include "tandem/Analysis/ArenaBuffers.h"

#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemSchedule.h"
#include "tandem/Dialect/Tandem/IR/TandemShapes.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::tandem;

FailureOr<FunctionBuffers> tandem::collectArenaBuffers(Block &block) {
  FunctionBuffers result;
  llvm::DenseMap<Operation *, int64_t> position;
  for (Operation &op : block) {
    position[&op] = result.order.size();
    result.order.push_back(&op);
  }
  int64_t lastPoint = int64_t(result.order.size()) - 1;
  HappensBefore order(block);

  // A reshape owns no buffer: it is its operand's bytes, read as another
  // shape (the lowering passes the operand's address on). Its readers read
  // its root's buffer, through chains of reshapes.
  llvm::DenseMap<Value, Value> root;
  auto rootOf = [&](Value value) {
    auto found = root.find(value);
    return found == root.end() ? value : found->second;
  };
  // Per buffer (its root value): the queue items that touch it, and the
  // latest point something else holds it (a view, the terminator).
  llvm::DenseMap<Value, SmallVector<Operation *, 4>> readers;
  llvm::DenseMap<Value, int64_t> heldUntil;
  // Per arena (0 CPU, 1 GPU): the queue items that touch it.
  llvm::SetVector<Operation *> touching[2];
  auto arenaOf = [](Value value) -> int {
    DeviceAttr device = getPlacedDevice(value);
    return device && device.isGPU() ? 1 : 0;
  };
  for (Operation *op : result.order) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(op))
      root[op->getResult(0)] = rootOf(view.getViewSource());
    if (isa<WaitOp>(op))
      continue; // a wait touches no bytes
    bool item = isQueueItem(op);
    for (Value operand : op->getOperands()) {
      Value buffer = rootOf(operand);
      if (item) {
        readers[buffer].push_back(op);
        touching[arenaOf(buffer)].insert(op);
      } else {
        int64_t &held = heldUntil[buffer];
        held = std::max(held, op->hasTrait<mlir::OpTrait::IsTerminator>()
                                  ? lastPoint
                                  : position[op]);
      }
    }
    if (item && op->getNumResults() == 1)
      touching[arenaOf(op->getResult(0))].insert(op);
  }
  llvm::DenseMap<Operation *, std::pair<int64_t, int64_t>> window;
  for (auto &ops : touching) {
    std::vector<std::pair<int64_t, int64_t>> windows =
        order.overlapWindows(ops.getArrayRef());
    for (auto [op, span] : llvm::zip(ops, windows))
      window[op] = span;
  }

  ArenaBuffers workspaces;
  for (Operation *op : result.order) {
    if (op->hasTrait<mlir::OpTrait::IsTerminator>() ||
        isa<ViewLikeOpInterface, WaitOp>(op))
      continue;
    if (op->getNumResults() != 1)
      return op->emitError("memory planning handles ops with one result");
    Value value = op->getResult(0);
    DeviceAttr device = getPlacedDevice(value);
    if (!device)
      return op->emitError("is not placed: run --tandem-place and "
                           "--tandem-insert-transfers first");
    BufferLifetime lifetime;
    lifetime.bytes = getNumBytes(value.getType());
    if (isa<WeightOp>(op)) {
      // Host weights are read from the mapped weights file; GPU weights are
      // uploaded once and stay for the whole run.
      if (device.isCPU())
        continue;
      lifetime.first = 0;
      lifetime.last = lastPoint;
    } else {
      auto [first, last] = window.lookup(op);
      for (Operation *reader : readers.lookup(value))
        last = std::max(last, window.lookup(reader).second);
      lifetime.first = first;
      lifetime.last = std::max(last, heldUntil.lookup(value));
    }
    ArenaBuffers &buffers = device.isGPU() ? result.gpu : result.cpu;
    buffers.lifetimes.push_back(lifetime);
    buffers.writers.push_back(op);
    auto support = dyn_cast<DeviceSupportOpInterface>(op);
    if (int64_t bytes = support ? support.getGpuWorkspaceBytes() : 0;
        bytes > 0 && device.isGPU()) {
      auto [first, last] = window.lookup(op);
      workspaces.lifetimes.push_back({bytes, first, last});
      workspaces.writers.push_back(op);
    }
  }
  result.cpu.firstWorkspace = result.cpu.lifetimes.size();
  result.gpu.firstWorkspace = result.gpu.lifetimes.size();
  llvm::append_range(result.gpu.lifetimes, workspaces.lifetimes);
  llvm::append_range(result.gpu.writers, workspaces.writers);
  return result;
}
