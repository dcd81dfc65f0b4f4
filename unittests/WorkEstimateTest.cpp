//===- WorkEstimateTest.cpp - the work contract on representative shapes --===//
//
// Each expectation is computed by hand from the formula documented with the
// op in TandemOps.td.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"

using namespace mlir;
using namespace mlir::tandem;
using tandem_test::TandemTest;

namespace {

class WorkEstimateTest : public TandemTest {
protected:
  /// Work of the first `OpTy` in a function taking `args` whose body is `body`.
  template <typename OpTy>
  WorkEstimate workOf(llvm::StringRef args, llvm::StringRef body) {
    std::string source =
        ("func.func @main(" + args + ") {\n" + body + "\n  return\n}\n").str();
    OpTy op = parseFirst<OpTy>(source);
    return op ? cast<WorkEstimateOpInterface>(op.getOperation()).estimateWork()
              : WorkEstimate{-1, -1, -1};
  }
};

TEST_F(WorkEstimateTest, ElementwiseBinaryCountsOneFlopPerResultElement) {
  // Broadcast [4, 1] + [3] → [4, 3]: 12 FLOPs, reads 16 + 12 bytes.
  WorkEstimate work = workOf<AddOp>(
      "%a: tensor<4x1xf32>, %b: tensor<3xf32>",
      "%r = tandem.add %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>");
  EXPECT_EQ(work, (WorkEstimate{12, 16 + 12, 48}));
}

TEST_F(WorkEstimateTest, TranscendentalUnaryOpsCountTheirPolynomial) {
  WorkEstimate work = workOf<GeluOp>("%x: tensor<2x8xbf16>",
                                     "%r = tandem.gelu %x : tensor<2x8xbf16>");
  EXPECT_EQ(work, (WorkEstimate{10 * 16, 32, 32}));
  work = workOf<ExpOp>("%x: tensor<5xf32>", "%r = tandem.exp %x : tensor<5xf32>");
  EXPECT_EQ(work, (WorkEstimate{20, 20, 20}));
}

TEST_F(WorkEstimateTest, PowCountsExpOfLog) {
  WorkEstimate work = workOf<PowOp>(
      "%a: tensor<10xf32>, %b: tensor<10xf32>",
      "%r = tandem.pow %a, %b : tensor<10xf32>");
  EXPECT_EQ(work, (WorkEstimate{80, 80, 40}));
}

TEST_F(WorkEstimateTest, CompareWritesOneBytePerMask) {
  WorkEstimate work = workOf<CompareOp>(
      "%a: tensor<8xi64>, %b: tensor<8xi64>",
      "%r = tandem.compare lt, %a, %b : (tensor<8xi64>, tensor<8xi64>) -> tensor<8xi1>");
  EXPECT_EQ(work, (WorkEstimate{8, 128, 8}));
}

TEST_F(WorkEstimateTest, BatchedMatmulIsTwoBMNK) {
  // [2, 3, 4, 5] x [5, 6] → [2, 3, 4, 6]: 2·6·4·6·5 = 1440 FLOPs.
  WorkEstimate work = workOf<MatmulOp>(
      "%a: tensor<2x3x4x5xf32>, %b: tensor<5x6xf32>",
      "%r = tandem.matmul %a, %b : (tensor<2x3x4x5xf32>, tensor<5x6xf32>) -> tensor<2x3x4x6xf32>");
  // A rank-2 b has no batch dimensions: it is shared by all six matrices.
  EXPECT_EQ(work, (WorkEstimate{1440, (120 + 30) * 4, 144 * 4}));
}

TEST_F(WorkEstimateTest, MatmulWithBroadcastBatch) {
  WorkEstimate work = workOf<MatmulOp>(
      "%a: tensor<2x3x4x5xf32>, %b: tensor<3x5x6xf32>",
      "%r = tandem.matmul %a, %b : (tensor<2x3x4x5xf32>, tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32>");
  EXPECT_EQ(work, (WorkEstimate{2 * 6 * 4 * 6 * 5, (120 + 90) * 4, 144 * 4}));
}

TEST_F(WorkEstimateTest, LinearCountsBias) {
  // x [128, 13], w [16, 13], b [16]: 2·128·16·13 + 128·16.
  WorkEstimate work = workOf<LinearOp>(
      "%x: tensor<128x13xf32>, %w: tensor<16x13xf32>, %b: tensor<16xf32>",
      "%r = tandem.linear %x, %w, %b : (tensor<128x13xf32>, tensor<16x13xf32>, tensor<16xf32>) -> tensor<128x16xf32>");
  EXPECT_EQ(work, (WorkEstimate{2 * 128 * 16 * 13 + 128 * 16,
                                (128 * 13 + 16 * 13 + 16) * 4, 128 * 16 * 4}));
  work = workOf<LinearOp>(
      "%x: tensor<2x7x13xf32>, %w: tensor<16x13xf32>",
      "%r = tandem.linear %x, %w : (tensor<2x7x13xf32>, tensor<16x13xf32>) -> tensor<2x7x16xf32>");
  EXPECT_EQ(work.flops, 2 * 14 * 16 * 13);
}

TEST_F(WorkEstimateTest, GroupedConvolution) {
  // x [1, 8, 10, 10], w [8, 2, 3, 3], groups 4, padding 1: out [1, 8, 10, 10].
  WorkEstimate work = workOf<Conv2dOp>(
      "%x: tensor<1x8x10x10xf32>, %w: tensor<8x2x3x3xf32>",
      "%r = tandem.conv2d %x, %w {groups = 4 : i64, padding = array<i64: 1, 1>} : (tensor<1x8x10x10xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x10x10xf32>");
  EXPECT_EQ(work, (WorkEstimate{2 * 800 * 2 * 9, (800 + 144) * 4, 800 * 4}));
}

TEST_F(WorkEstimateTest, PoolingCountsTheWindow) {
  WorkEstimate work = workOf<MaxPool2dOp>(
      "%x: tensor<1x3x8x8xf32>",
      "%r = tandem.max_pool2d %x {kernel = array<i64: 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>");
  EXPECT_EQ(work, (WorkEstimate{48 * 4, 192 * 4, 48 * 4}));
}

TEST_F(WorkEstimateTest, EmbeddingReadsOnlyTheSelectedRows) {
  // A 10M x 150 table (5.59 GiB) but 4096 x 150 floats read.
  WorkEstimate work = workOf<EmbeddingOp>(
      "%ids: tensor<4096xi64>",
      "%t = tandem.weight \"table\" : tensor<10000000x150xf32>\n"
      "%r = tandem.embedding %t, %ids : (tensor<10000000x150xf32>, tensor<4096xi64>) -> tensor<4096x150xf32>");
  EXPECT_EQ(work, (WorkEstimate{0, 4096 * 8 + 4096 * 150 * 4, 4096 * 150 * 4}));
}

TEST_F(WorkEstimateTest, EmbeddingBagReadsTheSelectedRowsAndAddsThem) {
  // 4096 ids in 512 bags of a 10M x 64 table: the ids, the offsets, the
  // weights and 4096 rows read; one add (two with weights) per element.
  WorkEstimate work = workOf<EmbeddingBagOp>(
      "%ids: tensor<4096xi64>, %o: tensor<512xi32>, %w: tensor<4096xf32>",
      "%t = tandem.weight \"table\" : tensor<10000000x64xf32>\n"
      "%r = tandem.embedding_bag %t, %ids, %o, %w {mode = \"sum\"} : (tensor<10000000x64xf32>, tensor<4096xi64>, tensor<512xi32>, tensor<4096xf32>) -> tensor<512x64xf32>");
  EXPECT_EQ(work, (WorkEstimate{2 * 4096 * 64,
                                4096 * 8 + 512 * 4 + 4096 * 64 * 4 + 4096 * 4,
                                512 * 64 * 4}));
}

TEST_F(WorkEstimateTest, WeightAndReshapeAreFree) {
  EXPECT_EQ(workOf<WeightOp>("", "%w = tandem.weight \"w\" : tensor<1000x1000xf32>"),
            (WorkEstimate{0, 0, 0}));
  EXPECT_EQ(workOf<ReshapeOp>("%x: tensor<4x6xf32>",
                              "%r = tandem.reshape %x : tensor<4x6xf32> -> tensor<24xf32>"),
            (WorkEstimate{0, 0, 0}));
}

TEST_F(WorkEstimateTest, ReductionsCountInputElements) {
  WorkEstimate work = workOf<ReduceSumOp>(
      "%x: tensor<4x8xf16>",
      "%r = tandem.reduce_sum %x {axes = array<i64: 1>} : tensor<4x8xf16> -> tensor<4xf16>");
  EXPECT_EQ(work, (WorkEstimate{32, 64, 8}));
  work = workOf<ArgmaxOp>(
      "%x: tensor<4x8xf32>",
      "%r = tandem.argmax %x {axis = -1 : i64} : tensor<4x8xf32> -> tensor<4xi64>");
  EXPECT_EQ(work, (WorkEstimate{32, 128, 32}));
}

TEST_F(WorkEstimateTest, NormalizationsCountPerElement) {
  WorkEstimate work = workOf<LayerNormOp>(
      "%x: tensor<2x4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>",
      "%r = tandem.layer_norm %x, %g, %b {axis = -1 : i64} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>");
  EXPECT_EQ(work, (WorkEstimate{8 * 64, (64 + 16) * 4, 64 * 4}));
  work = workOf<SoftmaxOp>("%x: tensor<3x5xf32>",
                           "%r = tandem.softmax %x {axis = 1 : i64} : tensor<3x5xf32>");
  EXPECT_EQ(work, (WorkEstimate{8 * 15, 60, 60}));
  work = workOf<BatchNormOp>(
      "%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>",
      "%r = tandem.batch_norm %x, %s, %s, %s, %s : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>");
  EXPECT_EQ(work, (WorkEstimate{2 * 96 + 4 * 3, (96 + 12) * 4, 96 * 4}));
}

TEST_F(WorkEstimateTest, DataMovementOps) {
  EXPECT_EQ(workOf<TransposeOp>(
                "%x: tensor<4x6xf32>",
                "%r = tandem.transpose %x {perm = array<i64: 1, 0>} : tensor<4x6xf32> -> tensor<6x4xf32>"),
            (WorkEstimate{0, 96, 96}));
  EXPECT_EQ(workOf<SliceOp>(
                "%x: tensor<10x10xf32>",
                "%r = tandem.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 2, 10>} : tensor<10x10xf32> -> tensor<2x10xf32>"),
            (WorkEstimate{0, 80, 80}));
  EXPECT_EQ(workOf<DynamicSliceOp>(
                "%x: tensor<64x64xf32>, %o: tensor<2xi64>",
                "%r = tandem.dynamic_slice %x, %o {sizes = array<i64: 8, 8>} : (tensor<64x64xf32>, tensor<2xi64>) -> tensor<8x8xf32>"),
            (WorkEstimate{0, 16 + 256, 256}));
  EXPECT_EQ(workOf<ConcatOp>(
                "%a: tensor<2x3xf32>, %b: tensor<2x5xf32>",
                "%r = tandem.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>"),
            (WorkEstimate{0, 64, 64}));
}

TEST_F(WorkEstimateTest, SourcesWriteTheirResult) {
  EXPECT_EQ(workOf<FillOp>("", "%r = tandem.fill(5.000000e-01 : f32) : tensor<4x4xf32>"),
            (WorkEstimate{0, 0, 64}));
  EXPECT_EQ(workOf<IotaOp>("", "%r = tandem.iota {axis = 0 : i64} : tensor<16xi32>"),
            (WorkEstimate{0, 0, 64}));
}

} // namespace
