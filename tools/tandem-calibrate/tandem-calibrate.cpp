//===- tandem-calibrate.cpp - write a device profile of this machine ------===//
//
// Measures this machine's CPU and, where a CUDA GPU is present, the GPU and
// the link between them, and writes a device profile (JSON) that
// --tandem-place's device-profile option and tandem-compile accept.
//
//===----------------------------------------------------------------------===//

#include "Calibration.h"
#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/runtime/BlasCore.h"
#include "tandem/Support/OutputFile.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <ctime>

using namespace mlir::tandem;
namespace cl = llvm::cl;

// The tool's own options; --help hides the many LLVM registers globally.
static cl::OptionCategory calibrateCategory("tandem-calibrate options");

static cl::opt<std::string> outputFile("o", cl::cat(calibrateCategory),
                                       cl::desc("Output file ('-': stdout)"),
                                       cl::value_desc("profile.json"),
                                       cl::init("-"));
static cl::opt<std::string> profileName("name", cl::cat(calibrateCategory),
                                        cl::desc("Profile name"),
                                        cl::init("calibrated"));
static cl::opt<bool> quick("quick", cl::cat(calibrateCategory),
                           cl::desc("Smaller, faster measurements (seconds, "
                                    "less accurate)"),
                           cl::init(false));
static cl::opt<bool> cpuOnly("cpu-only", cl::cat(calibrateCategory),
                             cl::desc("Do not measure a GPU"),
                             cl::init(false));

static cl::opt<bool> ratesOnly(
    "rates-only", cl::cat(calibrateCategory),
    cl::desc("Measure only the processors' rates, not each op family's "
             "efficiency and fixed cost (which compiles and runs a model)"),
    cl::init(false));
static cl::opt<bool> verbose(
    "verbose", cl::cat(calibrateCategory),
    cl::desc("Print every op of the family calibration: its compute and "
             "memory times, measured and fitted"),
    cl::init(false));
static cl::opt<std::string> saveModel(
    "save-model", cl::cat(calibrateCategory),
    cl::desc("Also write the family calibration's large-ops model (MLIR) to "
             "this file, and beside it its variant whose results reuse "
             "memory (.reused.mlir) and its small-ops model (.small.mlir)"),
    cl::value_desc("file.mlir"), cl::init(""));
static cl::opt<std::string> compilerPath(
    "compiler", cl::cat(calibrateCategory),
    cl::desc("The tandem-compile that builds the family calibration model "
             "(default: the one beside this tool)"),
    cl::value_desc("path"), cl::init(""));

/// tandem-compile beside this executable (build/bin, or an install's bin).
static std::string defaultCompiler(const char *argv0) {
  static int anchor;
  llvm::SmallString<256> path(
      llvm::sys::fs::getMainExecutable(argv0, (void *)&anchor));
  llvm::sys::path::remove_filename(path);
  llvm::sys::path::append(path, "tandem-compile");
  return std::string(path);
}

/// Fits each op family of the CPU to a run of the runtime's own kernels and
/// writes the fits into `cpu`; false (with a message) when it cannot.
static bool calibrateCpuFamilies(DeviceProfile &profile, const char *argv0) {
  std::string compiler =
      compilerPath.empty() ? defaultCompiler(argv0) : compilerPath;
  llvm::errs() << "tandem-calibrate: fitting each op family to the runtime's "
                  "kernels (compiling and running a calibration model)\n";
  llvm::Expected<tandem_calibrate::FamilyCalibration> calibration =
      tandem_calibrate::calibrateFamilies(profile, compiler, quick,
                                          saveModel);
  if (!calibration) {
    llvm::errs() << "tandem-calibrate: cannot fit the op families: "
                 << llvm::toString(calibration.takeError()) << "\n";
    return false;
  }
  llvm::errs() << llvm::formatv(
      "tandem-calibrate: {0} ops, the best of {1} rounds of {2} runs (the "
      "small ops' program: of {3}):\n"
      "  {4,-15} {5,7} {6,10} {7,10} {8,9} {9,12}\n",
      calibration->samples.size(), calibration->rounds, calibration->repeat,
      calibration->smallRepeat, "family", "samples", "compute", "memory",
      "fixed us", "worst error");
  for (const tandem_calibrate::FamilyFit &fit : calibration->fits) {
    profile.cpu.family(fit.family) = fit.cost;
    llvm::errs() << llvm::formatv("  {0,-15} {1,7} {2,10:F3} {3,10:F3} "
                                  "{4,9:F2} {5,11:F2}x",
                                  costFamilyName(fit.family), fit.samples,
                                  fit.cost.computeEfficiency,
                                  fit.cost.memoryEfficiency, fit.cost.fixedUs,
                                  fit.worstRatio);
    if (fit.cost.inlineFixedUs)
      llvm::errs() << llvm::formatv("  (on the calling thread: {0:F2} us)",
                                    *fit.cost.inlineFixedUs);
    llvm::errs() << "\n";
  }
  if (verbose) {
    llvm::errs() << llvm::formatv("  {0,-15} {1,-20} {2,11} {3,11} {4,11} "
                                  "{5,11}\n",
                                  "family", "op", "compute us", "memory us",
                                  "measured us", "fitted us");
    for (const tandem_calibrate::CalibrationSample &sample :
         calibration->samples)
      llvm::errs() << llvm::formatv("  {0,-15} {1,-20} {2,11:F2} {3,11:F2} "
                                    "{4,11:F2} {5,11:F2}\n",
                                    sample.family, sample.name,
                                    sample.computeUs, sample.memoryUs,
                                    sample.measuredUs, sample.fittedUs);
  }
  // An op of no family the profile names (none today) pays what the
  // smallest elementwise op does.
  profile.cpu.dispatchUs = profile.cpu.family(CostFamily::Elementwise).fixedUs;
  return true;
}

