//===- Driver.cpp - the executable: tandem_rt_main ------------------------===//
//
// What a compiled model's main() runs: its command line, the checks of the
// files it will write (before the run, not after), its inputs from .npy
// files (or random), the run itself (--repeat times), its results as .npy
// files written all or none, and the reports. Errors end the process with
// a message.
//
//===----------------------------------------------------------------------===//

#include "RuntimeState.h"

#include "CudaBackend.h"
#include "FileBytes.h"
#include "tandem/runtime/BlasCore.h"
#include "tandem/runtime/Npy.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

using namespace tandem::rt;
namespace img = tandem::image;

void tandem::rt::fatal(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::exit(1);
}

namespace {

void usage(const char *program) {
  std::printf(
      "usage: %s [--input FILE.npy]... [--output-dir DIR]\n"
      "  [--weights FILE.safetensors | --random-weights SEED]\n"
      "  [--random-inputs SEED] [--device-backend sim|cuda|auto]\n"
      "  [--gpu-memory BYTES] [--repeat N] [--profile] [--profile-json FILE]\n"
      "  [--trace FILE] [--list-devices] [--allow-tf32] [--serial]\n"
      "  [--sim-jitter SEED] [--sim-timing profile] [--sim-time-scale X]\n"
      "  [--no-cuda-graph] [--timing]\n"
      "(a flag's value may also follow it after '=': --sim-timing=profile)\n",
      program);
}

/// --timing's line: the first run, and the later ones' mean, median and
/// least (wall clock, each run waited for to the end).
void printRunTimes(std::vector<double> seconds) {
  double first = seconds.front() * 1e6;
  seconds.erase(seconds.begin());
  if (seconds.empty()) {
    std::printf("timing: 1 run, %.1f us\n", first);
    return;
  }
  double sum = 0;
  for (double s : seconds)
    sum += s;
  std::sort(seconds.begin(), seconds.end());
  size_t half = seconds.size() / 2;
  double median = seconds.size() % 2 ? seconds[half]
                                     : (seconds[half - 1] + seconds[half]) / 2;
  std::printf("timing: %zu runs, first %.1f us; later runs: mean %.1f us, "
              "median %.1f us, min %.1f us\n",
              seconds.size() + 1, first, sum / double(seconds.size()) * 1e6,
              median * 1e6, seconds.front() * 1e6);
}

bool parseUnsigned(const char *text, uint64_t &value) {
  // Digits only: strtoull would skip spaces and accept a sign.
  if (*text < '0' || *text > '9')
    return false;
  char *end = nullptr;
  errno = 0;
  unsigned long long parsed = std::strtoull(text, &end, 10);
  if (errno || *end || text[0] == '-')
    return false;
  value = parsed;
  return true;
}

/// --repeat's bound: a billion runs is more than any profile needs, and
/// keeps the counts of calls far from overflowing.
constexpr uint64_t kMaxRepeat = 1000000000;

/// A positive decimal number, as --sim-time-scale takes.
bool parsePositive(const char *text, double &value) {
  char *end = nullptr;
  errno = 0;
  double parsed = std::strtod(text, &end);
  if (errno || end == text || *end || !(parsed > 0) || parsed > 1e9)
    return false;
  value = parsed;
  return true;
}

Options parseOptions(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    // --flag=value is --flag value.
    std::optional<std::string> attached;
    if (size_t equals = flag.find('=');
        flag.rfind("--", 0) == 0 && equals != std::string::npos) {
      attached = flag.substr(equals + 1);
      flag.resize(equals);
    }
    auto value = [&]() -> const char * {
      if (attached)
        return attached->c_str();
      if (i + 1 >= argc)
        fatal("missing value after " + flag);
      return argv[++i];
    };
    uint64_t number = 0;
    if (flag == "--input") {
      options.inputs.push_back(value());
    } else if (flag == "--output-dir") {
      options.outputDir = value();
      if (options.outputDir.empty())
        fatal("--output-dir: empty: name a folder");
    } else if (flag == "--weights") {
      options.weights = value();
    } else if (flag == "--random-weights" || flag == "--random-inputs" ||
               flag == "--repeat" || flag == "--gpu-memory" ||
               flag == "--sim-jitter") {
      const char *text = value();
      if (!parseUnsigned(text, number))
        fatal(flag + " takes a non-negative integer, got '" + text + "'");
      if (flag == "--random-weights")
        options.randomWeights = number;
      else if (flag == "--random-inputs")
        options.randomInputs = number;
      else if (flag == "--sim-jitter")
        options.simJitter = number;
      else if (flag == "--repeat") {
        if (number < 1 || number > kMaxRepeat)
          fatal("--repeat takes 1 to " + std::to_string(kMaxRepeat) +
                " runs, got " + text);
        options.repeat = int64_t(number);
      } else {
        if (number > uint64_t(INT64_MAX))
          fatal(std::string("--gpu-memory ") + text +
                " is beyond any GPU's memory (at most 2^63-1 bytes)");
        options.gpuMemory = int64_t(number);
      }
    } else if (flag == "--device-backend") {
      options.backend = value();
      if (options.backend != "sim" && options.backend != "auto" &&
          options.backend != "cuda")
        fatal("unknown --device-backend '" + options.backend +
              "': expected sim, cuda or auto");
    } else if (flag == "--profile") {
      options.profile = true;
    } else if (flag == "--profile-json") {
      options.profileJson = value();
    } else if (flag == "--trace") {
      options.trace = value();
    } else if (flag == "--sim-timing") {
      std::string mode = value();
      if (mode != "profile")
        fatal("--sim-timing takes 'profile' (each op takes the time the "
              "compiler's device profile predicts for it), got '" + mode + "'");
      options.simTiming = true;
    } else if (flag == "--sim-time-scale") {
      const char *text = value();
      if (!parsePositive(text, options.simTimeScale))
        fatal(std::string("--sim-time-scale takes a positive number (up to "
                          "1e9), got '") + text + "'");
    } else if (flag == "--serial") {
      options.serial = true;
    } else if (flag == "--no-cuda-graph") {
      options.cudaGraph = false;
    } else if (flag == "--timing") {
      options.timing = true;
    } else if (flag == "--allow-tf32") {
      options.allowTf32 = true;
    } else if (flag == "--list-devices") {
      options.listDevices = true;
    } else if (flag == "--help" || flag == "-h") {
      usage(argv[0]);
      std::exit(0);
    } else {
      fatal("unknown flag '" + flag + "' (see --help)");
    }
    if (attached && (flag == "--profile" || flag == "--serial" ||
                     flag == "--no-cuda-graph" || flag == "--timing" ||
                     flag == "--allow-tf32" || flag == "--list-devices"))
      fatal(flag + " takes no value, got '" + *attached + "'");
  }
  if (options.simTimeScale != 1 && !options.simTiming)
    fatal("--sim-time-scale scales --sim-timing=profile: give both");
  return options;
}

