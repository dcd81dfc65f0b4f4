//===- SetUpTest.cpp - what a run refuses before it starts ----------------===//
//
// setUp checks the options against the model before anything runs:
// --sim-timing=profile needs the compiler's predicted times in the image.
//
//===----------------------------------------------------------------------===//

#include "Image.h"
#include "RuntimeState.h"
#include "tandem/runtime/ModelImage.h"

#include <gtest/gtest.h>

using namespace tandem::rt;
namespace img = tandem::image;

namespace {

const char kStrings[] = "tandem.relu\0model.mlir:1:1\0elementwise";

/// A one-op model (a relu on the CPU), scheduled, with `predictedNs` as its
/// op's and the run's predicted times.
std::vector<int64_t> reluImage(int64_t predictedNs) {
  std::vector<int64_t> record = {img::kRelu, img::kCpu, /*arenaOffset=*/0,
                                 /*name=*/0, /*loc=*/12, /*family=*/27,
                                 img::kCpuQueue,
                                 predictedNs, /*waits=*/0,
                                 /*operands=*/1, img::kCpu, -1, img::kF32, 1, 4,
                                 /*result=*/img::kF32, 1, 4, /*attrs=*/0};
  std::vector<int64_t> words = {img::kMagic, img::kVersion, /*inputs=*/1,
                                /*outputs=*/1, /*weights=*/0, /*ops=*/1,
                                /*cpuArena=*/64, /*gpuArena=*/0,
                                /*budget=*/0, /*scheduled=*/1, predictedNs,
                                predictedNs, /*kernels=*/0, /*ptx=*/-1,
                                /*atLoad=*/-1};
  words.insert(words.end(), {img::kF32, 1, 4, img::kF32, 1, 4});
  words.push_back(record.size() + 1);
  words.insert(words.end(), record.begin(), record.end());
  return words;
}

bool setUpWith(int64_t predictedNs, std::string &error) {
  TandemRuntime rt;
  std::vector<int64_t> words = reluImage(predictedNs);
  EXPECT_TRUE(decodeImage(words.data(), kStrings, nullptr, rt.image, error)) << error;
  rt.options.backend = "sim";
  rt.options.simTiming = true;
  bool ok = setUp(rt, error);
  tearDown(rt);
  return ok;
}

TEST(SetUpTest, SimTimingNeedsPredictedTimes) {
  std::string error;
  EXPECT_FALSE(setUpWith(0, error));
  EXPECT_NE(error.find("--sim-timing=profile needs the predicted times of a "
                       "device profile, and this model was compiled without "
                       "one"),
            std::string::npos)
      << error;
  error.clear();
  EXPECT_TRUE(setUpWith(1500, error)) << error;
}

} // namespace
