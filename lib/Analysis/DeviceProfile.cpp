//===- DeviceProfile.cpp - builtin profiles and the JSON format -----------===//

#include "tandem/Analysis/DeviceProfile.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include "llvm/Support/FileSystem.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tandem;
using llvm::Expected;
using llvm::StringRef;

namespace {
/// What a profile without family figures prices ops at.
constexpr llvm::StringLiteral kUniformFamilies =
    "not calibrated: every op family at the sustained roofline plus the "
    "dispatch (CPU) or launch (GPU) cost; tandem-calibrate fits them";

constexpr llvm::StringLiteral kCostFamilyNames[kNumCostFamilies] = {
    "gemm",        "gemm_skinny",    "conv",          "conv_grouped",
    "conv_depthwise", "conv_1x1",    "conv_stem",     "pool",
    "elementwise", "transcendental", "reduction",     "softmax",
    "normalization", "transpose",    "data_movement", "gather"};
/// Families split from another (stems from dense convolutions, skinny
/// products from GEMMs), each beside the one it was split from.
constexpr std::pair<CostFamily, CostFamily> kSplitFamilies[] = {
    {CostFamily::ConvStem, CostFamily::Conv},
    {CostFamily::GemmSkinny, CostFamily::Gemm}};
} // namespace

StringRef tandem::costFamilyName(CostFamily family) {
  return kCostFamilyNames[size_t(family)];
}

std::optional<CostFamily> tandem::parseCostFamily(StringRef name) {
  for (int k = 0; k < kNumCostFamilies; ++k)
    if (name == kCostFamilyNames[k])
      return CostFamily(k);
  return std::nullopt;
}

void ProcessorProfile::setUniformFamilies(double fixedUs) {
  for (FamilyCost &cost : families)
    cost = {1.0, 1.0, fixedUs};
}

double ProcessorProfile::flopsFor(Type elementType) const {
  if (elementType.isF16())
    return f16Flops;
  if (elementType.isBF16())
    return bf16Flops;
  if (isa<FloatType>(elementType))
    return f32Flops;
  return intOps;
}

//===----------------------------------------------------------------------===//
// Builtin profiles
//===----------------------------------------------------------------------===//

