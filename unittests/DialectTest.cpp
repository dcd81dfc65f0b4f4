//===- DialectTest.cpp - device contract, attributes and shape rules ------===//

#include "TestUtils.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemShapes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::tandem;
using tandem_test::TandemTest;

namespace {

TEST(ShapeRulesTest, BroadcastShapes) {
  EXPECT_EQ(*broadcastShapes({4, 1}, {3}), (SmallVector<int64_t>{4, 3}));
  EXPECT_EQ(*broadcastShapes({}, {2, 5}), (SmallVector<int64_t>{2, 5}));
  EXPECT_EQ(*broadcastShapes({2, 1, 7}, {6, 1}), (SmallVector<int64_t>{2, 6, 7}));
  EXPECT_FALSE(broadcastShapes({4, 3}, {5}).has_value());
  EXPECT_TRUE(isBroadcastableTo({3}, {4, 3}));
  EXPECT_TRUE(isBroadcastableTo({1, 3}, {4, 3}));
  EXPECT_FALSE(isBroadcastableTo({4, 3}, {3}));
  EXPECT_FALSE(isBroadcastableTo({2}, {4, 3}));
}

TEST(ShapeRulesTest, NormalizeAxisFollowsPyTorch) {
  EXPECT_EQ(normalizeAxis(-1, 3), 2);
  EXPECT_EQ(normalizeAxis(-3, 3), 0);
  EXPECT_EQ(normalizeAxis(2, 3), 2);
  EXPECT_FALSE(normalizeAxis(3, 3).has_value());
  EXPECT_FALSE(normalizeAxis(-4, 3).has_value());
  EXPECT_FALSE(normalizeAxis(0, 0).has_value());
}

TEST_F(TandemTest, ByteSizes) {
  Builder b(&context);
  EXPECT_EQ(getNumBytes(RankedTensorType::get({10000000, 150}, b.getF32Type())),
            6000000000LL);
  EXPECT_EQ(getNumBytes(RankedTensorType::get({3, 5}, b.getBF16Type())), 30);
  EXPECT_EQ(getNumBytes(RankedTensorType::get({7}, b.getI1Type())), 7);
  EXPECT_EQ(getNumBytes(RankedTensorType::get({}, b.getI64Type())), 8);
  EXPECT_EQ(getNumBytes(b.getF16Type()), 2);
}

TEST_F(TandemTest, DeviceAttrRoundTrip) {
  DeviceAttr cpu = DeviceAttr::getCPU(&context);
  DeviceAttr gpu1 = DeviceAttr::getGPU(&context, 1);
  EXPECT_TRUE(cpu.isCPU());
  EXPECT_TRUE(gpu1.isGPU());
  EXPECT_EQ(gpu1.getOrdinal(), 1);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << cpu << " " << DeviceAttr::getGPU(&context) << " " << gpu1;
  EXPECT_EQ(os.str(),
            "#tandem.device<cpu> #tandem.device<gpu> #tandem.device<gpu, 1>");
  EXPECT_EQ(parseAttribute("#tandem.device<gpu, 1>", &context), gpu1);
}

TEST_F(TandemTest, ElementwiseOpsRunEverywhereWithNoHostOperands) {
  auto op = parseFirst<AddOp>(R"(
    func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
      %r = tandem.add %a, %b : tensor<4xf32>
      return %r : tensor<4xf32>
    })");
  ASSERT_TRUE(op);
  auto support = cast<DeviceSupportOpInterface>(op.getOperation());
  EXPECT_TRUE(support.canRunOn(DeviceKind::CPU));
  EXPECT_TRUE(support.canRunOn(DeviceKind::GPU));
  EXPECT_FALSE(support.isHostOperand(0));
  EXPECT_FALSE(support.isHostOperand(1));
}

TEST_F(TandemTest, ShapeRunsOnTheCpuOnly) {
  auto op = parseFirst<ShapeOp>(R"(
    func.func @main(%x: tensor<4x3xf32>) -> tensor<2xi64> {
      %s = tandem.shape %x : tensor<4x3xf32> -> tensor<2xi64>
      return %s : tensor<2xi64>
    })");
  ASSERT_TRUE(op);
  auto support = cast<DeviceSupportOpInterface>(op.getOperation());
  EXPECT_TRUE(support.canRunOn(DeviceKind::CPU));
  EXPECT_FALSE(support.canRunOn(DeviceKind::GPU));
}

TEST_F(TandemTest, DynamicSliceReadsItsOffsetsOnTheHost) {
  auto op = parseFirst<DynamicSliceOp>(R"(
    func.func @main(%x: tensor<64x64xf32>, %o: tensor<2xi64>) -> tensor<8x8xf32> {
      %r = tandem.dynamic_slice %x, %o {sizes = array<i64: 8, 8>} : (tensor<64x64xf32>, tensor<2xi64>) -> tensor<8x8xf32>
      return %r : tensor<8x8xf32>
    })");
  ASSERT_TRUE(op);
  auto support = cast<DeviceSupportOpInterface>(op.getOperation());
  EXPECT_FALSE(support.isHostOperand(0));
  EXPECT_TRUE(support.isHostOperand(1));
  EXPECT_TRUE(support.canRunOn(DeviceKind::GPU));
}

TEST_F(TandemTest, ArithConstantImplementsBothContracts) {
  auto op = parseFirst<arith::ConstantOp>(R"(
    func.func @main() -> tensor<2xi64> {
      %c = arith.constant dense<[4, 3]> : tensor<2xi64>
      return %c : tensor<2xi64>
    })");
  ASSERT_TRUE(op);
  auto work = dyn_cast<WorkEstimateOpInterface>(op.getOperation());
  ASSERT_TRUE(work);
  EXPECT_EQ(work.estimateWork(), (WorkEstimate{0, 0, 16}));
  auto support = dyn_cast<DeviceSupportOpInterface>(op.getOperation());
  ASSERT_TRUE(support);
  EXPECT_TRUE(support.canRunOn(DeviceKind::GPU));
}

TEST_F(TandemTest, PlacedDeviceOfValues) {
  auto op = parseFirst<TransferOp>(R"(
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %g = tandem.transfer %x : tensor<4xf32> to #tandem.device<gpu, 1>
      %r = tandem.relu %g {tandem.device = #tandem.device<gpu, 1>} : tensor<4xf32>
      %s = tandem.relu %r : tensor<4xf32>
      return %s : tensor<4xf32>
    })");
  ASSERT_TRUE(op);
  EXPECT_EQ(getPlacedDevice(op.getX()), DeviceAttr::getCPU(&context));
  EXPECT_EQ(getPlacedDevice(op.getResult()), DeviceAttr::getGPU(&context, 1));
  Operation *relu = *op->getUsers().begin();
  EXPECT_EQ(getPlacedDevice(relu->getResult(0)),
            DeviceAttr::getGPU(&context, 1));
  Operation *unplaced = *relu->getUsers().begin();
  EXPECT_FALSE(getPlacedDevice(unplaced->getResult(0)));
}

} // namespace
