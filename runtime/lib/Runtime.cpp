//===- Runtime.cpp - tandem_rt_main and the model's calls -----------------===//
//
// The executable interface (command line, inputs, weights, outputs, the
// profile) and the execution of each op. First slice: the CPU kernels and
// the `sim` GPU stand-in (its own arena held to the budget; copies are real
// memcpys, counted and timed; compute uses the CPU kernels).
//
//===----------------------------------------------------------------------===//

#include "tandem_runtime.h"

#include "cpu/CpuKernels.h"
#include "CudaBackend.h"
#include "FileBytes.h"
#include "ThreadPool.h"
#include "tandem/runtime/ModelImage.h"
#include "tandem/runtime/Npy.h"
#include "tandem/runtime/Safetensors.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <vector>

using namespace tandem::rt;
namespace img = tandem::image;

namespace {

struct TensorDesc {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t bytes() const {
    return elementCount(shape).value_or(0) * dtypeSize(dtype);
  }
};

struct OpRecord {
  int64_t kind = 0, device = 0, arenaOffset = 0;
  std::string name, loc;
  std::vector<int64_t> operandDevices;
  std::vector<TensorDesc> operands;
  TensorDesc result;
  std::vector<int64_t> attrs;
};

struct WeightRecord {
  std::string name;
  int64_t device = 0, arenaOffset = 0;
  TensorDesc tensor;
};

struct Image {
  std::vector<TensorDesc> inputs, outputs;
  std::vector<WeightRecord> weights;
  std::vector<OpRecord> ops;
  int64_t cpuArena = 0, gpuArena = 0, gpuBudget = 0;
};

/// Reads words off the image (written by the compiler of this same build).
class ImageReader {
public:
  ImageReader(const int64_t *words, const char *strings)
      : words(words), strings(strings) {}
  int64_t next() { return words[pos++]; }
  size_t position() const { return pos; }
  std::string string() { return strings + next(); }
  TensorDesc tensor() {
    TensorDesc desc;
    desc.dtype = static_cast<DType>(next());
    int64_t rank = next();
    for (int64_t i = 0; i < rank; ++i)
      desc.shape.push_back(next());
    return desc;
  }

private:
  const int64_t *words;
  const char *strings;
  size_t pos = 0;
};

/// Reads the image into `image`, or says what is wrong with it. The image
/// was written by the compiler of this same build; the checks catch one
/// from another build or a corrupt binary before a kernel reads past its
/// attributes.
bool decodeImage(const int64_t *words, const char *strings, Image &image,
                 std::string &error) {
  ImageReader reader(words, strings);
  if (reader.next() != img::kMagic || reader.next() != img::kVersion) {
    error = "the model image is corrupt or from another version of Tandem";
    return false;
  }
  int64_t inputs = reader.next(), outputs = reader.next(),
          weights = reader.next(), ops = reader.next();
  image.cpuArena = reader.next();
  image.gpuArena = reader.next();
  image.gpuBudget = reader.next();
  for (int64_t i = 0; i < inputs; ++i)
    image.inputs.push_back(reader.tensor());
  for (int64_t i = 0; i < outputs; ++i)
    image.outputs.push_back(reader.tensor());
  for (int64_t i = 0; i < weights; ++i) {
    WeightRecord weight;
    weight.name = reader.string();
    weight.device = reader.next();
    weight.arenaOffset = reader.next();
    weight.tensor = reader.tensor();
    image.weights.push_back(weight);
  }
  for (int64_t i = 0; i < ops; ++i) {
    OpRecord op;
    size_t start = reader.position();
    int64_t wordCount = reader.next();
    op.kind = reader.next();
    if (op.kind < 0 || op.kind >= img::kNumOpKinds) {
      error = "the model image is corrupt: op #" + std::to_string(i) +
              " has kind " + std::to_string(op.kind) +
              ", which this runtime does not know";
      return false;
    }
    op.device = reader.next();
    op.arenaOffset = reader.next();
    op.name = reader.string();
    op.loc = reader.string();
    int64_t operands = reader.next();
    for (int64_t k = 0; k < operands; ++k) {
      op.operandDevices.push_back(reader.next());
      op.operands.push_back(reader.tensor());
    }
    op.result = reader.tensor();
    int64_t attrs = reader.next();
    int64_t expected = img::attrWordCount(op.kind);
    if ((expected >= 0 && attrs != expected) ||
        reader.position() + attrs != start + wordCount) {
      error = "the model image is corrupt: op #" + std::to_string(i) + " (" +
              img::kindName(op.kind) + ") has " + std::to_string(attrs) +
              " attribute words" +
              (expected >= 0 ? ", expected " + std::to_string(expected) : "");
      return false;
    }
    for (int64_t k = 0; k < attrs; ++k)
      op.attrs.push_back(reader.next());
    image.ops.push_back(op);
  }
  return true;
}

struct OpStats {
  int64_t calls = 0;
  double total = 0, min = 1e30, max = 0;
};

struct Options {
  std::vector<std::string> inputs;
  std::string outputDir, weights, backend = "auto", profileJson, trace;
  bool listDevices = false;
  std::optional<uint64_t> randomWeights, randomInputs;
  std::optional<int64_t> gpuMemory;
  int64_t repeat = 1;
  bool profile = false;
};

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// splitmix64: deterministic random tensors for --random-*.
uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// FNV-1a of a weight's name.
uint64_t hashName(const std::string &name) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : name)
    hash = (hash ^ c) * 0x100000001b3ULL;
  return hash;
}