namespace {
// Sustained figures are datasheet peaks derated by what well-tuned libraries
// reach on large problems: 70% of peak FLOP/s (cuBLAS/OpenBLAS GEMM), 85% of
// peak memory bandwidth (STREAM-like copies), 80% of the PCIe link's raw rate
// for pinned copies and about 40% of it for pageable ones (an extra host
// copy through a driver buffer).
constexpr double kComputeDerate = 0.70;
constexpr double kBandwidthDerate = 0.85;
constexpr double kTera = 1e12, kGiga = 1e9;

ProcessorProfile processor(StringRef name, double f32Peak, double f16Peak,
                           double bf16Peak, double bandwidthPeak,
                           double dispatchUs, int64_t memoryBytes) {
  ProcessorProfile p;
  p.name = name.str();
  p.f32Flops = f32Peak * kComputeDerate;
  p.f16Flops = f16Peak * kComputeDerate;
  p.bf16Flops = bf16Peak * kComputeDerate;
  // Integer elementwise work runs at the f32 rate; it is memory-bound anyway.
  p.intOps = p.f32Flops;
  p.memoryBandwidth = bandwidthPeak * kBandwidthDerate;
  p.dispatchUs = dispatchUs;
  p.memoryBytes = memoryBytes;
  p.setUniformFamilies(dispatchUs);
  p.familySource = kUniformFamilies;
  return p;
}

void setLink(DeviceProfile &profile, double rawBandwidth) {
  profile.h2dPinned = profile.d2hPinned = {10.0, rawBandwidth * 0.80};
  profile.h2dPageable = profile.d2hPageable = {15.0, rawBandwidth * 0.40};
}

// GPU kernel launch plus the host work around it: 5 us, the figure usually
// measured for back-to-back small kernels with a synchronizing consumer.
// CPU dispatch of one op to a thread pool: 2 us.
constexpr double kGpuLaunchUs = 5.0, kCpuDispatchUs = 2.0;

/// The GPU families that bench/gpu/kernels.py measured on an H200 (one
/// case each, large enough that the launch does not count): the achieved
/// FLOP/s or bytes/s over the sustained figure above. GEMMs beat the 70%
/// derating (cuBLAS reaches 76-79% of peak); the one-element-a-thread
/// kernels (reductions, softmax, norms, transposes, pools, depthwise
/// convolutions) reach 20-55% of the sustained bandwidth. Families without a
/// case (transcendental, data movement, gather, grouped convolutions) stay
/// at the roofline, and those split from another (skinny products, stems)
/// take the other's; every family keeps the launch as its fixed cost.
void setMeasuredH200Families(ProcessorProfile &gpu) {
  auto compute = [&](CostFamily family, double efficiency) {
    gpu.family(family).computeEfficiency = efficiency;
  };
  auto memory = [&](CostFamily family, double efficiency) {
    gpu.family(family).memoryEfficiency = efficiency;
  };
  compute(CostFamily::Gemm, 1.09);    // f32 4096^3: 51.1 TFLOP/s
  compute(CostFamily::Conv, 0.88);    // 3x3, 64 channels at 56x56: 41.2
  compute(CostFamily::Conv1x1, 0.46); // 256 -> 64 channels at 56x56: 21.4
  memory(CostFamily::ConvDepthwise, 0.23); // 3x3, 256 channels: 921 GB/s
  memory(CostFamily::Pool, 0.22);          // max 3x3 stride 2: 909 GB/s
  memory(CostFamily::Elementwise, 1.0);    // add, relu: 4.0-4.4 TB/s
  memory(CostFamily::Reduction, 0.53);     // sum of rows of 8192: 2.1 TB/s
  memory(CostFamily::Softmax, 0.46);       // rows of 4096: 1.9 TB/s
  memory(CostFamily::Normalization, 0.49); // layer norm of 4096: 2.0 TB/s
  memory(CostFamily::Transpose, 0.47);     // 8192^2 and NCHW->NHWC: 1.9 TB/s
  for (auto [split, from] : kSplitFamilies)
    gpu.family(split) = gpu.family(from);
  gpu.familySource =
      "measured on an H200 (2026-12-04, bench/gpu/kernels.py, one large case "
      "per family: gemm, conv, conv_1x1, conv_depthwise, pool, elementwise, "
      "reduction, softmax, normalization, transpose); the other families at "
      "the sustained roofline; every family's fixed cost the 5 us launch";
}

DeviceProfile makeH200() {
  DeviceProfile p;
  p.name = "h200";
  p.source =
      "GPU: NVIDIA H200 SXM datasheet (FP32 67 TFLOPS, FP16/BF16 tensor 989 "
      "TFLOPS dense, HBM3e 4.8 TB/s, 141 GB; 143771 MiB as nvidia-smi "
      "reports). CPU: one socket of a DGX H200's Intel Xeon Platinum 8480C "
      "(56 cores, AVX-512 with 2 FMA units at 2.0 GHz: 7.2 TFLOPS FP32 "
      "peak; BF16 through AMX counted at the FP32 rate; 8 channels of "
      "DDR5-4800: 307 GB/s; 1 TiB). Link: PCIe Gen5 x16, 64 GB/s per "
      "direction. Sustained = peak x 0.70 (compute), x 0.85 (memory), x 0.80 "
      "(pinned copies), x 0.40 (pageable copies); launch 5 us, dispatch 2 us.";
  p.gpu = processor("NVIDIA H200 SXM", 67 * kTera, 989 * kTera, 989 * kTera,
                    4800 * kGiga, kGpuLaunchUs, 143771LL << 20);
  setMeasuredH200Families(*p.gpu);
  p.cpu = processor("Intel Xeon Platinum 8480C (1 socket)", 7.2 * kTera,
                    7.2 * kTera, 7.2 * kTera, 307 * kGiga, kCpuDispatchUs,
                    1LL << 40);
  setLink(p, 64 * kGiga);
  return p;
}

DeviceProfile makeA100() {
  DeviceProfile p;
  p.name = "a100-80gb";
  p.source =
      "GPU: NVIDIA A100 80GB SXM datasheet (FP32 19.5 TFLOPS, FP16/BF16 "
      "tensor 312 TFLOPS dense, HBM2e 2039 GB/s, 80 GB). CPU: one socket of "
      "a DGX A100's AMD EPYC 7742 (64 cores, AVX2 with 2 FMA units at "
      "2.25 GHz: 4.6 TFLOPS FP32 peak; 8 channels of DDR4-3200: 205 GB/s; "
      "1 TiB). Link: PCIe Gen4 x16, 32 GB/s per direction. Sustained = peak "
      "x 0.70 (compute), x 0.85 (memory), x 0.80 (pinned copies), x 0.40 "
      "(pageable copies); launch 5 us, dispatch 2 us.";
  p.gpu = processor("NVIDIA A100 80GB SXM", 19.5 * kTera, 312 * kTera,
                    312 * kTera, 2039 * kGiga, kGpuLaunchUs, 80LL << 30);
  p.cpu = processor("AMD EPYC 7742 (1 socket)", 4.6 * kTera, 4.6 * kTera,
                    4.6 * kTera, 205 * kGiga, kCpuDispatchUs, 1LL << 40);
  setLink(p, 32 * kGiga);
  return p;
}

DeviceProfile makeV100() {
  DeviceProfile p;
  p.name = "v100-32gb";
  p.source =
      "GPU: NVIDIA V100 SXM2 32GB datasheet (FP32 15.7 TFLOPS, FP16 tensor "
      "125 TFLOPS; no BF16 units, so BF16 at the FP32 rate; HBM2 900 GB/s, "
      "32 GB). CPU: one socket of a DGX-1's Intel Xeon E5-2698 v4 (20 "
      "cores, AVX2 with 2 FMA units at 2.2 GHz: 1.4 TFLOPS FP32 peak; 4 "
      "channels of DDR4-2400: 77 GB/s; 512 GiB). Link: PCIe Gen3 x16, "
      "15.75 GB/s per direction. Sustained = peak x 0.70 (compute), x 0.85 "
      "(memory), x 0.80 (pinned copies), x 0.40 (pageable copies); launch "
      "5 us, dispatch 2 us.";
  p.gpu = processor("NVIDIA V100 SXM2 32GB", 15.7 * kTera, 125 * kTera,
                    15.7 * kTera, 900 * kGiga, kGpuLaunchUs, 32LL << 30);
  p.cpu = processor("Intel Xeon E5-2698 v4 (1 socket)", 1.4 * kTera,
                    1.4 * kTera, 1.4 * kTera, 77 * kGiga, kCpuDispatchUs,
                    512LL << 30);
  setLink(p, 15.75 * kGiga);
  return p;
}

DeviceProfile makeHost() {
  DeviceProfile p;
  p.name = "host";
  p.source =
      "CPU only: a 16-core AVX2 workstation (2 FMA units at 3.0 GHz: 1.5 "
      "TFLOPS FP32 peak; 2 channels of DDR5-4800: 77 GB/s; 64 GiB), "
      "sustained = peak x 0.70 (compute), x 0.85 (memory); dispatch 2 us.";
  p.cpu = processor("16-core AVX2 workstation", 1.5 * kTera, 1.5 * kTera,
                    1.5 * kTera, 77 * kGiga, kCpuDispatchUs, 64LL << 30);
  return p;
}
} // namespace

