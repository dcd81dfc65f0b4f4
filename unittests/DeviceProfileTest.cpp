//===- DeviceProfileTest.cpp - profiles, sizes and the cost model ---------===//

#include "TestUtils.h"
#include "tandem/Analysis/CostModel.h"
#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "llvm/Support/FormatVariadic.h"

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

// The h200 profile's GPU families are the GPU benchmark's measurements (its
// source says so): GEMMs above the derated rate, the one-element-a-thread
// kernels below the sustained bandwidth, a family without a case at the
// roofline; and a profile written out and read back keeps them.
TEST(DeviceProfileTest, H200CarriesItsMeasuredGpuFamilies) {
  DeviceProfile h200 = *getBuiltinProfile("h200");
  const ProcessorProfile &gpu = *h200.gpu;
  EXPECT_NE(gpu.familySource.find("measured on an H200"), std::string::npos);
  EXPECT_DOUBLE_EQ(gpu.family(CostFamily::Gemm).computeEfficiency, 1.09);
  EXPECT_DOUBLE_EQ(gpu.family(CostFamily::Softmax).memoryEfficiency, 0.46);
  EXPECT_DOUBLE_EQ(gpu.family(CostFamily::Transcendental).memoryEfficiency, 1.0);
  for (int k = 0; k < kNumCostFamilies; ++k)
    EXPECT_DOUBLE_EQ(gpu.families[k].fixedUs, gpu.dispatchUs);
  // The CPU side is not measured: the roofline for every family.
  EXPECT_DOUBLE_EQ(h200.cpu.family(CostFamily::Softmax).memoryEfficiency, 1.0);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << toJSON(h200);
  llvm::Expected<DeviceProfile> parsed = parseDeviceProfile(os.str(), "test");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_DOUBLE_EQ(parsed->gpu->family(CostFamily::Pool).memoryEfficiency, 0.22);
  EXPECT_EQ(parsed->gpu->familySource, gpu.familySource);
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
  p.setUniformFamilies(p.dispatchUs);
  MLIRContext context;
  Type f32 = Float32Type::get(&context);
  // Compute-bound: 2e9 FLOPs at 1 TFLOP/s = 2000 us.
  EXPECT_DOUBLE_EQ(estimateOpTimeUs({2000000000, 1000, 1000}, f32, CostFamily::Elementwise, p), 2002.0);
  // Memory-bound: 1e9 bytes at 100 GB/s = 10000 us.
  EXPECT_DOUBLE_EQ(estimateOpTimeUs({1000, 500000000, 500000000}, f32, CostFamily::Elementwise, p),
                   10002.0);
  // No work at all: nothing to launch.
  EXPECT_DOUBLE_EQ(estimateOpTimeUs({0, 0, 0}, f32, CostFamily::Elementwise, p), 0.0);
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

TEST(DeviceProfileTest, FamiliesPriceTheirOwnRoofline) {
  ProcessorProfile p;
  p.f32Flops = 1e12;
  p.memoryBandwidth = 1e11;
  p.setUniformFamilies(2);
  p.family(CostFamily::Conv) = {/*compute=*/0.5, /*memory=*/0.25, /*fixed=*/10};
  MLIRContext context;
  Type f32 = Float32Type::get(&context);
  // 2e9 FLOPs at half of 1 TFLOP/s, 1e8 bytes at a quarter of 100 GB/s.
  EXPECT_DOUBLE_EQ(estimateOpTimeUs({2000000000, 50000000, 50000000}, f32,
                                    CostFamily::Conv, p),
                   10 + 4000.0);
  EXPECT_DOUBLE_EQ(estimateOpTimeUs({1000, 500000000, 500000000}, f32,
                                    CostFamily::Conv, p),
                   10 + 40000.0);
  // Another family is unaffected.
  EXPECT_DOUBLE_EQ(estimateOpTimeUs({2000000000, 1000, 1000}, f32,
                                    CostFamily::Gemm, p),
                   2002.0);
}

TEST(DeviceProfileTest, FamilyNamesRoundTrip) {
  for (int k = 0; k < kNumCostFamilies; ++k)
    EXPECT_EQ(parseCostFamily(costFamilyName(CostFamily(k))), CostFamily(k));
  EXPECT_FALSE(parseCostFamily("convolution"));
}

TEST(DeviceProfileTest, FamiliesInJson) {
  DeviceProfile original = *getBuiltinProfile("host");
  original.cpu.family(CostFamily::Softmax) = {0.01, 0.1, 4.5};
  original.cpu.family(CostFamily::Gemm) = {0.8, 1, 3, 1.25};
  original.cpu.familySource = "calibrated: a test";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << toJSON(original);
  llvm::Expected<DeviceProfile> parsed = parseDeviceProfile(os.str(), "test");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const FamilyCost &softmax = parsed->cpu.family(CostFamily::Softmax);
  EXPECT_DOUBLE_EQ(softmax.computeEfficiency, 0.01);
  EXPECT_DOUBLE_EQ(softmax.memoryEfficiency, 0.1);
  EXPECT_DOUBLE_EQ(softmax.fixedUs, 4.5);
  EXPECT_FALSE(softmax.inlineFixedUs);
  ASSERT_TRUE(parsed->cpu.family(CostFamily::Gemm).inlineFixedUs);
  EXPECT_DOUBLE_EQ(*parsed->cpu.family(CostFamily::Gemm).inlineFixedUs, 1.25);
  EXPECT_EQ(parsed->cpu.familySource, "calibrated: a test");

  // A profile without families prices every family at the roofline plus
  // its dispatch cost, and says so; a family may be left out.
  std::string base = R"({"name": "x", "gpu": null, "cpu": {"name": "c",
      "peak_flops": {"f32": 1e12, "f16": 1e12, "bf16": 1e12, "int": 1e12},
      "memory_bandwidth": 1e11, "dispatch_us": 3, "memory_bytes": 1024)";
  llvm::Expected<DeviceProfile> plain = parseDeviceProfile(base + "}}", "p");
  ASSERT_TRUE(bool(plain)) << llvm::toString(plain.takeError());
  EXPECT_DOUBLE_EQ(plain->cpu.family(CostFamily::Gather).fixedUs, 3);
  EXPECT_DOUBLE_EQ(plain->cpu.family(CostFamily::Gather).memoryEfficiency, 1);
  EXPECT_NE(plain->cpu.familySource.find("not calibrated"), std::string::npos);
  llvm::Expected<DeviceProfile> one = parseDeviceProfile(
      base + R"(, "families": {"gemm": {"compute_efficiency": 0.5,
      "memory_efficiency": 2, "fixed_us": 7}}}})",
      "p");
  ASSERT_TRUE(bool(one)) << llvm::toString(one.takeError());
  EXPECT_DOUBLE_EQ(one->cpu.family(CostFamily::Gemm).fixedUs, 7);
  EXPECT_DOUBLE_EQ(one->cpu.family(CostFamily::Conv).fixedUs, 3);
  // A profile from before conv_stem prices stems as its dense convolutions;
  // one that names conv_stem keeps its own figures.
  llvm::Expected<DeviceProfile> older = parseDeviceProfile(
      base + R"(, "families": {"conv": {"compute_efficiency": 0.4,
      "memory_efficiency": 0.8, "fixed_us": 9}}}})",
      "p");
  ASSERT_TRUE(bool(older)) << llvm::toString(older.takeError());
  EXPECT_DOUBLE_EQ(older->cpu.family(CostFamily::ConvStem).computeEfficiency,
                   0.4);
  EXPECT_DOUBLE_EQ(older->cpu.family(CostFamily::ConvStem).fixedUs, 9);
  EXPECT_DOUBLE_EQ(one->cpu.family(CostFamily::GemmSkinny).fixedUs, 7);
  EXPECT_DOUBLE_EQ(one->cpu.family(CostFamily::GemmSkinny).computeEfficiency,
                   0.5);
  llvm::Expected<DeviceProfile> newer = parseDeviceProfile(
      base + R"(, "families": {"conv": {"compute_efficiency": 0.4,
      "memory_efficiency": 0.8, "fixed_us": 9}, "conv_stem": {
      "compute_efficiency": 0.1, "memory_efficiency": 0.3, "fixed_us": 4}}}})",
      "p");
  ASSERT_TRUE(bool(newer)) << llvm::toString(newer.takeError());
  EXPECT_DOUBLE_EQ(newer->cpu.family(CostFamily::ConvStem).computeEfficiency,
                   0.1);
  EXPECT_DOUBLE_EQ(newer->cpu.family(CostFamily::ConvStem).fixedUs, 4);

  auto error = [&](llvm::StringRef families) {
    llvm::Expected<DeviceProfile> parsed = parseDeviceProfile(
        base + ", \"families\": " + families.str() + "}}", "p.json");
    EXPECT_FALSE(bool(parsed)) << families.str();
    return parsed ? std::string() : llvm::toString(parsed.takeError());
  };
  EXPECT_NE(error(R"({"convolution": {}})")
                .find("unknown op family 'convolution' in 'profile.cpu."
                      "families': expected one of gemm, gemm_skinny, conv,"),
            std::string::npos);
  EXPECT_NE(error(R"({"gemm": {"compute_efficiency": 0, "memory_efficiency":
                1, "fixed_us": 1}})")
                .find("'profile.cpu.families.gemm.compute_efficiency' must be "
                      "a fraction of the roofline from 0.0001 to 100"),
            std::string::npos);
  EXPECT_NE(error(R"({"gemm": {"compute_efficiency": 1}})")
                .find("missing field 'profile.cpu.families.gemm."
                      "memory_efficiency'"),
            std::string::npos);
  EXPECT_NE(error(R"([1])").find("'profile.cpu.families' must be an object"),
            std::string::npos);
}

