//===- PlacementGraph.cpp - a function as a placement problem -------------===//

#include "tandem/Analysis/PlacementGraph.h"

#include "tandem/Analysis/CostModel.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemShapes.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::tandem;

bool tandem::isPlaced(FunctionOpInterface func) {
  for (Operation &op : func.getFunctionBody().getOps())
    if (isa<TransferOp>(op) || op.hasAttr(TandemDialect::kDeviceAttrName))
      return true;
  return false;
}

FailureOr<PlacementGraph>
tandem::buildPlacementGraph(FunctionOpInterface func,
                            const DeviceProfile &profile,
                            int64_t gpuBudgetBytes) {
  PlacementGraph graph;
  PlacementProblem &problem = graph.problem;
  problem.gpuBudgetBytes = gpuBudgetBytes;
  problem.hasGpu = profile.gpu.has_value();

  Region &body = func.getFunctionBody();
  if (!body.hasOneBlock())
    return func->emitError("placement needs a function with one block");
  Block &block = body.front();

  // Room for every op and value up front: no regrowth of the arrays.
  size_t numOps = block.getOperations().size(), numValues = block.getNumArguments();
  for (Operation &op : block)
    numValues += op.getNumResults();
  problem.ops.reserve(numOps);
  problem.values.reserve(numValues);
  graph.ops.reserve(numOps);
  graph.values.reserve(numValues);
  llvm::DenseMap<Value, int> valueIndex(numValues);
  auto addValue = [&](Value value, int producer) {
    PlacementValue placed;
    placed.bytes = getNumBytes(value.getType());
    placed.producer = producer;
    if (problem.hasGpu) {
      placed.h2dUs = estimateTransferTimeUs(placed.bytes, profile.h2d());
      placed.d2hUs = estimateTransferTimeUs(placed.bytes, profile.d2h());
    }
    valueIndex[value] = problem.values.size();
    problem.values.push_back(placed);
    graph.values.push_back(value);
  };
  for (BlockArgument argument : block.getArguments()) {
    if (!getCheckedNumBytes(argument.getType()))
      return func->emitError()
             << "argument #" << argument.getArgNumber() << " ("
             << argument.getType()
             << ") takes more than 2^48 bytes (256 TiB), the most a tensor "
                "may";
    addValue(argument, -1 - static_cast<int>(argument.getArgNumber()));
  }

  bool alreadyPlaced = isPlaced(func);
  if (alreadyPlaced)
    graph.given.emplace();
  for (Operation &op : block) {
    if (auto transfer = dyn_cast<TransferOp>(op)) {
      // An explicit copy: its readers read the value it copies.
      auto it = valueIndex.find(transfer.getX());
      if (it == valueIndex.end())
        return op.emitError("placement needs every operand defined in the "
                            "function's body");
      valueIndex[transfer.getResult()] = it->second;
      continue;
    }
    if (op.hasTrait<mlir::OpTrait::IsTerminator>()) {
      for (Value operand : op.getOperands())
        if (auto it = valueIndex.find(operand); it != valueIndex.end())
          problem.values[it->second].isResult = true;
      continue;
    }
    auto support = dyn_cast<DeviceSupportOpInterface>(&op);
    if (!support || !isa<WorkEstimateOpInterface>(&op))
      return op.emitError() << "cannot place '" << op.getName()
                            << "': it does not implement Tandem's work and "
                               "device contracts";
    // A fused group's body is part of the op: it runs where the op does.
    if (op.getNumRegions() && !isa<FusedOp>(op))
      return op.emitError("placement handles ops without regions, and "
                          "tandem.fused, only");

    PlacementOp placed;
    int index = problem.ops.size();
    placed.isWeight = isa<WeightOp>(op);
    placed.aliasesOperand = isa<ViewLikeOpInterface>(op);
    if (auto support = dyn_cast<DeviceSupportOpInterface>(op))
      placed.gpuWorkspaceBytes = support.getGpuWorkspaceBytes();
    std::optional<double> cpuUs =
        estimateOpTimeUs(&op, DeviceKind::CPU, profile);
    std::optional<double> gpuUs =
        estimateOpTimeUs(&op, DeviceKind::GPU, profile);
    placed.cpuUs = cpuUs.value_or(kUnreachable);
    placed.gpuUs = gpuUs.value_or(kUnreachable);
    // An op time must be finite (infinity means "cannot run there") and
    // far from overflowing the sums of a schedule.
    for (auto [us, device] : {std::pair{cpuUs, "cpu"}, std::pair{gpuUs, "gpu"}})
      if (us && !(*us <= kMaxOpUs))
        return op.emitError()
               << "is priced at " << *us << " us on the " << device
               << " by the device profile '" << profile.name
               << "': beyond " << kMaxOpUs
               << " us (3 years) an op time is no machine's; check the "
                  "profile's rates, efficiencies and fixed costs";
    // A device named on the op (pinned or placed there) must be one the
    // profile has and placement handles.
    auto checkDevice = [&](DeviceAttr device,
                           llvm::StringRef how) -> LogicalResult {
      if (device.isGPU() && !problem.hasGpu)
        return op.emitError() << "is " << how << " " << device
                              << " but the device profile '" << profile.name
                              << "' has no GPU";
      if (device.isGPU() && device.getOrdinal() != 0)
        return op.emitError() << "is " << how << " " << device
                              << ": placement handles one GPU (ordinal 0) so "
                                 "far";
      return success();
    };
    if (auto pin = op.getAttrOfType<DeviceAttr>(TandemDialect::kPinAttrName)) {
      if (failed(checkDevice(pin, "pinned to")))
        return failure();
      placed.pin = pin.getKind();
    }
    if (alreadyPlaced) {
      auto device = op.getAttrOfType<DeviceAttr>(TandemDialect::kDeviceAttrName);
      if (!device)
        return op.emitError()
               << "has no tandem.device, but @" << func.getName()
               << " is already placed (other ops carry tandem.device or it "
                  "has tandem.transfer ops): place a model whose ops carry "
                  "none, and fix devices with tandem.pin";
      if (placed.pin && *placed.pin != device.getKind())
        return op.emitError() << "is placed on " << device
                              << " but pinned to "
                              << op.getAttr(TandemDialect::kPinAttrName);
      if (failed(checkDevice(device, "placed on")))
        return failure();
      graph.given->push_back(device.isGPU());
    }
    if (!placed.canRunOn(DeviceKind::CPU) && !placed.canRunOn(DeviceKind::GPU))
      return op.emitError("can run on no device of the profile");
    if (placed.cpuUs == kUnreachable && !problem.hasGpu)
      return op.emitError("can run only on a GPU, and the profile has none");

    for (auto [operandIndex, operand] : llvm::enumerate(op.getOperands())) {
      auto it = valueIndex.find(operand);
      if (it == valueIndex.end())
        return op.emitError("placement needs every operand defined in the "
                            "function's body");
      if (support.isHostOperand(operandIndex))
        placed.hostOperands.push_back(it->second);
      else if (!llvm::is_contained(placed.operands, it->second))
        placed.operands.push_back(it->second);
    }
    for (Value result : op.getResults()) {
      // Tandem ops verify this; an upstream op (a constant) may not.
      if (!getCheckedNumBytes(result.getType()))
        return op.emitError()
               << "result " << result.getType()
               << " takes more than 2^48 bytes (256 TiB), the most a tensor "
                  "may";
      placed.results.push_back(problem.values.size());
      addValue(result, index);
      problem.values.back().isWeight = placed.isWeight;
    }
    problem.ops.push_back(std::move(placed));
    graph.ops.push_back(&op);
  }
  problem.finalize();
  return graph;
}