void randomFill(const TensorDesc &desc, uint8_t *data, uint64_t &state) {
  uint64_t n = elementCount(desc.shape).value_or(0);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t r = nextRandom(state);
    double unit = (r >> 11) * (1.0 / 9007199254740992.0); // [0, 1)
    switch (desc.dtype) {
    case DType::F32:
      reinterpret_cast<float *>(data)[i] = float(unit - 0.5);
      break;
    case DType::I64:
      reinterpret_cast<int64_t *>(data)[i] = int64_t(r % 16);
      break;
    case DType::I32:
      reinterpret_cast<int32_t *>(data)[i] = int32_t(r % 16);
      break;
    case DType::Bool:
      data[i] = r & 1;
      break;
    default: // f16/bf16: small integers' bit patterns are not meaningful
      reinterpret_cast<uint16_t *>(data)[i] = 0;
      break;
    }
  }
}

} // namespace

struct TandemRuntime {
  Image image;
  Options options;
  std::vector<uint8_t *> arenas = {nullptr, nullptr};
  std::vector<std::vector<uint8_t>> inputData;
  std::vector<std::vector<uint8_t>> randomWeightData;
  std::vector<void *> weightData;
  SafetensorsFile weightsFile;
  std::vector<void *> outputs;
  // Per op of the image, built once so that executing an op allocates
  // nothing: its operand and result views (only the data pointers change
  // between calls) and its timings, summed by name for the reports.
  std::vector<std::vector<TensorView>> operandViews;
  std::vector<TensorView> resultViews;
  std::vector<OpStats> opStats;
  struct TraceEvent {
    std::string name;
    int64_t device;
    double start, seconds;
  };
  std::vector<TraceEvent> trace;
  double origin = 0;
  int64_t h2dCount = 0, d2hCount = 0, h2dBytes = 0, d2hBytes = 0;
  double copySeconds = 0, loadSeconds = 0;
  std::string failure;
  int64_t budget = 0;
  bool useCuda = false;
  std::mutex callMutex; // held by each tandem_rt_infer and by close
};