static ProcessorProfile toProfile(const tandem_calibrate::ProcessorRates &r) {
  ProcessorProfile p;
  p.name = r.name;
  p.f32Flops = r.f32Flops;
  p.f16Flops = r.f16Flops;
  p.bf16Flops = r.bf16Flops;
  p.intOps = r.intOps;
  p.memoryBandwidth = r.memoryBandwidth;
  p.dispatchUs = r.dispatchUs;
  p.memoryBytes = r.memoryBytes;
  return p;
}

static LinkProfile toLink(const tandem_calibrate::LinkRates &rates) {
  return {rates.latencyUs, rates.bandwidth};
}

int main(int argc, char **argv) {
  // Measure the GEMMs the BLAS runs at its best on this CPU, as a compiled
  // model runs them: on OpenBLAS's best kernels; the peak rate on the BLAS's
  // own threads (the runtime's kernels, measured after it, run it
  // single-threaded inside the pool, as models do).
  tandem::rt::reexecOnBetterBlasCore(argv);
  tandem::rt::useThreadedBlas();
  cl::HideUnrelatedOptions(calibrateCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "tandem-calibrate: measure this machine and "
                              "write a Tandem device profile\n");
  if (ratesOnly && (!saveModel.empty() || !compilerPath.empty())) {
    llvm::errs() << "tandem-calibrate: --save-model and --compiler belong to "
                    "the family fit, which --rates-only skips\n";
    return 1;
  }
  // The outputs are checked before seconds of measuring.
  for (const std::string &path : {std::string(outputFile), std::string(saveModel)})
    if (!path.empty() && path != "-")
      if (llvm::Error error = mlir::tandem::checkOutputPath(path)) {
        llvm::errs() << "tandem-calibrate: " << llvm::toString(std::move(error))
                     << "\n";
        return 1;
      }
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%d", std::gmtime(&now));
  DeviceProfile profile;
  profile.name = profileName;
  llvm::errs() << "tandem-calibrate: measuring the CPU\n";
  profile.cpu = toProfile(tandem_calibrate::calibrateCpu(quick));
  profile.cpu.setUniformFamilies(profile.cpu.dispatchUs);
  if (!ratesOnly) {
    if (!calibrateCpuFamilies(profile, argv[0]))
      return 1;
    profile.cpu.familySource =
        llvm::formatv("calibrated: fitted by tandem-calibrate{0} on {1} to "
                      "runs of this runtime's CPU kernels",
                      quick ? " --quick" : "", date)
            .str();
  } else {
    profile.cpu.familySource =
        "not calibrated (--rates-only): every family at the roofline plus "
        "the thread-pool dispatch";
  }

  std::string how = llvm::formatv(
      "measured by tandem-calibrate{0} on {1}: CPU sgemm ({3}), a "
      "multithreaded streaming triad, {2}",
      quick ? " --quick" : "", date,
      ratesOnly ? "thread-pool dispatch round trips"
                : "each op family's efficiency and fixed cost fitted to runs "
                  "of the runtime's kernels",
      tandem::rt::blasName());

  if (!cpuOnly) {
    llvm::errs() << "tandem-calibrate: measuring the GPU\n";
    tandem_calibrate::GpuCalibration gpu = tandem_calibrate::calibrateGpu(quick);
    if (gpu.present) {
      profile.gpu = toProfile(gpu.gpu);
      profile.h2dPinned = toLink(gpu.h2dPinned);
      profile.h2dPageable = toLink(gpu.h2dPageable);
      profile.d2hPinned = toLink(gpu.d2hPinned);
      profile.d2hPageable = toLink(gpu.d2hPageable);
      how += "; GPU cuBLAS GEMM (f32, f16, bf16) on random matrices, "
             "device-to-device copies, a launch plus the synchronize the "
             "runtime issues per op, host/device copies (plain pageable, and "
             "the runtime's staged copies as the pinned rates)";
    } else {
      llvm::errs() << "tandem-calibrate: no GPU measured: " << gpu.error
                   << "\n";
      how += "; no GPU (" + gpu.error + ")";
    }
  }
  profile.source = how;

  if (llvm::Error error = mlir::tandem::writeFileAtomically(
          outputFile, [&](llvm::raw_ostream &os) {
            os << llvm::formatv("{0:2}\n", toJSON(profile));
          })) {
    llvm::errs() << "tandem-calibrate: " << llvm::toString(std::move(error))
                 << "\n";
    return 1;
  }
  return 0;
}