std::vector<StringRef> tandem::getBuiltinProfileNames() {
  return {"h200", "a100-80gb", "v100-32gb", "host"};
}

std::optional<DeviceProfile> tandem::getBuiltinProfile(StringRef name) {
  if (name == "h200")
    return makeH200();
  if (name == "a100-80gb")
    return makeA100();
  if (name == "v100-32gb")
    return makeV100();
  if (name == "host")
    return makeHost();
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

namespace {
/// Bounds on a profile's figures: 1e21 (a zettaflop per second) is above any
/// rate or bandwidth; 2^50 bytes (1 PiB) above any device's memory.
constexpr double kMaxFigure = 1e21;
/// Rates and bandwidths divide work and sizes: below one operation or byte
/// per second they are nonsense, and times would overflow to infinity.
constexpr double kMinRate = 1;
constexpr int64_t kMaxMemoryBytes = int64_t(1) << 50;
/// A family beyond 100 times its roofline is a mistake (a cache's bandwidth
/// is a few times DRAM's, not a hundred), and one below a ten-thousandth of
/// it is no kernel (the slowest the calibration has seen is a thousandth).
constexpr double kMinEfficiency = 1e-4, kMaxEfficiency = 100;
/// A fixed cost of an op beyond 1000 s is no machine's.
constexpr double kMaxFixedUs = 1e9;
/// JSON nesting deeper than any profile needs; llvm::json's parser recurses
/// once per level, so deeper input is refused before it is parsed.
constexpr int kMaxJsonDepth = 64;
constexpr uint64_t kMaxProfileBytes = 1 << 20;

/// Whether `json` nests objects and arrays more than `limit` deep (brackets
/// inside strings do not count).
bool nestsDeeperThan(StringRef json, int limit) {
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '{' || c == '[') {
      if (++depth > limit)
        return true;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

/// Reads fields of one JSON object, collecting the first error with its path.
class FieldReader {
public:
  FieldReader(const llvm::json::Object *object, std::string path,
              std::string &error)
      : object(object), path(std::move(path)), error(error) {}

  /// A number in [0, kMaxFigure] (positive unless `positive` is false):
  /// rates, bandwidths, latencies. Beyond that bound a figure is nonsense,
  /// and its products with work and sizes would overflow the cost model.
  double number(StringRef key, bool positive = true) {
    return positive ? numberIn(key, kMinRate, kMaxFigure,
                               "a number from 1 to 1e21")
                    : numberIn(key, 0, kMaxFigure,
                               "a non-negative number of at most 1e21");
  }

  /// A fraction of the roofline in [kMinEfficiency, kMaxEfficiency].
  double efficiency(StringRef key) {
    return numberIn(key, kMinEfficiency, kMaxEfficiency,
                    "a fraction of the roofline from 0.0001 to 100");
  }

  /// A fixed cost per op in [0, kMaxFixedUs] microseconds.
  double fixedUs(StringRef key) {
    return numberIn(key, 0, kMaxFixedUs,
                    "a number of microseconds from 0 to 1e9");
  }

  /// A finite number in [low, high]; `expected` is what the error says it
  /// must be.
  double numberIn(StringRef key, double low, double high,
                  StringRef expected) {
    const llvm::json::Value *value = get(key);
    if (!value)
      return 0;
    std::optional<double> number = value->getAsNumber();
    if (!number || !std::isfinite(*number) || *number < low ||
        *number > high) {
      fail(key, expected);
      return 0;
    }
    return *number;
  }

  /// A whole number of bytes in [1, kMaxMemoryBytes].
  int64_t bytes(StringRef key) {
    const llvm::json::Value *value = get(key);
    if (!value)
      return 0;
    std::optional<double> number = value->getAsNumber();
    if (!number || !std::isfinite(*number) || *number < 1 ||
        *number > double(kMaxMemoryBytes) || *number != std::floor(*number)) {
      fail(key, "a whole number of bytes from 1 to 2^50");
      return 0;
    }
    return static_cast<int64_t>(*number);
  }

  std::string string(StringRef key, bool required = true) {
    const llvm::json::Value *value = object->get(key);
    if (!value) {
      if (required)
        fail(key, "a string");
      return "";
    }
    std::optional<StringRef> text = value->getAsString();
    if (!text) {
      fail(key, "a string");
      return "";
    }
    return text->str();
  }

  const llvm::json::Object *object_(StringRef key) {
    const llvm::json::Value *value = get(key);
    if (!value)
      return nullptr;
    const llvm::json::Object *nested = value->getAsObject();
    if (!nested)
      fail(key, "an object");
    return nested;
  }

  std::string nestedPath(StringRef key) const {
    return (path + "." + key).str();
  }

private:
  const llvm::json::Value *get(StringRef key) {
    if (!error.empty())
      return nullptr;
    const llvm::json::Value *value = object->get(key);
    if (!value)
      error = llvm::formatv("missing field '{0}.{1}'", path, key).str();
    return value;
  }

  void fail(StringRef key, StringRef expected) {
    if (error.empty())
      error = llvm::formatv("field '{0}.{1}' must be {2}", path, key, expected)
                  .str();
  }

  const llvm::json::Object *object;
  std::string path;
  std::string &error;
};

ProcessorProfile readProcessor(FieldReader &parent, StringRef key,
                               std::string &error) {
  ProcessorProfile p;
  const llvm::json::Object *object = parent.object_(key);
  if (!object)
    return p;
  FieldReader fields(object, parent.nestedPath(key), error);
  p.name = fields.string("name");
  if (const llvm::json::Object *flops = fields.object_("peak_flops")) {
    FieldReader rates(flops, fields.nestedPath("peak_flops"), error);
    p.f32Flops = rates.number("f32");
    p.f16Flops = rates.number("f16");
    p.bf16Flops = rates.number("bf16");
    p.intOps = rates.number("int");
  }
  p.memoryBandwidth = fields.number("memory_bandwidth");
  p.dispatchUs = fields.number("dispatch_us", /*positive=*/false);
  p.memoryBytes = fields.bytes("memory_bytes");
  p.setUniformFamilies(p.dispatchUs);
  if (object->get("family_source"))
    p.familySource = fields.string("family_source");
  if (!object->get("families")) {
    if (p.familySource.empty())
      p.familySource = kUniformFamilies;
    return p;
  }
  if (const llvm::json::Object *families = fields.object_("families")) {
    std::string familiesPath = fields.nestedPath("families");
    for (const auto &[name, value] : *families) {
      std::optional<CostFamily> family = parseCostFamily(name);
      if (!family) {
        if (error.empty())
          error = llvm::formatv("unknown op family '{0}' in '{1}': expected "
                                "one of {2}",
                                name.str(), familiesPath,
                                llvm::join(llvm::ArrayRef(kCostFamilyNames), ", "))
                      .str();
        return p;
      }
      FieldReader familyFields(families, familiesPath, error);
      if (const llvm::json::Object *figures = familyFields.object_(name)) {
        FieldReader cost(figures, familyFields.nestedPath(name), error);
        p.family(*family).computeEfficiency =
            cost.efficiency("compute_efficiency");
        p.family(*family).memoryEfficiency =
            cost.efficiency("memory_efficiency");
        p.family(*family).fixedUs = cost.fixedUs("fixed_us");
        if (figures->get("inline_fixed_us"))
          p.family(*family).inlineFixedUs = cost.fixedUs("inline_fixed_us");
      }
    }
  }
  // A profile written before a family was split from another prices its ops
  // as the other's.
  if (const llvm::json::Object *families = object->getObject("families"))
    for (auto [split, from] : kSplitFamilies)
      if (!families->get(costFamilyName(split)) &&
          families->get(costFamilyName(from)))
        p.family(split) = p.family(from);
  if (p.familySource.empty())
    p.familySource = "given in the profile, without a family_source";
  return p;
}

LinkProfile readLink(FieldReader &parent, StringRef key, std::string &error) {
  LinkProfile link;
  const llvm::json::Object *object = parent.object_(key);
  if (!object)
    return link;
  FieldReader fields(object, parent.nestedPath(key), error);
  link.latencyUs = fields.number("latency_us", /*positive=*/false);
  link.bandwidth = fields.number("bandwidth");
  return link;
}

llvm::json::Value processorToJSON(const ProcessorProfile &p) {
  llvm::json::Object families;
  for (int k = 0; k < kNumCostFamilies; ++k) {
    llvm::json::Object figures{
        {"compute_efficiency", p.families[k].computeEfficiency},
        {"memory_efficiency", p.families[k].memoryEfficiency},
        {"fixed_us", p.families[k].fixedUs}};
    if (p.families[k].inlineFixedUs)
      figures["inline_fixed_us"] = *p.families[k].inlineFixedUs;
    families[kCostFamilyNames[k]] = std::move(figures);
  }
  return llvm::json::Object{
      {"name", p.name},
      {"peak_flops", llvm::json::Object{{"f32", p.f32Flops},
                                        {"f16", p.f16Flops},
                                        {"bf16", p.bf16Flops},
                                        {"int", p.intOps}}},
      {"memory_bandwidth", p.memoryBandwidth},
      {"dispatch_us", p.dispatchUs},
      {"memory_bytes", p.memoryBytes},
      {"families", std::move(families)},
      {"family_source", p.familySource}};
}

llvm::json::Value linkToJSON(const LinkProfile &link) {
  return llvm::json::Object{{"latency_us", link.latencyUs},
                            {"bandwidth", link.bandwidth}};
}
} // namespace

Expected<DeviceProfile> tandem::parseDeviceProfile(StringRef json,
                                                   StringRef origin) {
  auto makeError = [&](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "device profile " + origin + ": " + message);
  };
  if (nestsDeeperThan(json, kMaxJsonDepth))
    return makeError("malformed JSON: nested more than " +
                     llvm::Twine(kMaxJsonDepth) + " levels deep");
  Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed)
    return makeError("malformed JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root)
    return makeError("expected a JSON object");

  std::string error;
  FieldReader fields(root, "profile", error);
  DeviceProfile profile;
  profile.name = fields.string("name");
  profile.source = fields.string("source", /*required=*/false);
  profile.cpu = readProcessor(fields, "cpu", error);
  const llvm::json::Value *gpu = root->get("gpu");
  if (error.empty() && gpu && gpu->kind() != llvm::json::Value::Null)
    profile.gpu = readProcessor(fields, "gpu", error);
  if (error.empty() && profile.gpu) {
    if (const llvm::json::Object *links = fields.object_("links")) {
      FieldReader linkFields(links, "profile.links", error);
      for (auto [key, pinned, pageable] :
           {std::tuple<StringRef, LinkProfile *, LinkProfile *>{
                "h2d", &profile.h2dPinned, &profile.h2dPageable},
            {"d2h", &profile.d2hPinned, &profile.d2hPageable}}) {
        if (const llvm::json::Object *direction = linkFields.object_(key)) {
          FieldReader modes(direction, linkFields.nestedPath(key), error);
          *pinned = readLink(modes, "pinned", error);
          *pageable = readLink(modes, "pageable", error);
        }
      }
    }
    std::string memory = fields.string("transfer_memory", /*required=*/false);
    if (memory == "pageable")
      profile.pinnedTransfers = false;
    else if (!memory.empty() && memory != "pinned" && error.empty())
      error = "field 'profile.transfer_memory' must be \"pinned\" or "
              "\"pageable\"";
  }
  if (!error.empty())
    return makeError(error);
  return profile;
}

Expected<DeviceProfile> tandem::loadDeviceProfile(StringRef nameOrPath) {
  if (std::optional<DeviceProfile> builtin = getBuiltinProfile(nameOrPath))
    return *builtin;
  if (!nameOrPath.ends_with(".json"))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "unknown device profile '" + nameOrPath +
            "': expected one of h200, a100-80gb, v100-32gb, host, or the "
            "path of a .json profile");
  // A profile is a small regular file: a FIFO or a device (/dev/zero) would
  // block or never end.
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(nameOrPath, status)) {
    if (!llvm::sys::fs::is_regular_file(status))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "cannot read device profile '" +
                                         nameOrPath +
                                         "': it is not a regular file");
    if (status.getSize() > kMaxProfileBytes)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "device profile '" + nameOrPath + "' is " +
              llvm::Twine(status.getSize()) +
              " bytes: a profile is a few hundred bytes (at most 1 MiB)");
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(nameOrPath);
  if (!file)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot read device profile '" +
                                       nameOrPath +
                                       "': " + file.getError().message());
  return parseDeviceProfile((*file)->getBuffer(), nameOrPath);
}

