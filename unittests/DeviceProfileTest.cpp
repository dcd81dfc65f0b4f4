//===- DeviceProfileTest.cpp - profiles, sizes and the cost model ---------===//

#include "TestUtils.h"
#include "tandem/Analysis/CostModel.h"
#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"

using namespace mlir;
using namespace mlir::tandem;

namespace {

TEST(DeviceProfileTest, BuiltinsHaveSourcesAndSaneFigures) {
  for (llvm::StringRef name : getBuiltinProfileNames()) {
    std::optional<DeviceProfile> profile = getBuiltinProfile(name);
    ASSERT_TRUE(profile) << name.str();
    EXPECT_EQ(profile->name, name);
    EXPECT_FALSE(profile->source.empty());
    EXPECT_GT(profile->cpu.f32Flops, 1e11);
    if (name == "host") {
      EXPECT_FALSE(profile->gpu);
      continue;
    }
    ASSERT_TRUE(profile->gpu);
    // The GPU is the faster device, the link the slowest path.
    EXPECT_GT(profile->gpu->f32Flops, profile->cpu.f32Flops);
    EXPECT_GT(profile->gpu->memoryBandwidth, profile->cpu.memoryBandwidth);
    EXPECT_LT(profile->h2d().bandwidth, profile->cpu.memoryBandwidth);
  }
  EXPECT_EQ(getBuiltinProfile("v100-32gb")->gpu->memoryBytes, 32LL << 30);
  EXPECT_FALSE(getBuiltinProfile("tpu"));
}

TEST(DeviceProfileTest, JsonRoundTrip) {
  DeviceProfile original = *getBuiltinProfile("a100-80gb");
  std::string text;
  llvm::raw_string_ostream os(text);
  os << toJSON(original);
  llvm::Expected<DeviceProfile> parsed = parseDeviceProfile(os.str(), "test");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->name, original.name);
  EXPECT_DOUBLE_EQ(parsed->gpu->f16Flops, original.gpu->f16Flops);
  EXPECT_DOUBLE_EQ(parsed->d2hPageable.bandwidth,
                   original.d2hPageable.bandwidth);
  EXPECT_EQ(parsed->cpu.memoryBytes, original.cpu.memoryBytes);
}

TEST(DeviceProfileTest, ErrorsNameTheProblem) {
  auto error = [](llvm::StringRef json) {
    llvm::Expected<DeviceProfile> parsed = parseDeviceProfile(json, "p.json");
    EXPECT_FALSE(bool(parsed));
    return parsed ? std::string() : llvm::toString(parsed.takeError());
  };
  EXPECT_NE(error("{").find("malformed JSON"), std::string::npos);
  EXPECT_NE(error("[]").find("expected a JSON object"), std::string::npos);
  EXPECT_NE(error(R"({"name": "x"})").find("missing field 'profile.cpu'"),
            std::string::npos);
  std::string json = R"({"name": "x", "cpu": {"name": "c", "peak_flops":
      {"f32": -1, "f16": 1, "bf16": 1, "int": 1}, "memory_bandwidth": 1,
      "dispatch_us": 0, "memory_bytes": 1}, "gpu": null})";
  EXPECT_NE(error(json).find("'profile.cpu.peak_flops.f32' must be a number from 1 to 1e21"),
            std::string::npos);
  llvm::Expected<DeviceProfile> unknown = loadDeviceProfile("tpu-v5");
  ASSERT_FALSE(bool(unknown));
  EXPECT_NE(llvm::toString(unknown.takeError()).find("unknown device profile"),
            std::string::npos);
}

TEST(DeviceProfileTest, ByteSizes) {
  EXPECT_EQ(*parseByteSize("4096"), 4096);
  EXPECT_EQ(*parseByteSize("4GiB"), 4LL << 30);
  EXPECT_EQ(*parseByteSize("512 MiB"), 512LL << 20);
  EXPECT_EQ(*parseByteSize("1.5GiB"), 3LL << 29);
  EXPECT_EQ(*parseByteSize("2GB"), 2000000000LL);
  for (const char *bad : {"", "GiB", "4 gigs", "-1", "1e99GiB", "4GiB4"}) {
    llvm::Expected<int64_t> size = parseByteSize(bad);
    EXPECT_FALSE(bool(size)) << bad;
    llvm::consumeError(size.takeError());
  }
}

TEST(DeviceProfileTest, RooflinePlusDispatch) {
  ProcessorProfile p;
  p.f32Flops = 1e12;
  p.memoryBandwidth = 1e11;
  p.dispatchUs = 2;
  MLIRContext context;
  Type f32 = Float32Type::get(&context);
  // Compute-bound: 2e9 FLOPs at 1 TFLOP/s = 2000 us.
  EXPECT_DOUBLE_EQ(estimateOpTimeUs({2000000000, 1000, 1000}, f32, p), 2002.0);
  // Memory-bound: 1e9 bytes at 100 GB/s = 10000 us.
  EXPECT_DOUBLE_EQ(estimateOpTimeUs({1000, 500000000, 500000000}, f32, p),
                   10002.0);
  // No work at all: nothing to launch.
  EXPECT_DOUBLE_EQ(estimateOpTimeUs({0, 0, 0}, f32, p), 0.0);
}

class CostModelTest : public tandem_test::TandemTest {};

TEST_F(CostModelTest, GemmIsFasterOnTheGpuAndTinyOpsOnTheCpu) {
  // Each parseFirst replaces the module: use each op before the next parse.
  DeviceProfile h200 = *getBuiltinProfile("h200");
  auto big = parseFirst<MatmulOp>(R"(
    func.func @main(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) {
      %r = tandem.matmul %a, %b : (tensor<4096x4096xf32>, tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
      return
    })");
  double cpu = *estimateOpTimeUs(big, DeviceKind::CPU, h200);
  double gpu = *estimateOpTimeUs(big, DeviceKind::GPU, h200);
  EXPECT_GT(cpu / gpu, 5);
  auto tiny = parseFirst<AddOp>(R"(
    func.func @main(%a: tensor<16xf32>) {
      %r = tandem.add %a, %a : tensor<16xf32>
      return
    })");
  EXPECT_LT(*estimateOpTimeUs(tiny, DeviceKind::CPU, h200),
            *estimateOpTimeUs(tiny, DeviceKind::GPU, h200));
  EXPECT_FALSE(estimateOpTimeUs(tiny, DeviceKind::GPU,
                                *getBuiltinProfile("host")));
  auto shape = parseFirst<ShapeOp>(R"(
    func.func @main(%a: tensor<16xf32>) {
      %r = tandem.shape %a : tensor<16xf32> -> tensor<1xi64>
      return
    })");
  EXPECT_FALSE(estimateOpTimeUs(shape, DeviceKind::GPU, h200));
}

} // namespace