class CostFamilyTest : public tandem_test::TandemTest {
protected:
  /// The family of the first OpTy of a function of `body` over `args`.
  template <typename OpTy>
  CostFamily family(llvm::StringRef body, llvm::StringRef args) {
    std::string text =
        ("func.func @main(" + args + ") {\n  " + body + "\n  return\n}").str();
    return costFamilyOf(parseFirst<OpTy>(text));
  }

  /// The h200 profile with both processors at `flops` and `bandwidth`, every
  /// family at the plain roofline.
  static DeviceProfile rooflineProfile(double flops, double bandwidth) {
    DeviceProfile profile = *getBuiltinProfile("h200");
    for (ProcessorProfile *p : {&profile.cpu, &*profile.gpu}) {
      p->f32Flops = flops;
      p->memoryBandwidth = bandwidth;
      p->setUniformFamilies(0);
    }
    return profile;
  }
};

TEST_F(CostFamilyTest, CpuStencilsPayALoopPerOutputRowAndTap) {
  // Compute-bound rates, every family at the plain roofline.
  DeviceProfile profile = rooflineProfile(1e9, 1e15);
  auto conv = parseFirst<Conv2dOp>(R"(
    func.func @main(%x: tensor<1x4x32x32xf32>, %w: tensor<4x1x3x3xf32>) {
      %r = tandem.conv2d %x, %w {padding = array<i64: 1, 1>, groups = 4 : i64} : (tensor<1x4x32x32xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x32x32xf32>
      return
    })");
  // 2 * 4 * 32 * 32 * 9 = 73728 FLOPs at 1 GFLOP/s; on the CPU also 4
  // planes x 32 rows x 9 taps = 1152 loops of 48 FLOPs each.
  EXPECT_DOUBLE_EQ(*estimateOpTimeUs(conv, DeviceKind::GPU, profile), 73.728);
  EXPECT_DOUBLE_EQ(*estimateOpTimeUs(conv, DeviceKind::CPU, profile),
                   73.728 + 55.296);
  // Fused with its epilogue, the stencil pays the same loops (it once read
  // a window from an op that is not a convolution).
  auto fused = parseFirst<FusedOp>(R"(
    func.func @main(%x: tensor<1x4x32x32xf32>, %w: tensor<4x1x3x3xf32>) {
      %r = tandem.fused(%x, %w) : (tensor<1x4x32x32xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x32x32xf32> {
      ^bb0(%a: tensor<1x4x32x32xf32>, %b: tensor<4x1x3x3xf32>):
        %c = tandem.conv2d %a, %b {padding = array<i64: 1, 1>, groups = 4 : i64} : (tensor<1x4x32x32xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x32x32xf32>
        %d = tandem.relu %c : tensor<1x4x32x32xf32>
        tandem.yield %d : tensor<1x4x32x32xf32>
      }
      return
    })");
  double onGpu = *estimateOpTimeUs(fused, DeviceKind::GPU, profile);
  EXPECT_GE(onGpu, 73.728);
  EXPECT_DOUBLE_EQ(*estimateOpTimeUs(fused, DeviceKind::CPU, profile),
                   onGpu + 55.296);
  // Over rows under 32 wide the CPU runs the channels side by side, with no
  // loop per row: the roofline alone.
  auto narrow = parseFirst<Conv2dOp>(R"(
    func.func @main(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
      %r = tandem.conv2d %x, %w {padding = array<i64: 1, 1>, groups = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x8x8xf32>
      return
    })");
  EXPECT_DOUBLE_EQ(*estimateOpTimeUs(narrow, DeviceKind::CPU, profile), 4.608);
}

TEST_F(CostFamilyTest, CpuIm2colBytesExceptWhereA1x1ConvolutionIsInPlace) {
  // Memory-bound rates, every family at the plain roofline: the CPU's time
  // beyond the GPU's is the bytes its im2col moves, at 1 GB/s.
  DeviceProfile profile = rooflineProfile(1e15, 1e9);
  auto pointwise = [&](int64_t side) {
    std::string x = llvm::formatv("tensor<2x8x{0}x{0}xf32>", side).str();
    return parseFirst<Conv2dOp>(
        "func.func @main(%x: " + x + ", %w: tensor<8x8x1x1xf32>) {\n"
        "  %r = tandem.conv2d %x, %w : (" + x + ", tensor<8x8x1x1xf32>) -> " +
        x + "\n  return\n}");
  };
  // Images of 64 pixels: multiplied in place, no columns, no scatter.
  Conv2dOp inPlace = pointwise(8);
  EXPECT_DOUBLE_EQ(*estimateOpTimeUs(inPlace, DeviceKind::CPU, profile),
                   *estimateOpTimeUs(inPlace, DeviceKind::GPU, profile));
  // Images of 16 pixels side by side: 8 rows x 2 images x 16 pixels of
  // columns, written and read, and the product scattered back (2 x 256
  // elements): 4096 bytes, 4.096 us.
  Conv2dOp sideBySide = pointwise(4);
  EXPECT_NEAR(*estimateOpTimeUs(sideBySide, DeviceKind::CPU, profile) -
                  *estimateOpTimeUs(sideBySide, DeviceKind::GPU, profile),
              4.096, 1e-9);
}

TEST_F(CostFamilyTest, CpuIm2colConvolutionsCopyThenMultiply) {
  // A dense 3x3 convolution: on the CPU its im2col copy and its GEMM run
  // one after the other, so its compute and memory times add; on the GPU
  // they overlap (the larger). A grouped one too; a 1x1 in place overlaps.
  auto conv = [&](int64_t groups, int64_t kernel) {
    std::string w =
        llvm::formatv("tensor<8x{0}x{1}x{1}xf32>", 8 / groups, kernel).str();
    int64_t pad = kernel / 2;
    return parseFirst<Conv2dOp>(
        "func.func @main(%x: tensor<2x8x16x16xf32>, %w: " + w + ") {\n"
        "  %r = tandem.conv2d %x, %w {padding = array<i64: " +
        std::to_string(pad) + ", " + std::to_string(pad) +
        ">, groups = " + std::to_string(groups) + " : i64} : "
        "(tensor<2x8x16x16xf32>, " + w + ") -> tensor<2x8x16x16xf32>\n"
        "  return\n}");
  };
  DeviceProfile both = rooflineProfile(1e9, 1e9),
                computeOnly = rooflineProfile(1e9, 1e18),
                memoryOnly = rooflineProfile(1e18, 1e9);
  auto time = [](Conv2dOp op, DeviceKind kind, const DeviceProfile &p) {
    return *estimateOpTimeUs(op, kind, p);
  };
  // (Each parse replaces the module: the op is parsed in its iteration.)
  for (auto [groups, kernel, phased] :
       {std::tuple{1, 3, true}, {4, 3, true}, {1, 1, false}}) {
    Conv2dOp op = conv(groups, kernel);
    double compute = time(op, DeviceKind::CPU, computeOnly),
           memory = time(op, DeviceKind::CPU, memoryOnly);
    ASSERT_GT(compute, 1);
    ASSERT_GT(memory, 1);
    EXPECT_NEAR(time(op, DeviceKind::CPU, both),
                phased ? compute + memory : std::max(compute, memory), 1e-6);
    EXPECT_NEAR(time(op, DeviceKind::GPU, both),
                std::max(time(op, DeviceKind::GPU, computeOnly),
                         time(op, DeviceKind::GPU, memoryOnly)),
                1e-6);
  }
}

TEST_F(CostFamilyTest, CpuGemmsTooSmallToSplitPayTheInlineFixedCost) {
  // Compute-bound rates; the CPU's GEMMs, skinny (16 rows) or not, cost
  // 10 us fixed, 1 us where they run whole on the calling thread (under
  // 2^18 FLOPs).
  DeviceProfile profile = rooflineProfile(1e9, 1e15);
  for (CostFamily gemm : {CostFamily::Gemm, CostFamily::GemmSkinny}) {
    profile.cpu.family(gemm) = {1, 1, 10, 1};
    profile.gpu->family(gemm) = {1, 1, 10, 1};
  }
  auto linear = [&](int64_t rows) {
    std::string x = llvm::formatv("tensor<{0}x64xf32>", rows).str(),
                y = llvm::formatv("tensor<{0}x64xf32>", rows).str();
    return parseFirst<LinearOp>("func.func @main(%x: " + x +
                                ", %w: tensor<64x64xf32>) {\n"
                                "  %r = tandem.linear %x, %w : (" +
                                x + ", tensor<64x64xf32>) -> " + y +
                                "\n  return\n}");
  };
  // 2 * 16 * 64 * 64 = 131072 FLOPs, 131.072 us: on the calling thread.
  EXPECT_DOUBLE_EQ(*estimateOpTimeUs(linear(16), DeviceKind::CPU, profile),
                   1 + 131.072);
  // 2 * 32 * 64 * 64 = 262144 = 2^18 FLOPs: split over the pool.
  EXPECT_DOUBLE_EQ(*estimateOpTimeUs(linear(32), DeviceKind::CPU, profile),
                   10 + 262.144);
  // A GPU has no calling thread to run it on.
  EXPECT_DOUBLE_EQ(*estimateOpTimeUs(linear(16), DeviceKind::GPU, profile),
                   10 + 131.072);
}

TEST_F(CostFamilyTest, AGroupsConsumerIsPricedByItsOwnFamily) {
  // Memory-bound rates; softmax at a quarter of the bandwidth, the rest at
  // the roofline; fixed costs apart per family.
  DeviceProfile profile = *getBuiltinProfile("h200");
  ProcessorProfile &gpu = *profile.gpu;
  gpu.f32Flops = 1e15;
  gpu.memoryBandwidth = 1e9;
  gpu.setUniformFamilies(0);
  gpu.family(CostFamily::Softmax) = {1, 0.25, 3};
  gpu.family(CostFamily::GemmSkinny).fixedUs = 5; // the 4-row matmul's
  auto fused = parseFirst<FusedOp>(R"(
    func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
      %r = tandem.fused(%a, %b) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> {
      ^bb0(%x: tensor<4x8xf32>, %y: tensor<8x16xf32>):
        %m = tandem.matmul %x, %y : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
        %n = tandem.neg %m : tensor<4x16xf32>
        %s = tandem.softmax %n {axis = -1 : i64} : tensor<4x16xf32>
        tandem.yield %s : tensor<4x16xf32>
      }
      return
    })");
  // The matmul and neg part moves the group's inputs and result (128 + 512 + 256
  // bytes at 1 GB/s: 0.896 us) plus its launch (5 us); the softmax reads
  // and writes the result (512 bytes at a quarter of 1 GB/s: 2.048 us)
  // plus its own 3 us.
  EXPECT_DOUBLE_EQ(*estimateOpTimeUs(fused, DeviceKind::GPU, profile),
                   5 + 0.896 + 3 + 2.048);
}

TEST_F(CostFamilyTest, AGroupsReductionFoldsInTheSameDispatch) {
  // Compute-bound rates; the body's family (elementwise) with a fixed cost
  // of 2 us, the reduction's at half the FLOP rate with one of 7 us.
  DeviceProfile profile = rooflineProfile(1e9, 1e15);
  for (ProcessorProfile *p : {&profile.cpu, &*profile.gpu}) {
    p->family(CostFamily::Elementwise).fixedUs = 2;
    p->family(CostFamily::Reduction) = {0.5, 1, 7};
  }
  auto fused = parseFirst<FusedOp>(R"(
    func.func @main(%a: tensor<4x8xf32>) {
      %r = tandem.fused(%a) : (tensor<4x8xf32>) -> tensor<4x1xf32> {
      ^bb0(%x: tensor<4x8xf32>):
        %s = tandem.mul %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
        %m = tandem.reduce_sum %s {axes = array<i64: -1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
        tandem.yield %m : tensor<4x1xf32>
      }
      return
    })");
  // The mul's 32 FLOPs at 1 GFLOP/s and its dispatch (2 us), then the
  // fold's 32 at half the rate, in the same dispatch: no 7 us of its own.
  for (DeviceKind kind : {DeviceKind::CPU, DeviceKind::GPU})
    EXPECT_DOUBLE_EQ(*estimateOpTimeUs(fused, kind, profile),
                     2 + 0.032 + 0.064);
}

TEST_F(CostFamilyTest, EveryOpHasTheFamilyItsKernelRunsAs) {
  EXPECT_EQ(family<Conv2dOp>("%r = tandem.conv2d %x, %w {groups = 4 : i64} : "
                   "(tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> "
                   "tensor<1x4x6x6xf32>",
                   "%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>"),
            CostFamily::ConvDepthwise);
  EXPECT_EQ(family<Conv2dOp>("%r = tandem.conv2d %x, %w : (tensor<1x4x8x8xf32>, "
                   "tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32>",
                   "%x: tensor<1x4x8x8xf32>, %w: tensor<2x4x1x1xf32>"),
            CostFamily::Conv1x1);
  EXPECT_EQ(family<Conv2dOp>("%r = tandem.conv2d %x, %w : (tensor<1x8x8x8xf32>, "
                   "tensor<2x8x3x3xf32>) -> tensor<1x2x6x6xf32>",
                   "%x: tensor<1x8x8x8xf32>, %w: tensor<2x8x3x3xf32>"),
            CostFamily::Conv);
  // An image's first layer: few input channels.
  EXPECT_EQ(family<Conv2dOp>("%r = tandem.conv2d %x, %w : (tensor<1x3x8x8xf32>, "
                   "tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>",
                   "%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>"),
            CostFamily::ConvStem);
  EXPECT_EQ(family<Conv2dOp>("%r = tandem.conv2d %x, %w : (tensor<1x5x8x8xf32>, "
                   "tensor<16x5x3x3xf32>) -> tensor<1x16x6x6xf32>",
                   "%x: tensor<1x5x8x8xf32>, %w: tensor<16x5x3x3xf32>"),
            CostFamily::Conv);
  // Grouped but not depthwise: a small im2col + GEMM per group.
  EXPECT_EQ(family<Conv2dOp>("%r = tandem.conv2d %x, %w {groups = 2 : i64} : "
                   "(tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>) -> "
                   "tensor<1x4x6x6xf32>",
                   "%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>"),
            CostFamily::ConvGrouped);
  const char *vector = "%a: tensor<16xf32>";
  EXPECT_EQ(family<ReluOp>("%r = tandem.relu %a : tensor<16xf32>", vector),
            CostFamily::Elementwise);
  EXPECT_EQ(family<GeluOp>("%r = tandem.gelu %a : tensor<16xf32>", vector),
            CostFamily::Transcendental);
  EXPECT_EQ(family<SoftmaxOp>("%r = tandem.softmax %a {axis = 0 : i64} : tensor<16xf32>",
                   vector),
            CostFamily::Softmax);
  EXPECT_EQ(family<ReduceSumOp>("%r = tandem.reduce_sum %a {axes = array<i64: 0>} : "
                   "tensor<16xf32> -> tensor<f32>",
                   vector),
            CostFamily::Reduction);
  EXPECT_EQ(family<TransposeOp>("%r = tandem.transpose %a {perm = array<i64: 0>} : "
                   "tensor<16xf32> -> tensor<16xf32>",
                   vector),
            CostFamily::DataMovement);
  // Moving the innermost axis is a strided transpose; keeping it copies rows.
  const char *heads = "%a: tensor<2x4x3x8xf32>";
  EXPECT_EQ(family<TransposeOp>("%r = tandem.transpose %a {perm = array<i64: 0, 2, "
                                "1, 3>} : tensor<2x4x3x8xf32> -> tensor<2x3x4x8xf32>",
                                heads),
            CostFamily::DataMovement);
  EXPECT_EQ(family<TransposeOp>("%r = tandem.transpose %a {perm = array<i64: 0, 1, "
                                "3, 2>} : tensor<2x4x3x8xf32> -> tensor<2x4x8x3xf32>",
                                heads),
            CostFamily::Transpose);
  // A product of at most 16 rows in all is skinny (bound by its weight);
  // 17 rows, or 4 matrices of 8, are not.
  EXPECT_EQ(family<MatmulOp>("%r = tandem.matmul %a, %b : (tensor<4x4xf32>, "
                   "tensor<4x4xf32>) -> tensor<4x4xf32>",
                   "%a: tensor<4x4xf32>, %b: tensor<4x4xf32>"),
            CostFamily::GemmSkinny);
  EXPECT_EQ(family<LinearOp>("%r = tandem.linear %a, %b : (tensor<2x8x32xf32>, "
                   "tensor<64x32xf32>) -> tensor<2x8x64xf32>",
                   "%a: tensor<2x8x32xf32>, %b: tensor<64x32xf32>"),
            CostFamily::GemmSkinny);
  EXPECT_EQ(family<LinearOp>("%r = tandem.linear %a, %b : (tensor<17x32xf32>, "
                   "tensor<64x32xf32>) -> tensor<17x64xf32>",
                   "%a: tensor<17x32xf32>, %b: tensor<64x32xf32>"),
            CostFamily::Gemm);
  EXPECT_EQ(family<MatmulOp>("%r = tandem.matmul %a, %b : (tensor<4x8x8xf32>, "
                   "tensor<4x8x8xf32>) -> tensor<4x8x8xf32>",
                   "%a: tensor<4x8x8xf32>, %b: tensor<4x8x8xf32>"),
            CostFamily::Gemm);
}

} // namespace