llvm::json::Value tandem::toJSON(const DeviceProfile &profile) {
  llvm::json::Object root{{"name", profile.name},
                          {"source", profile.source},
                          {"cpu", processorToJSON(profile.cpu)}};
  if (profile.gpu) {
    root["gpu"] = processorToJSON(*profile.gpu);
    root["links"] = llvm::json::Object{
        {"h2d", llvm::json::Object{{"pinned", linkToJSON(profile.h2dPinned)},
                                   {"pageable",
                                    linkToJSON(profile.h2dPageable)}}},
        {"d2h", llvm::json::Object{{"pinned", linkToJSON(profile.d2hPinned)},
                                   {"pageable",
                                    linkToJSON(profile.d2hPageable)}}}};
    root["transfer_memory"] = profile.pinnedTransfers ? "pinned" : "pageable";
  } else {
    root["gpu"] = nullptr;
  }
  return std::move(root);
}

//===----------------------------------------------------------------------===//
// Byte sizes
//===----------------------------------------------------------------------===//

Expected<int64_t> tandem::parseByteSize(StringRef text) {
  StringRef original = text;
  text = text.trim();
  size_t numberEnd = 0;
  while (numberEnd < text.size() &&
         (llvm::isDigit(text[numberEnd]) || text[numberEnd] == '.'))
    ++numberEnd;
  StringRef number = text.take_front(numberEnd);
  StringRef suffix = text.drop_front(numberEnd).trim();
  double value = 0;
  bool badNumber = number.empty() || number.getAsDouble(value);
  static const std::pair<StringRef, double> kSuffixes[] = {
      {"", 1},          {"B", 1},         {"KiB", 1024.0},
      {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
      {"KB", 1e3},      {"MB", 1e6},      {"GB", 1e9},
      {"TB", 1e12}};
  for (auto [name, scale] : kSuffixes) {
    if (badNumber || suffix != name)
      continue;
    double bytes = value * scale;
    auto refuse = [&](const llvm::Twine &why) {
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "'" + original + "' " + why);
    };
    if (bytes > 9.0e18)
      return refuse("is beyond any GPU's memory (at most 9e18 bytes)");
    if (bytes != std::floor(bytes))
      return refuse("is not a whole number of bytes");
    return static_cast<int64_t>(bytes);
  }
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "cannot read '" + original +
          "' as a memory size: expected a number of bytes with an optional "
          "suffix B, KiB, MiB, GiB, TiB, KB, MB, GB or TB (e.g. 4GiB)");
}