namespace {

/// The timings summed over the ops of one name on one device, keyed
/// "name@device" (what --profile and --profile-json report).
std::map<std::string, OpStats> statsByName(const TandemRuntime &rt) {
  std::map<std::string, OpStats> byName;
  for (size_t index = 0; index < rt.opStats.size(); ++index) {
    const OpStats &op = rt.opStats[index];
    if (op.calls == 0)
      continue;
    const OpRecord &record = rt.image.ops[index];
    OpStats &sum = byName[record.name + "@" +
                          (record.device == img::kGpu ? "gpu" : "cpu")];
    sum.calls += op.calls;
    sum.total += op.total;
    sum.min = std::min(sum.min, op.min);
    sum.max = std::max(sum.max, op.max);
  }
  return byName;
}

[[noreturn]] void fatal(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::exit(1);
}

void usage(const char *program) {
  std::printf(
      "usage: %s [--input FILE.npy]... [--output-dir DIR]\n"
      "  [--weights FILE.safetensors | --random-weights SEED]\n"
      "  [--random-inputs SEED] [--device-backend sim|auto]\n"
      "  [--gpu-memory BYTES] [--repeat N] [--profile] [--profile-json FILE]\n"
      "  [--trace FILE] [--list-devices]\n",
      program);
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

Options parseOptions(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&]() -> const char * {
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
               flag == "--repeat" || flag == "--gpu-memory") {
      const char *text = value();
      if (!parseUnsigned(text, number))
        fatal(flag + " takes a non-negative integer, got '" + text + "'");
      if (flag == "--random-weights")
        options.randomWeights = number;
      else if (flag == "--random-inputs")
        options.randomInputs = number;
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
    } else if (flag == "--list-devices") {
      options.listDevices = true;
    } else if (flag == "--help" || flag == "-h") {
      usage(argv[0]);
      std::exit(0);
    } else {
      fatal("unknown flag '" + flag + "' (see --help)");
    }
  }
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

uint8_t *allocateArena(int64_t bytes, std::string &error) {
  void *memory = nullptr;
  if (posix_memalign(&memory, 64, std::max<int64_t>(bytes, 64)) != 0) {
    error = "cannot allocate an arena of " + std::to_string(bytes) + " bytes";
    return nullptr;
  }
  return static_cast<uint8_t *>(memory);
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

/// Loads the weights from `path` (or random ones with --random-weights) and
/// uploads the GPU-resident ones.
bool loadWeights(TandemRuntime &rt, const std::string &path,
                 std::string &error) {
  const Image &image = rt.image;
  rt.weightData.assign(image.weights.size(), nullptr);
  if (image.weights.empty())
    return true;
  if (rt.options.randomWeights) {
    rt.randomWeightData.resize(image.weights.size());
    for (size_t i = 0; i < image.weights.size(); ++i) {
      // Each weight's values follow from the seed and its name, not its
      // place in the image: the same model placed differently (or a weight
      // read on both devices) gets the same weights.
      uint64_t state = *rt.options.randomWeights ^ hashName(image.weights[i].name);
      rt.randomWeightData[i].resize(image.weights[i].tensor.bytes());
      randomFill(image.weights[i].tensor, rt.randomWeightData[i].data(), state);
      rt.weightData[i] = rt.randomWeightData[i].data();
    }
  } else {
    if (!rt.weightsFile.open(path, error)) {
      error = "weights: " + error;
      return false;
    }
    for (size_t i = 0; i < image.weights.size(); ++i) {
      const WeightRecord &weight = image.weights[i];
      const SafetensorsEntry *entry = rt.weightsFile.find(weight.name);
      if (!entry) {
        error = "weights '" + path + "' have no tensor '" + weight.name + "'";
        return false;
      }
      if (entry->dtype != weight.tensor.dtype ||
          entry->shape != weight.tensor.shape) {
        error = "weight '" + weight.name + "' is " +
                formatShape(entry->shape) + " " + dtypeName(entry->dtype) +
                " in '" + path + "', the model needs " +
                formatShape(weight.tensor.shape) + " " +
                dtypeName(weight.tensor.dtype);
        return false;
      }
      // Mapped read-only, a bool weight cannot be made 0/1 in place as
      // inputs are: another byte is refused.
      if (entry->dtype == DType::Bool)
        for (uint64_t b = 0; b < entry->bytes; ++b)
          if (entry->data[b] > 1) {
            error = "weight '" + weight.name + "' in '" + path +
                    "' is BOOL but holds the byte " +
                    std::to_string(entry->data[b]) + " (bools are 0 or 1)";
            return false;
          }
      rt.weightData[i] = const_cast<uint8_t *>(entry->data);
    }
  }
  // Resident GPU weights are uploaded once, before the first run.
  for (size_t i = 0; i < image.weights.size(); ++i) {
    const WeightRecord &weight = image.weights[i];
    if (weight.device != img::kGpu)
      continue;
    void *target = rt.arenas[img::kGpu] + weight.arenaOffset;
    if (!rt.useCuda) {
      std::memcpy(target, rt.weightData[i], weight.tensor.bytes());
    } else if (!cuda::toDevice(target, rt.weightData[i],
                               weight.tensor.bytes(), error)) {
      error = "uploading weight '" + weight.name + "': " + error;
      return false;
    }
  }
  return true;
}

/// ": op NAME at LOC asks for N bytes at offset O": of the GPU buffers that
/// reach past `budget` in the arena, the lowest (where the plan crosses the
/// budget line).
std::string firstBeyond(const Image &image, int64_t budget) {
  std::string culprit;
  int64_t lowest = INT64_MAX;
  auto consider = [&](int64_t offset, int64_t bytes, const std::string &what) {
    if (offset + bytes > budget && offset < lowest) {
      lowest = offset;
      culprit = ": " + what + " asks for " + std::to_string(bytes) +
                " bytes at offset " + std::to_string(offset);
    }
  };
  for (const WeightRecord &weight : image.weights)
    if (weight.device == img::kGpu)
      consider(weight.arenaOffset, int64_t(weight.tensor.bytes()),
               "weight '" + weight.name + "'");
  for (const OpRecord &op : image.ops)
    if (op.device == img::kGpu)
      consider(op.arenaOffset, int64_t(op.result.bytes()),
               "op '" + op.name + "' at " + op.loc);
  return culprit.empty() ? " (every buffer fits; their alignment padding does not)"
                         : culprit;
}

/// This machine's physical memory in bytes; 0 if it cannot be known.
uint64_t hostMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
}

/// Whether what the run keeps in host memory (the CPU arena, the sim
/// backend's GPU arena, the inputs, random weights) fits in this machine's
/// memory: beyond it the kernel would kill the process half-way instead of
/// an error now. (Weights from a file are mapped, paged in as read.)
bool fitsHostMemory(const TandemRuntime &rt, std::string &error) {
  auto add = [](uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
  };
  uint64_t inputs = 0, weights = 0;
  for (const TensorDesc &input : rt.image.inputs)
    inputs = add(inputs, input.bytes());
  if (rt.options.randomWeights)
    for (const WeightRecord &weight : rt.image.weights)
      weights = add(weights, weight.tensor.bytes());
  uint64_t arenas = add(uint64_t(rt.image.cpuArena),
                        rt.useCuda ? 0 : uint64_t(rt.image.gpuArena));
  uint64_t needed = add(add(arenas, inputs), weights);
  uint64_t memory = hostMemoryBytes();
  if (memory == 0)
    return true; // unknown: let the allocations say
  if (needed <= memory)
    return true;
  error = "the model needs " + std::to_string(needed) +
          " bytes of host memory (arenas " + std::to_string(arenas) +
          ", inputs " + std::to_string(inputs) +
          (rt.options.randomWeights
               ? ", random weights " + std::to_string(weights)
               : std::string()) +
          "), more than this machine's " + std::to_string(memory) + " bytes";
  return false;
}

/// Picks the device backend, checks the budget and allocates the arenas.
bool setUp(TandemRuntime &rt, std::string &error) {
  std::string why;
  if (rt.options.backend == "cuda") {
    if (!cuda::available(why)) {
      error = "--device-backend cuda: " + why;
      return false;
    }
    rt.useCuda = true;
  } else if (rt.options.backend == "auto") {
    // A plan with no GPU memory (a model placed all on the CPU) neither
    // needs nor starts CUDA.
    if (rt.image.gpuArena == 0)
      rt.useCuda = false;
    else if (!(rt.useCuda = cuda::available(why)))
      std::fprintf(stderr, "note: no CUDA GPU (%s): GPU ops run on the sim "
                           "backend\n", why.c_str());
  } else if (rt.options.backend != "sim") {
    error = "unknown device backend '" + rt.options.backend +
            "': expected sim, cuda or auto";
    return false;
  }
  int64_t budget = rt.image.gpuBudget;
  if (rt.options.gpuMemory) {
    if (*rt.options.gpuMemory > budget) {
      error = "--gpu-memory may only lower the compiled budget of " +
              std::to_string(budget) + " bytes";
      return false;
    }
    budget = *rt.options.gpuMemory;
  }
  rt.budget = budget;
  if (rt.image.gpuArena > budget) {
    error = "the memory plan needs a GPU arena of " +
            std::to_string(rt.image.gpuArena) + " bytes, over the budget of " +
            std::to_string(budget) + " bytes" + firstBeyond(rt.image, budget);
    return false;
  }
  if (!fitsHostMemory(rt, error))
    return false;
  rt.arenas[img::kCpu] = allocateArena(rt.image.cpuArena, error);
  if (!rt.arenas[img::kCpu])
    return false;
  if (rt.useCuda) {
    if (!cuda::start(rt.image.gpuArena, error)) {
      error = "CUDA: " + error;
      return false;
    }
    rt.arenas[img::kGpu] = static_cast<uint8_t *>(cuda::arena());
  } else {
    rt.arenas[img::kGpu] = allocateArena(rt.image.gpuArena, error);
    if (!rt.arenas[img::kGpu])
      return false;
  }
  rt.outputs.assign(rt.image.outputs.size(), nullptr);
  rt.operandViews.clear();
  rt.resultViews.clear();
  for (const OpRecord &op : rt.image.ops) {
    std::vector<TensorView> views;
    for (const TensorDesc &operand : op.operands)
      views.push_back({operand.dtype, operand.shape, nullptr});
    rt.operandViews.push_back(std::move(views));
    rt.resultViews.push_back({op.result.dtype, op.result.shape, nullptr});
  }
  rt.opStats.assign(rt.image.ops.size(), OpStats());
  return true;
}

void tearDown(TandemRuntime &rt) {
  std::free(rt.arenas[img::kCpu]);
  if (rt.useCuda)
    cuda::stop();
  else
    std::free(rt.arenas[img::kGpu]);
  rt.arenas = {nullptr, nullptr};
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

/// A JSON string literal.
std::string quote(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\u%04x", c);
      out += escape;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

/// A text report (--profile-json, --trace) written whole or not at all:
/// `write` prints it, and a write error (a full disk) is fatal and leaves
/// any earlier file in place.
template <typename F>
void writeReport(const std::string &flag, const std::string &path, F write) {
  std::string error;
  {
    StagedWrites files; // removes its file unless committed
    std::string temp =
        files.stage(path, StagedWrites::Target::StreamAllowed, error);
    FILE *f = temp.empty() ? nullptr : std::fopen(temp.c_str(), "w");
    if (!temp.empty() && !f)
      error = "cannot write '" + path + "': " + std::strerror(errno);
    if (f) {
      write(f);
      errno = 0;
      bool ok = !std::ferror(f) && std::fflush(f) == 0;
      int cause = errno;
      ok &= std::fclose(f) == 0;
      if (!ok)
        error = "cannot write '" + path + "': " +
                std::strerror(cause ? cause : errno ? errno : EIO);
      else
        files.commit(error);
    }
  }
  if (!error.empty())
    fatal(flag + ": " + error);
}

void printProfileJson(TandemRuntime &rt, double totalSeconds, FILE *f) {
  std::fprintf(f,
               "{\n  \"total_us\": %.3f,\n  \"runs\": %lld,\n  \"load_us\": %.3f,\n"
               "  \"gpu_arena_bytes\": %lld,\n  \"gpu_budget_bytes\": %lld,\n"
               "  \"copies\": {\"h2d_count\": %lld, \"d2h_count\": %lld, "
               "\"h2d_bytes\": %lld, \"d2h_bytes\": %lld, \"sync_count\": %lld, "
               "\"async_count\": 0, \"total_us\": %.3f},\n  \"ops\": [",
               totalSeconds * 1e6, (long long)rt.options.repeat,
               rt.loadSeconds * 1e6, (long long)rt.image.gpuArena,
               (long long)rt.budget, (long long)rt.h2dCount,
               (long long)rt.d2hCount, (long long)rt.h2dBytes,
               (long long)rt.d2hBytes, (long long)(rt.h2dCount + rt.d2hCount),
               rt.copySeconds * 1e6);
  bool first = true;
  for (const auto &[key, stats] : statsByName(rt)) {
    size_t at = key.rfind('@');
    std::fprintf(f,
                 "%s\n    {\"name\": %s, \"device\": \"%s\", \"calls\": %lld, "
                 "\"total_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f, "
                 "\"avg_us\": %.3f}",
                 first ? "" : ",", quote(key.substr(0, at)).c_str(),
                 key.substr(at + 1).c_str(), (long long)stats.calls,
                 stats.total * 1e6, stats.min * 1e6, stats.max * 1e6,
                 stats.total * 1e6 / stats.calls);
    first = false;
  }
  std::fprintf(f, "\n  ]\n}\n");
}

void writeProfileJson(TandemRuntime &rt, double totalSeconds) {
  writeReport("--profile-json", rt.options.profileJson,
              [&](FILE *f) { printProfileJson(rt, totalSeconds, f); });
}

/// A Chrome/Perfetto trace: one complete event per op execution, one track
/// per device.
void printTrace(TandemRuntime &rt, FILE *f) {
  std::fprintf(f, "{\"traceEvents\": [\n");
  std::fprintf(f, "  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, "
                  "\"tid\": 0, \"args\": {\"name\": \"cpu\"}},\n");
  std::fprintf(f, "  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, "
                  "\"tid\": 1, \"args\": {\"name\": \"gpu (sim)\"}}");
  for (const auto &event : rt.trace)
    std::fprintf(f,
                 ",\n  {\"name\": %s, \"ph\": \"X\", \"pid\": 0, \"tid\": %lld, "
                 "\"ts\": %.3f, \"dur\": %.3f}",
                 quote(event.name).c_str(), (long long)event.device,
                 event.start * 1e6, event.seconds * 1e6);
  std::fprintf(f, "\n]}\n");
}

void writeTrace(TandemRuntime &rt) {
  writeReport("--trace", rt.options.trace,
              [&](FILE *f) { printTrace(rt, f); });
}

void listDevices() {
  std::printf("cpu: host, %llu bytes of memory\n",
              (unsigned long long)hostMemoryBytes());
  std::printf("sim: a GPU stand-in in host memory (runs GPU-placed ops with "
              "the CPU kernels)\n");
  std::printf("%s", cuda::describeDevices().c_str());
}

void printProfile(TandemRuntime &rt, double totalSeconds) {
  int64_t runs = rt.options.repeat;
  std::printf("\n-------------------------  Tandem profile  "
              "-------------------------\n");
  std::printf("total: %.3f ms for %lld run(s), %.3f ms per run; load "
              "(weights, arenas) %.3f ms\n",
              totalSeconds * 1e3, (long long)runs, totalSeconds * 1e3 / runs,
              rt.loadSeconds * 1e3);
  std::printf("copies: h2d %lld (%lld bytes), d2h %lld (%lld bytes), %.3f ms; "
              "sync %lld, async 0\n",
              (long long)rt.h2dCount, (long long)rt.h2dBytes,
              (long long)rt.d2hCount, (long long)rt.d2hBytes,
              rt.copySeconds * 1e3, (long long)(rt.h2dCount + rt.d2hCount));
  std::printf("%-28s %-6s %7s %11s %11s %11s %11s\n", "op", "device", "calls",
              "total ms", "min ms", "max ms", "avg ms");
  for (const auto &[key, stats] : statsByName(rt)) {
    size_t at = key.rfind('@');
    std::printf("%-28s %-6s %7lld %11.4f %11.4f %11.4f %11.4f\n",
                key.substr(0, at).c_str(), key.substr(at + 1).c_str(),
                (long long)stats.calls, stats.total * 1e3, stats.min * 1e3,
                stats.max * 1e3, stats.total * 1e3 / stats.calls);
  }
}


/// The files the run will write can be written: found out before the run,
/// not after it.
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

/// A message for an exception escaping the runtime (memory exhausted).
std::string describeException(std::exception_ptr exception) {
  try {
    std::rethrow_exception(exception);
  } catch (const std::bad_alloc &) {
    return "out of host memory (the model's buffers, inputs or weights do "
           "not fit)";
  } catch (const std::exception &e) {
    return std::string("internal error: ") + e.what();
  } catch (...) {
    return "internal error: an unknown exception";
  }
}

int runMain(int argc, char **argv, const int64_t *image, const char *strings,
            void (*run)(TandemRuntime *)) {
  TandemRuntime rt;
  std::string imageError;
  if (!decodeImage(image, strings, rt.image, imageError))
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
  if (weights.empty() && !rt.options.randomWeights && !rt.image.weights.empty()) {
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
  for (int64_t i = 0; i < rt.options.repeat; ++i)
    run(&rt);
  double total = now() - start;
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
                              void (*run)(TandemRuntime *)) {
  try {
    return runMain(argc, argv, image, strings, run);
  } catch (...) {
    fatal(describeException(std::current_exception()));
  }
}

//===----------------------------------------------------------------------===//
// The library form
//===----------------------------------------------------------------------===//

static void setError(char *buffer, int64_t size, const std::string &message) {
  if (!buffer || size <= 0)
    return;
  size_t length = std::min<size_t>(message.size(), size_t(size - 1));
  std::memcpy(buffer, message.data(), length);
  buffer[length] = '\0';
}

/// Runtimes open in this library; the last one closed stops the kernels'
/// worker threads, so that a library can be unloaded leaving nothing behind.
static std::atomic<int> openRuntimes{0};

static TandemRuntime *openRuntime(const int64_t *image, const char *strings,
                                  const char *weights, const char *backend,
                                  char *error, int64_t errorSize) {
  auto rt = std::make_unique<TandemRuntime>();
  std::string imageError;
  if (!decodeImage(image, strings, rt->image, imageError)) {
    setError(error, errorSize, imageError);
    return nullptr;
  }
  rt->options.backend = backend && *backend ? backend : "auto";
  std::string message;
  if (!setUp(*rt, message)) {
    setError(error, errorSize, message);
    return nullptr;
  }
  rt->inputData.resize(rt->image.inputs.size());
  for (size_t k = 0; k < rt->image.inputs.size(); ++k)
    rt->inputData[k].resize(rt->image.inputs[k].bytes());
  if (!rt->image.weights.empty() && (!weights || !*weights)) {
    setError(error, errorSize, "the model has weights: pass a safetensors file");
    tearDown(*rt);
    return nullptr;
  }
  if (!loadWeights(*rt, weights ? weights : "", message)) {
    setError(error, errorSize, message);
    tearDown(*rt);
    return nullptr;
  }
  ++openRuntimes;
  return rt.release();
}

extern "C" TandemRuntime *tandem_rt_open(const int64_t *image,
                                         const char *strings,
                                         const char *weights,
                                         const char *backend, char *error,
                                         int64_t errorSize) {
  try {
    return openRuntime(image, strings, weights, backend, error, errorSize);
  } catch (...) {
    setError(error, errorSize, describeException(std::current_exception()));
    return nullptr;
  }
}

extern "C" int tandem_rt_load(TandemRuntime **slot, const int64_t *image,
                              const char *strings, const char *weights,
                              const char *backend, char *error,
                              int64_t errorSize) {
  // One model per library (the CUDA backend's state is the library's): a
  // second load is refused and leaves the loaded model as it was.
  if (*slot) {
    setError(error, errorSize, "a model is already loaded: call "
                               "tandem_model_unload first");
    return 1;
  }
  *slot = tandem_rt_open(image, strings, weights, backend, error, errorSize);
  return *slot ? 0 : 1;
}

static int infer(TandemRuntime *rt, void (*run)(TandemRuntime *),
                 const void *const *inputs, void *const *outputs, char *error,
                 int64_t errorSize) {
  for (size_t k = 0; k < rt->inputData.size(); ++k)
    std::memcpy(rt->inputData[k].data(), inputs[k], rt->inputData[k].size());
  rt->failure.clear();
  run(rt);
  if (!rt->failure.empty()) {
    setError(error, errorSize, rt->failure);
    return 1;
  }
  for (size_t k = 0; k < rt->image.outputs.size(); ++k)
    std::memcpy(outputs[k], rt->outputs[k], rt->image.outputs[k].bytes());
  return 0;
}

extern "C" int tandem_rt_infer(TandemRuntime *rt, void (*run)(TandemRuntime *),
                               const void *const *inputs,
                               void *const *outputs, char *error,
                               int64_t errorSize) {
  if (!rt) {
    setError(error, errorSize, "the model is not loaded: call "
                               "tandem_model_load first");
    return 1;
  }
  // Calls from several threads take turns: a runtime's arenas and its
  // input and output slots serve one call at a time.
  std::lock_guard<std::mutex> lock(rt->callMutex);
  try {
    return infer(rt, run, inputs, outputs, error, errorSize);
  } catch (...) {
    setError(error, errorSize, describeException(std::current_exception()));
    return 1;
  }
}

extern "C" void tandem_rt_close(TandemRuntime *rt) {
  if (!rt)
    return;
  {
    std::lock_guard<std::mutex> lock(rt->callMutex); // no call in flight
    tearDown(*rt);
  }
  delete rt;
  if (--openRuntimes == 0)
    stopWorkers();
}

extern "C" void *tandem_rt_arena(TandemRuntime *rt, int32_t device) {
  return rt->arenas[device];
}

extern "C" void *tandem_rt_input(TandemRuntime *rt, int32_t index) {
  return rt->inputData[index].data();
}

extern "C" void *tandem_rt_weight(TandemRuntime *rt, int32_t index) {
  return rt->weightData[index];
}

extern "C" void tandem_rt_output(TandemRuntime *rt, int32_t index, void *data) {
  rt->outputs[index] = data;
}

extern "C" void tandem_rt_execute(TandemRuntime *rt, int32_t index,
                                  void **operands, void *result) {
  if (!rt->failure.empty())
    return;
  const OpRecord &op = rt->image.ops[index];
  std::vector<TensorView> &views = rt->operandViews[index];
  for (size_t k = 0; k < views.size(); ++k)
    views[k].data = operands[k];
  TensorView &out = rt->resultViews[index];
  out.data = result;
  double start = now();
  std::string error;
  bool ok;
  if (!rt->useCuda) {
    ok = runCpuKernel(op.kind, views, out, op.attrs, error);
  } else if (op.kind == img::kTransfer) {
    ok = op.device == img::kGpu
             ? cuda::toDevice(result, operands[0], op.result.bytes(), error)
             : cuda::toHost(result, operands[0], op.result.bytes(), error);
  } else if (op.device == img::kGpu) {
    ok = cuda::runKernel(op.kind, views, out, op.attrs, error);
  } else {
    ok = runCpuKernel(op.kind, views, out, op.attrs, error);
  }
  if (!ok) {
    rt->failure = op.name + " at " + op.loc + ": " + error;
    return;
  }
  double seconds = now() - start;
  if (op.kind == img::kTransfer) {
    int64_t bytes = op.result.bytes();
    if (op.device == img::kGpu) {
      ++rt->h2dCount;
      rt->h2dBytes += bytes;
    } else {
      ++rt->d2hCount;
      rt->d2hBytes += bytes;
    }
    rt->copySeconds += seconds;
  }
  if (!rt->options.trace.empty())
    rt->trace.push_back({op.name, op.device, start - rt->origin, seconds});
  OpStats &stats = rt->opStats[index];
  ++stats.calls;
  stats.total += seconds;
  stats.min = std::min(stats.min, seconds);
  stats.max = std::max(stats.max, seconds);
}
