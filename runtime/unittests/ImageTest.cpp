//===- ImageTest.cpp - the runtime's reading of model images -------------===//
//
// decodeImage takes what the compiler of this build writes and refuses, with
// a message, an image whose op kinds or attribute counts it does not know:
// what a binary from another build, or a corrupted one, would hand it.
//
//===----------------------------------------------------------------------===//

#include "Image.h"
#include "tandem/runtime/CpuKernelPaths.h"
#include "tandem/runtime/ModelImage.h"

#include <gtest/gtest.h>

using namespace tandem::rt;
namespace img = tandem::image;

namespace {

const char kStrings[] = "tandem.op\0model.mlir:1:1\0softmax";

/// An image of one op of `kind` on an f32[4] operand with `attrs`.
std::vector<int64_t> oneOpImage(int64_t kind, std::vector<int64_t> attrs,
                                int64_t version = img::kVersion,
                                int64_t queue = img::kCpuQueue,
                                std::vector<int64_t> waits = {},
                                int64_t producer = -1,
                                int64_t predictedNs = 2500,
                                int64_t numKernels = 0) {
  std::vector<int64_t> record = {kind, img::kCpu, /*arenaOffset=*/0,
                                 /*name=*/0, /*loc=*/10, /*family=*/25, queue,
                                 predictedNs,
                                 int64_t(waits.size())};
  record.insert(record.end(), waits.begin(), waits.end());
  record.insert(record.end(), {/*operands=*/1, img::kCpu, producer,
                               img::kF32, 1, 4,
                               /*result=*/img::kF32, 1, 4,
                               int64_t(attrs.size())});
  record.insert(record.end(), attrs.begin(), attrs.end());
  std::vector<int64_t> words = {img::kMagic, version, 0, 0, 0, 1, 16, 0, 0,
                                /*scheduled=*/1, /*makespanNs=*/2500,
                                /*serialNs=*/2500, numKernels,
                                /*ptxOffset=*/-1, /*atLoadOffset=*/-1};
  words.push_back(record.size() + 1);
  words.insert(words.end(), record.begin(), record.end());
  return words;
}

/// The image of one fused group with `attrs` (FusedAttrs and its parts'
/// words), in a model whose kernel table has one kernel.
std::vector<int64_t> fusedImage(std::vector<int64_t> attrs) {
  return oneOpImage(img::kFused, attrs, img::kVersion, img::kCpuQueue, {}, -1,
                    2500, /*numKernels=*/1);
}

void noKernel(void *const *, void *, int64_t, int64_t) {}
const img::FusedKernel kOneKernel[] = {noKernel};

std::string decodeError(const std::vector<int64_t> &words,
                        const img::FusedKernel *kernels = nullptr) {
  Image image;
  std::string error;
  EXPECT_FALSE(decodeImage(words.data(), kStrings, kernels, image, error));
  return error;
}

TEST(ImageTest, DecodesAnOpWithItsAttributes) {
  Image image;
  std::string error;
  std::vector<int64_t> words = oneOpImage(img::kSoftmax, {0});
  ASSERT_TRUE(decodeImage(words.data(), kStrings, nullptr, image, error)) << error;
  ASSERT_EQ(image.ops.size(), 1u);
  EXPECT_EQ(image.ops[0].kind, img::kSoftmax);
  EXPECT_EQ(image.ops[0].name, "tandem.op");
  EXPECT_EQ(image.ops[0].loc, "model.mlir:1:1");
  EXPECT_EQ(image.ops[0].family, "softmax");
  EXPECT_EQ(img::readAttrs<img::AxisAttrs>(image.ops[0].attrs).axis, 0);
  EXPECT_EQ(image.ops[0].operands[0].shape, std::vector<int64_t>{4});
  EXPECT_DOUBLE_EQ(image.ops[0].predictedSeconds, 2.5e-6);
  EXPECT_DOUBLE_EQ(image.predictedMakespanSeconds, 2.5e-6);
}

TEST(ImageTest, ListKindsTakeAnyNumberOfWords) {
  Image image;
  std::string error;
  std::vector<int64_t> words = oneOpImage(img::kReduceSum, {0, 1, 2});
  EXPECT_TRUE(decodeImage(words.data(), kStrings, nullptr, image, error)) << error;
}

TEST(ImageTest, RefusesAnUnknownKind) {
  EXPECT_EQ(decodeError(oneOpImage(999, {})),
            "the model image is corrupt: op #0 has kind 999, which this "
            "runtime does not know");
  EXPECT_NE(decodeError(oneOpImage(-1, {})).find("has kind -1"),
            std::string::npos);
  EXPECT_NE(decodeError(oneOpImage(img::kNumOpKinds, {})).find("does not know"),
            std::string::npos);
}

TEST(ImageTest, RefusesAWaitOrProducerThatIsNotAnEarlierOp) {
  // One op: nothing earlier to wait for or read, and four queues.
  std::string bad = "the model image is corrupt: op #0 has a bad queue, "
                    "predicted time, wait or operand producer";
  EXPECT_EQ(decodeError(oneOpImage(img::kRelu, {}, img::kVersion,
                                   img::kCpuQueue, {0})), bad);
  EXPECT_EQ(decodeError(oneOpImage(img::kRelu, {}, img::kVersion,
                                   img::kCpuQueue, {}, 0)), bad);
  EXPECT_EQ(decodeError(oneOpImage(img::kRelu, {}, img::kVersion,
                                   img::kNumQueues)), bad);
  EXPECT_EQ(decodeError(oneOpImage(img::kRelu, {}, img::kVersion, -1)), bad);
  EXPECT_EQ(decodeError(oneOpImage(img::kRelu, {}, img::kVersion,
                                   img::kCpuQueue, {}, -1, -1)), bad);
}

TEST(ImageTest, RefusesAWrongAttributeCount) {
  EXPECT_EQ(decodeError(oneOpImage(img::kConv2d, {1, 1, 0})),
            "the model image is corrupt: op #0 (Conv2d) has 3 attribute "
            "words, expected 10");
  EXPECT_NE(decodeError(oneOpImage(img::kRelu, {7})).find("expected 0"),
            std::string::npos);
}

TEST(ImageTest, RefusesARecordWhoseLengthDisagrees) {
  std::vector<int64_t> words = oneOpImage(img::kReduceSum, {0});
  words[img::kHeaderWords] += 1; // the op's word count
  EXPECT_NE(decodeError(words).find("(ReduceSum) has 1 attribute words"),
            std::string::npos);
}

TEST(ImageTest, AFusedGroupRunsAKernelOfTheTable) {
  auto image = [](int64_t kernel, int64_t numKernels) {
    return oneOpImage(img::kFused,
                      {kernel, /*costPerElement=*/1, /*producerKind=*/-1,
                       /*producerOperands=*/0, /*consumerKind=*/-1,
                       /*consumerOperands=*/0},
                      img::kVersion, img::kCpuQueue, {}, -1, 2500, numKernels);
  };
  Image decoded;
  std::string error;
  std::vector<int64_t> words = image(0, 1);
  EXPECT_TRUE(decodeImage(words.data(), kStrings, kOneKernel, decoded, error))
      << error;
  EXPECT_EQ(decoded.kernels, kOneKernel);
  EXPECT_EQ(decodeError(image(1, 1), kOneKernel),
            "the model image is corrupt: op #0 runs generated kernel 1 of 1");
  EXPECT_EQ(decodeError(image(-1, 1), kOneKernel),
            "the model image is corrupt: op #0 runs generated kernel -1 of 1");
  EXPECT_EQ(decodeError(image(0, 1)),
            "the model has generated kernels but no kernel table was given");
  EXPECT_EQ(decodeError(image(0, -1)),
            "the model image is corrupt: a negative kernel count");
}

/// Each fused group of `attrs` (FusedAttrs and its parts' words) decodes.
void expectFusedAccepted(const std::vector<std::vector<int64_t>> &attrs) {
  for (const std::vector<int64_t> &group : attrs) {
    Image decoded;
    std::string error;
    std::vector<int64_t> words = fusedImage(group);
    EXPECT_TRUE(decodeImage(words.data(), kStrings, kOneKernel, decoded, error))
        << error;
  }
}

/// Each fused group of `attrs` is refused with `message`.
void expectFusedRefused(const std::vector<std::vector<int64_t>> &attrs,
                        const std::string &message) {
  for (size_t k = 0; k < attrs.size(); ++k)
    EXPECT_EQ(decodeError(fusedImage(attrs[k]), kOneKernel), message)
        << "group #" << k;
}

const char kBadProducer[] = "the model image is corrupt: op #0 is a fused "
                            "group with a bad producer (kind, operands or "
                            "attribute words)";
const char kBadConsumer[] = "the model image is corrupt: op #0 is a fused "
                            "group with a bad consumer (kind, operands or "
                            "attribute words)";

TEST(ImageTest, AFusedGroupsProducerIsChecked) {
  // The image's op has one operand: a Relu producer (no attributes) reading
  // operand 0 is whole; anything else is refused.
  expectFusedAccepted({{0, 1, img::kRelu, 1, -1, 0, 0}});
  expectFusedRefused({{0, 1, img::kRelu, 1, -1, 0, 1},
                      {0, 1, img::kRelu, 2, -1, 0, 0},
                      {0, 1, img::kFused, 1, -1, 0, 0},
                      {0, 1, img::kSoftmax, 1, -1, 0, 0},
                      {0, 1, img::kRelu, 1, -1, 0, 0, 7}},
                     kBadProducer);
  expectFusedRefused({{0, 1}}, "the model image is corrupt: op #0 is a fused "
                               "group with 2 attribute words, fewer than 6");
}

TEST(ImageTest, AFusedGroupsConsumerIsChecked) {
  // A softmax or log_softmax (one attribute word: its axis) or an
  // l2_normalize (its axis and epsilon) after the kernel, alone or after a
  // Relu producer reading operand 0; a layer norm reading operand 0 as its
  // scale and shift.
  expectFusedAccepted({{0, 1, -1, 0, img::kSoftmax, 0, -1},
                       {0, 1, img::kRelu, 1, img::kSoftmax, 0, 0, -1},
                       {0, 1, -1, 0, img::kLogSoftmax, 0, -1},
                       {0, 1, -1, 0, img::kL2Normalize, 0, -1, 0},
                       {0, 1, -1, 0, img::kLayerNorm, 2, 0, 0, 1, 0}});
  expectFusedRefused({{0, 1, -1, 0, img::kSoftmax, 0},
                      {0, 1, -1, 0, img::kSoftmax, 1, 3, -1},
                      {0, 1, -1, 0, img::kSoftmax, 0, -1, 5},
                      {0, 1, -1, 0, img::kFused, 0, -1},
                      {0, 1, -1, 0, -1, 1, 0},
                      // Only a row normalization alone or a layer norm with
                      // its scale and shift runs in place.
                      {0, 1, -1, 0, img::kLayerNorm, 0, 1, 0},
                      {0, 1, -1, 0, img::kLogSoftmax, 1, 0, -1},
                      {0, 1, -1, 0, img::kL2Normalize, 0, -1},
                      {0, 1, -1, 0, img::kBatchNorm, 0, 0}},
                     kBadConsumer);
}

TEST(ImageTest, AFusedGroupsReductionIsChecked) {
  // A reduction after the kernel, with no producer and no other operand:
  // its one word is the elements it folds into each output, 1 to
  // kReducePieceElements.
  for (int64_t kind :
       {img::kReduceSum, img::kReduceMean, img::kReduceMax, img::kReduceMin})
    for (int64_t count : {int64_t(1), kReducePieceElements})
      expectFusedAccepted({{0, 1, -1, 0, kind, 0, count}});
  expectFusedRefused(
      {{0, 1, -1, 0, img::kReduceSum, 0, 0},
       {0, 1, -1, 0, img::kReduceSum, 0, kReducePieceElements + 1},
       {0, 1, -1, 0, img::kReduceMax, 0},
       {0, 1, -1, 0, img::kReduceMax, 0, 4, 4}},
      "the model image is corrupt: op #0 is a fused group whose reduction "
      "does not fold 1 to 32768 elements into each output");
  // Not after a producer (its product would be the reduction's buffer),
  // and reading nothing else.
  expectFusedRefused({{0, 1, img::kRelu, 1, img::kReduceSum, 0, 0, 4},
                      {0, 1, -1, 0, img::kReduceSum, 1, 0, 4},
                      {0, 1, -1, 0, img::kArgmax, 0, 4}},
                     kBadConsumer);
}

TEST(ImageTest, RefusesAnotherVersion) {
  EXPECT_EQ(decodeError(oneOpImage(img::kRelu, {}, img::kVersion - 1)),
            "the model image is corrupt or from another version of Tandem");
}

TEST(ImageTest, KindsAreListedOnce) {
  // The enum, the names, the families and the attribute counts all come
  // from OpKinds.def: spot-check that they line up.
  EXPECT_STREQ(img::kindName(img::kTransfer), "Transfer");
  EXPECT_STREQ(img::kindName(img::kConstant), "Constant");
  EXPECT_EQ(img::familyOf(img::kConv2d), img::KernelFamily::Conv);
  EXPECT_EQ(img::familyOf(img::kGather), img::KernelFamily::DataMovement);
  EXPECT_EQ(img::attrWordCount(img::kConv2d), 10);
  EXPECT_EQ(img::attrWordCount(img::kMaxPool2d), 6);
  EXPECT_EQ(img::attrWordCount(img::kAdd), 0);
  EXPECT_EQ(img::attrWordCount(img::kSlice), -1);
}

/// A model of no ops reading one folded weight (f32[4], at-load result 0),
/// followed by an at-load image of no ops returning `atLoadResult`
/// (dtype, rank, dims...), or by nothing when it is empty.
std::vector<int64_t> foldedWeightImage(std::vector<int64_t> atLoadResult) {
  std::vector<int64_t> words = {img::kMagic, img::kVersion, 0, 0,
                                /*weights=*/1, /*ops=*/0, 16, 0, 0, 0, 0, 0,
                                0, /*ptxOffset=*/-1, /*atLoadOffset=*/-1,
                                /*name=*/0, img::kCpu, /*arenaOffset=*/0,
                                /*folded=*/0, img::kF32, 1, 4};
  if (atLoadResult.empty())
    return words;
  words[img::kAtLoadOffsetWord] = int64_t(words.size());
  std::vector<int64_t> atLoad = {img::kMagic, img::kVersion, 0,
                                 /*outputs=*/1, 0, 0, 16, 0, 0, 0, 0, 0, 0,
                                 -1, -1};
  atLoad.insert(atLoad.end(), atLoadResult.begin(), atLoadResult.end());
  words.insert(words.end(), atLoad.begin(), atLoad.end());
  return words;
}

TEST(ImageTest, DecodesTheAtLoadFunctionAfterTheModel) {
  Image image;
  std::string error;
  std::vector<int64_t> words = foldedWeightImage({img::kF32, 1, 4});
  ASSERT_TRUE(decodeImage(words.data(), kStrings, nullptr, image, error)) << error;
  ASSERT_TRUE(image.atLoad);
  EXPECT_EQ(image.weights[0].folded, 0);
  EXPECT_EQ(image.atLoad->outputs.size(), 1u);
  EXPECT_FALSE(image.atLoad->atLoad);
}

TEST(ImageTest, RefusesAFoldedWeightNothingComputes) {
  EXPECT_EQ(decodeError(foldedWeightImage({})),
            "the model image is corrupt: it has weights computed at load but "
            "no at-load function");
  EXPECT_EQ(decodeError(foldedWeightImage({img::kF32, 1, 8})),
            "the model image is corrupt: its at-load function does not "
            "compute its folded weights");
}

} // namespace

