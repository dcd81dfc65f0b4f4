//===- tandem-calibrate.cpp - write a device profile of this machine ------===//
//
// Measures this machine's CPU and, where a CUDA GPU is present, the GPU and
// the link between them, and writes a device profile (JSON) that
// --tandem-place's device-profile option and tandem-compile accept.
//
//===----------------------------------------------------------------------===//

#include "Calibration.h"
#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/Support/OutputFile.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
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
  cl::HideUnrelatedOptions(calibrateCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "tandem-calibrate: measure this machine and "
                              "write a Tandem device profile\n");
  // The output is checked before minutes of measuring.
  if (outputFile != "-")
    if (llvm::Error error = mlir::tandem::checkOutputPath(outputFile)) {
      llvm::errs() << "tandem-calibrate: " << llvm::toString(std::move(error))
                   << "\n";
      return 1;
    }
  DeviceProfile profile;
  profile.name = profileName;
  llvm::errs() << "tandem-calibrate: measuring the CPU\n";
  profile.cpu = toProfile(tandem_calibrate::calibrateCpu(quick));

  char date[32];
  std::time_t t = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%d", std::gmtime(&t));
  std::string how = llvm::formatv(
      "measured by tandem-calibrate{0} on {1}: CPU sgemm (OpenBLAS), a "
      "multithreaded streaming triad, thread-pool dispatch round trips",
      quick ? " --quick" : "", date);

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