std::string defaultWeightsPath(const char *program) {
  std::string path = program;
  return path + ".safetensors";
}

bool fileExists(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

void loadInputs(TandemRuntime &rt) {
  const Image &image = rt.image;
  rt.inputData.resize(image.inputs.size());
  if (rt.options.randomInputs) {
    if (!rt.options.inputs.empty())
      fatal("--input and --random-inputs exclude each other");
    uint64_t state = *rt.options.randomInputs;
    for (size_t k = 0; k < image.inputs.size(); ++k) {
      rt.inputData[k].resize(image.inputs[k].bytes());
      randomFill(image.inputs[k], rt.inputData[k].data(), state);
    }
    return;
  }
  if (rt.options.inputs.size() != image.inputs.size())
    fatal("the model takes " + std::to_string(image.inputs.size()) +
          " inputs (--input FILE.npy each, in order), got " +
          std::to_string(rt.options.inputs.size()));
  for (size_t k = 0; k < image.inputs.size(); ++k) {
    NpyArray array;
    std::string error;
    if (!readNpy(rt.options.inputs[k], array, error))
      fatal("input " + std::to_string(k) + ": " + error);
    const TensorDesc &want = image.inputs[k];
    if (array.dtype != want.dtype || array.shape != want.shape)
      fatal("input " + std::to_string(k) + " ('" + rt.options.inputs[k] +
            "') is " + formatShape(array.shape) + " " +
            dtypeName(array.dtype) + ", the model takes " +
            formatShape(want.shape) + " " + dtypeName(want.dtype));
    rt.inputData[k] = std::move(array.data);
  }
}

/// Writes result<k>.npy for every output, all or none: each is written to a
/// temporary name first, and only when all are written are they renamed
/// into place.
/// (Returns the error rather than exiting, so that the staged files are
/// removed on the way out.)
std::string writeOutputs(TandemRuntime &rt) {
  const std::string &folder = rt.options.outputDir;
  if (folder.empty())
    return "";
  struct stat info;
  if (mkdir(folder.c_str(), 0755) != 0 && errno != EEXIST)
    return "--output-dir: cannot make '" + folder + "': " +
           std::strerror(errno);
  if (stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    return "--output-dir: '" + folder + "' is not a directory";
  // Runs writing into one folder at once take turns, so its results are
  // all from one run.
  int lock = open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock >= 0)
    flock(lock, LOCK_EX);
  auto unlock = [&] {
    if (lock >= 0)
      close(lock); // releases the lock
  };
  StagedWrites files;
  std::string error;
  for (size_t k = 0; k < rt.image.outputs.size(); ++k) {
    const TensorDesc &desc = rt.image.outputs[k];
    std::string path = folder + "/result" + std::to_string(k) + ".npy";
    std::string temp =
        files.stage(path, StagedWrites::Target::RegularFile, error);
    if (temp.empty() ||
        !writeNpy(temp, desc.dtype, desc.shape, rt.outputs[k], error)) {
      unlock();
      return "output " + std::to_string(k) + ": " + error;
    }
  }
  bool committed = files.commit(error);
  unlock();
  return committed ? "" : error;
}

void listDevices() {
  std::printf("cpu: host, %llu bytes of memory\n",
              (unsigned long long)hostMemoryBytes());
  std::printf("sim: a GPU stand-in in host memory (runs GPU-placed ops with "
              "the CPU kernels)\n");
  std::printf("%s", cuda::describeDevices().c_str());
}

/// Whether `a` and `b` name the same existing file.
bool sameFile(const std::string &a, const std::string &b) {
  struct stat x, y;
  return stat(a.c_str(), &x) == 0 && stat(b.c_str(), &y) == 0 &&
         x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/// An output would replace a file the run reads: the executable, an input,
/// the weights (as a compiler refuses -o naming its source).
void refuseOverwritingInputs(const Options &options, const std::string &flag,
                             const std::string &path) {
  std::vector<std::pair<std::string, const char *>> read;
  for (const std::string &input : options.inputs)
    read.push_back({input, "an input of the run"});
  if (!options.weights.empty())
    read.push_back({options.weights, "the run's weights"});
  read.push_back({"/proc/self/exe", "this executable"});
  for (const auto &[file, what] : read)
    if (sameFile(path, file))
      fatal(flag + ": '" + path + "' is " + what + ": name another file");
}

/// The files the run will write can be written: found out before the run,
/// not after it.
void checkOutputs(const Options &options, size_t results) {
  std::string error;
  for (size_t k = 0; k < results && !options.outputDir.empty(); ++k)
    refuseOverwritingInputs(options, "--output-dir",
                            options.outputDir + "/result" + std::to_string(k) +
                                ".npy");
  for (auto [flag, path] : {std::pair{"--profile-json", &options.profileJson},
                            std::pair{"--trace", &options.trace}}) {
    if (path->empty())
      continue;
    if (!checkOutputPath(*path, error))
      fatal(std::string(flag) + ": " + error);
    refuseOverwritingInputs(options, flag, *path);
  }
  struct stat info;
  if (!options.outputDir.empty() &&
      stat(options.outputDir.c_str(), &info) == 0 && !S_ISDIR(info.st_mode))
    fatal("--output-dir: '" + options.outputDir + "' is not a directory");
}

int runMain(int argc, char **argv, const int64_t *image, const char *strings,
            const void *kernels, void (*run)(TandemRuntime *)) {
  TandemRuntime rt;
  rt.run = run;
  std::string imageError;
  if (!decodeImage(image, strings,
                   reinterpret_cast<const img::FusedKernel *>(kernels),
                   rt.image, imageError))
    fatal(imageError);
  rt.options = parseOptions(argc, argv);
  if (rt.options.listDevices) {
    listDevices();
    return 0;
  }
  checkOutputs(rt.options, rt.image.outputs.size());
  double loadStart = now();
  std::string error;
  if (!setUp(rt, error))
    fatal(error);
  loadInputs(rt);
  std::string weights = rt.options.weights;
  if (weights.empty() && !rt.options.randomWeights &&
      needsWeightsFile(rt.image)) {
    weights = defaultWeightsPath(argv[0]);
    if (!fileExists(weights))
      fatal("no weights: pass --weights FILE.safetensors or "
            "--random-weights SEED (looked for '" + weights + "')");
  }
  if (!loadWeights(rt, weights, error))
    fatal(error);
  rt.loadSeconds = now() - loadStart;

  double start = now();
  rt.origin = start;
  std::vector<double> runSeconds;
  for (int64_t i = 0; i < rt.options.repeat; ++i) {
    double runStart = now();
    run(&rt);
    finishRun(rt);
    if (rt.options.timing) // 8 bytes a run, only when asked for
      runSeconds.push_back(now() - runStart);
  }
  double total = now() - start;
  if (rt.options.timing && rt.failure.empty())
    printRunTimes(runSeconds);
  if (!rt.failure.empty())
    fatal(rt.failure);
  if (std::string failed = writeOutputs(rt); !failed.empty())
    fatal(failed);
  if (rt.options.profile)
    printProfile(rt, total);
  if (!rt.options.profileJson.empty())
    writeProfileJson(rt, total);
  if (!rt.options.trace.empty())
    writeTrace(rt);
  tearDown(rt);
  return 0;
}

} // namespace

extern "C" int tandem_rt_main(int argc, char **argv, const int64_t *image,
                              const char *strings,
                              const void *kernels,
                              void (*run)(TandemRuntime *)) {
  // Before any work: OpenBLAS on generic kernels makes every GEMM slow.
  reexecOnBetterBlasCore(argv);
  try {
    return runMain(argc, argv, image, strings, kernels, run);
  } catch (...) {
    fatal(describeException(std::current_exception()));
  }
}
