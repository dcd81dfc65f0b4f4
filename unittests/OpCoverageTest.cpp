//===- OpCoverageTest.cpp - every op reaches a kernel on every backend ----===//
//
// Walks every registered op of the tandem dialect and follows it across the
// compiler/runtime boundary: the op runs as a kind of OpKinds.def (or is a
// view, or a weight), the CPU backend has a kernel for that kind, the CUDA
// backend has one wherever placement may put the op on a GPU, no kind is
// left without an op, and the op suite (test/E2E/op_suite.py, run on cpu and
// sim) has a case using the op. Adding an op and forgetting one of these
// fails here, by name.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/runtime/ModelImage.h"

#include "CudaBackend.h"
#include "cpu/CpuKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

#include <array>
#include <cstdio>
#include <set>
#include <string>

using namespace mlir;
using namespace mlir::tandem;
using tandem_test::TandemTest;
namespace img = ::tandem::image;

namespace {

/// The tandem dialect's registered op names.
std::vector<RegisteredOperationName> tandemOps(MLIRContext &context) {
  std::vector<RegisteredOperationName> ops;
  for (RegisteredOperationName name : context.getRegisteredOperations())
    if (name.getDialectNamespace() == TandemDialect::getDialectNamespace())
      ops.push_back(name);
  return ops;
}

/// An op of `name` with no operands or attributes: enough to ask the
/// interfaces for what does not depend on them (its kind, its devices).
struct BareOp {
  explicit BareOp(MLIRContext &context, OperationName name)
      : op(Operation::create(OperationState(UnknownLoc::get(&context), name))) {}
  ~BareOp() { op->destroy(); }
  Operation *op;
};

class OpCoverageTest : public TandemTest {};

TEST_F(OpCoverageTest, EveryOpRunsAsAKindOrIsAViewOrAWeight) {
  std::vector<RegisteredOperationName> ops = tandemOps(context);
  ASSERT_GT(ops.size(), 40u);
  for (RegisteredOperationName name : ops) {
    // The schedule's wait orders queues, and a fused group's yield ends its
    // body; they compute nothing.
    if (name.getStringRef() == WaitOp::getOperationName() ||
        name.getStringRef() == YieldOp::getOperationName())
      continue;
    bool runs = name.hasInterface<RuntimeOpInterface>();
    bool view = name.hasInterface<ViewLikeOpInterface>();
    bool weight = name.getStringRef() == WeightOp::getOperationName();
    EXPECT_EQ(int(runs) + int(view) + int(weight), 1)
        << name.getStringRef().str()
        << " must run as a runtime kind (Tandem_RunsAs), be a view "
           "(ViewLikeOpInterface) or be the weight op, exactly one";
  }
}

TEST_F(OpCoverageTest, EveryKindHasKernelsWhereverItMayRun) {
  for (RegisteredOperationName name : tandemOps(context)) {
    if (!name.hasInterface<RuntimeOpInterface>())
      continue;
    BareOp bare(context, name);
    int64_t kind = cast<RuntimeOpInterface>(bare.op).getRuntimeKind();
    std::string what = name.getStringRef().str() + " (kind " +
                       img::kindName(kind) + ")";
    ASSERT_TRUE(kind >= 0 && kind < img::kNumOpKinds) << what;
    if (img::familyOf(kind) == img::KernelFamily::Generated) {
      // The model's own code on the CPU (its kernel table); the CUDA
      // backend launches its PTX. (Where it runs is its body's ops' rule,
      // checked through them.)
#ifdef TANDEM_HAVE_CUDA
      EXPECT_TRUE(::tandem::rt::cuda::hasKernel(kind)) << what;
#endif
      continue;
    }
    auto devices = cast<DeviceSupportOpInterface>(bare.op);
    if (devices.canRunOn(DeviceKind::CPU)) {
      EXPECT_TRUE(::tandem::rt::hasCpuKernel(kind)) << what << ": no CPU kernel";
    }
#ifdef TANDEM_HAVE_CUDA
    // A transfer is the executor's copy (toDevice/toHost), not a kernel.
    if (devices.canRunOn(DeviceKind::GPU) && kind != img::kTransfer) {
      EXPECT_TRUE(::tandem::rt::cuda::hasKernel(kind))
          << what << ": placement may put it on a GPU, which has no kernel";
    }
#endif
  }
}

TEST_F(OpCoverageTest, ConstantsRunAsFillsOrConstants) {
  OpBuilder builder(&context);
  auto type = RankedTensorType::get({2}, builder.getF32Type());
  auto splat = builder.create<arith::ConstantOp>(
      UnknownLoc::get(&context), DenseElementsAttr::get(type, 0.5f));
  auto dense = builder.create<arith::ConstantOp>(
      UnknownLoc::get(&context),
      DenseElementsAttr::get(type, ArrayRef<float>{1.0f, 2.0f}));
  EXPECT_EQ(cast<RuntimeOpInterface>(splat.getOperation()).getRuntimeKind(),
            img::kFill);
  EXPECT_EQ(cast<RuntimeOpInterface>(dense.getOperation()).getRuntimeKind(),
            img::kConstant);
  splat->destroy();
  dense->destroy();
}

TEST_F(OpCoverageTest, EveryKindHasAnOp) {
  // arith.constant runs as Fill or Constant (the test above).
  std::set<int64_t> used = {img::kFill, img::kConstant};
  for (RegisteredOperationName name : tandemOps(context)) {
    if (!name.hasInterface<RuntimeOpInterface>())
      continue;
    BareOp bare(context, name);
    used.insert(cast<RuntimeOpInterface>(bare.op).getRuntimeKind());
  }
  for (int64_t kind = 0; kind < img::kNumOpKinds; ++kind)
    EXPECT_TRUE(used.count(kind))
        << "kind " << img::kindName(kind)
        << " (OpKinds.def) is run by no op: a dead path in every backend";
}

TEST_F(OpCoverageTest, EveryOpHasAnOpSuiteCase) {
  std::string command = std::string(TANDEM_PYTHON) + " " + TANDEM_SOURCE_DIR +
                        "/test/E2E/op_suite.py --list-ops";
  FILE *pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr) << command;
  std::set<std::string> covered;
  std::array<char, 256> line;
  while (fgets(line.data(), line.size(), pipe)) {
    std::string name(line.data());
    while (!name.empty() && (name.back() == '\n' || name.back() == '\r'))
      name.pop_back();
    covered.insert("tandem." + name);
  }
  ASSERT_EQ(pclose(pipe), 0) << command << " failed";
  ASSERT_FALSE(covered.empty());
  for (RegisteredOperationName name : tandemOps(context)) {
    StringRef op = name.getStringRef();
    // Weights and transfers are in every case placed on the GPU (sim): the
    // placement inserts the copies and uploads the weights; and every such
    // case is scheduled, with waits.
    if (op == WeightOp::getOperationName() ||
        op == TransferOp::getOperationName() ||
        op == WaitOp::getOperationName())
      continue;
    EXPECT_TRUE(covered.count(op.str()))
        << op.str() << " has no case in test/E2E/op_suite.py";
  }
}

} // namespace
