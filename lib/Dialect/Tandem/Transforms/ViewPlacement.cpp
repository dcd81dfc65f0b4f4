//===- ViewPlacement.cpp - Graphviz picture of the placed graph -----------===//

#include "tandem/Dialect/Tandem/Transforms/Passes.h"

#include "tandem/Support/Format.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemSchedule.h"
#include "tandem/Support/OutputFile.h"
#include "tandem/Dialect/Tandem/IR/TandemShapes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <array>

namespace mlir::tandem {
#define GEN_PASS_DEF_VIEWPLACEMENT
#include "tandem/Dialect/Tandem/Transforms/Passes.h.inc"
} // namespace mlir::tandem

using namespace mlir;
using namespace mlir::tandem;

namespace {

constexpr const char *kCpuColour = "#a9c8f5";
constexpr const char *kGpuColour = "#a8dc8f";
constexpr const char *kUnplacedColour = "#e0e0e0";
constexpr const char *kTransferColour = "#f5a742";

std::string escape(llvm::StringRef text) {
  std::string escaped;
  for (char c : text) {
    if (c == '"' || c == '\\')
      escaped += '\\';
    escaped += c;
  }
  return escaped;
}

std::string typeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

void writeDot(FunctionOpInterface func, raw_ostream &os) {
  Block &block = func.getFunctionBody().front();
  llvm::DenseMap<Value, std::string> nodeOf;
  os << "digraph \"" << escape(func.getName()) << "\" {\n"
     << "  rankdir=TB;\n"
     << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
        "fontsize=10];\n"
     << "  edge [fontname=\"Helvetica\", fontsize=9];\n"
     << "  legend [shape=plaintext, style=\"\", label=<<table border=\"0\">"
     << "<tr><td bgcolor=\"" << kCpuColour << "\">cpu</td><td bgcolor=\""
     << kGpuColour << "\">gpu</td><td bgcolor=\"" << kTransferColour
     << "\">transfer</td><td border=\"2\">pinned: bold</td></tr></table>>];\n";

  for (BlockArgument argument : block.getArguments()) {
    std::string node = llvm::formatv("arg{0}", argument.getArgNumber());
    os << "  " << node << " [shape=ellipse, fillcolor=\"" << kCpuColour
       << "\", label=\"%arg" << argument.getArgNumber() << "\\n"
       << escape(typeText(argument.getType())) << "\"];\n";
    nodeOf[argument] = node;
  }

  // One synthesized transfer per value and destination, for IR whose copies
  // are not explicit yet.
  llvm::DenseMap<std::pair<Value, Attribute>, std::string> implicitTransfers;
  auto transferNode = [&](Value value, DeviceAttr to) {
    auto key = std::make_pair(value, Attribute(to));
    auto it = implicitTransfers.find(key);
    if (it != implicitTransfers.end())
      return it->second;
    std::string node = llvm::formatv("t{0}", implicitTransfers.size());
    int64_t bytes = getNumBytes(value.getType());
    os << "  " << node << " [shape=diamond, fillcolor=\"" << kTransferColour
       << "\", label=\"to " << stringifyDeviceKind(to.getKind()) << "\\n"
       << formatBytes(bytes) << "\"];\n";
    os << "  " << nodeOf[value] << " -> " << node << " [color=\""
       << kTransferColour << "\", penwidth=2];\n";
    implicitTransfers[key] = node;
    return node;
  };

  // A scheduled function's queues, drawn as lanes: each queue's ops in a
  // cluster of their own, in block order; a wait is a dotted edge from the
  // op waited for to the next op of the waiting queue.
  bool scheduled = isScheduled(func);
  std::array<std::vector<std::string>, kNumQueues> lanes;
  std::array<std::vector<std::string>, kNumQueues> pendingWaits;
  std::vector<std::string> waitEdges;
  llvm::DenseMap<Operation *, std::string> nodeOfOp;

  int index = 0;
  for (Operation &op : block) {
    if (auto wait = dyn_cast<WaitOp>(op)) {
      for (Value value : wait.getValues())
        if (Operation *producer = value.getDefiningOp())
          if (auto it = nodeOfOp.find(producer); it != nodeOfOp.end())
            pendingWaits[int(wait.getQueue())].push_back(it->second);
      continue;
    }
    std::string node = llvm::formatv("op{0}", index++);
    nodeOfOp[&op] = node;
    if (scheduled)
      if (std::optional<QueueKind> queue = getScheduledQueue(&op)) {
        lanes[int(*queue)].push_back(node);
        for (const std::string &waited : pendingWaits[int(*queue)])
          waitEdges.push_back(waited + " -> " + node);
        pendingWaits[int(*queue)].clear();
      }
    DeviceAttr device =
        op.getAttrOfType<DeviceAttr>(TandemDialect::kDeviceAttrName);
    bool pinned = op.hasAttr(TandemDialect::kPinAttrName);
    auto transfer = dyn_cast<TransferOp>(op);
    if (transfer) {
      os << "  " << node << " [shape=diamond, fillcolor=\"" << kTransferColour
         << "\", label=\"to " << stringifyDeviceKind(transfer.getTo().getKind())
         << "\\n" << formatBytes(getNumBytes(transfer.getType())) << "\"];\n";
    } else if (op.hasTrait<mlir::OpTrait::IsTerminator>()) {
      device = DeviceAttr::getCPU(op.getContext());
      os << "  " << node << " [shape=ellipse, fillcolor=\"" << kCpuColour
         << "\", label=\"return\"];\n";
    } else {
      const char *colour = !device          ? kUnplacedColour
                           : device.isGPU() ? kGpuColour
                                            : kCpuColour;
      std::string label = displayName(&op);
      if (auto weight = dyn_cast<WeightOp>(op))
        label += "\\n\\\"" + escape(weight.getName()) + "\\\"";
      if (op.getNumResults() == 1)
        label += "\\n" + escape(typeText(op.getResult(0).getType()));
      if (device)
        label += llvm::formatv("\\non {0}", stringifyDeviceKind(device.getKind()));
      if (pinned)
        label += " (pinned)";
      os << "  " << node << " [fillcolor=\"" << colour << "\", label=\""
         << label << "\"" << (pinned ? ", penwidth=3" : "") << "];\n";
    }
    auto support = dyn_cast<DeviceSupportOpInterface>(op);
    for (OpOperand &use : op.getOpOperands()) {
      Value value = use.get();
      if (!nodeOf.count(value))
        continue;
      bool onHost = support && support.isHostOperand(use.getOperandNumber());
      DeviceAttr readOn =
          onHost ? DeviceAttr::getCPU(op.getContext()) : device;
      DeviceAttr home = getPlacedDevice(value);
      std::string from = nodeOf[value];
      bool implicitCopy = !transfer && readOn && home && readOn != home;
      if (implicitCopy)
        from = transferNode(value, readOn);
      os << "  " << from << " -> " << node;
      if (implicitCopy || transfer)
        os << " [color=\"" << kTransferColour << "\", penwidth=2]";
      else if (onHost)
        os << " [style=dashed, label=\"host operand\"]";
      os << ";\n";
    }
    for (Value result : op.getResults())
      nodeOf[result] = node;
  }
  for (int queue = 0; queue < kNumQueues; ++queue) {
    if (lanes[queue].empty())
      continue;
    llvm::StringRef name = stringifyQueueKind(QueueKind(queue));
    os << "  subgraph cluster_" << name << " {\n    label=\"" << name
       << " queue\"; style=\"rounded,dashed\"; color=\"#808080\";\n";
    for (const std::string &node : lanes[queue])
      os << "    " << node << ";\n";
    // The queue's order, top to bottom.
    for (size_t k = 1; k < lanes[queue].size(); ++k)
      os << "    " << lanes[queue][k - 1] << " -> " << lanes[queue][k]
         << " [style=invis, weight=10];\n";
    os << "  }\n";
  }
  for (const std::string &edge : waitEdges)
    os << "  " << edge
       << " [style=dotted, color=\"#606060\", constraint=false, label=\"wait\"];\n";
  os << "}\n";
}

struct ViewPlacement : tandem::impl::ViewPlacementBase<ViewPlacement> {
  using ViewPlacementBase::ViewPlacementBase;

  /// `--tandem-view-placement=FILE` names the file directly.
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (!options.empty() && !options.contains('=')) {
      file = options.str();
      return success();
    }
    return Pass::initializeOptions(options, errorHandler);
  }

  void runOnOperation() override {
    FunctionOpInterface func = getReportedFunction(getOperation());
    if (!func) {
      getOperation().emitError("the placement picture needs a function "
                               "@main or exactly one function");
      return signalPassFailure();
    }
    if (llvm::Error error = writeFileAtomically(
            file, [&](llvm::raw_ostream &os) { writeDot(func, os); })) {
      func.emitError() << "placement picture: "
                       << llvm::toString(std::move(error));
      return signalPassFailure();
    }
    markAllAnalysesPreserved();
  }
};

} // namespace
