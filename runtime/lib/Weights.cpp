//===- Weights.cpp - a model's weights, from a file or random -------------===//
//
// The weights of the image's ops: mapped from a safetensors file (checked
// against what the model needs), or random ones that follow from a seed and
// each weight's name; the GPU-resident ones uploaded once. Random inputs
// (--random-inputs) use the same generator.
//
//===----------------------------------------------------------------------===//

#include "RuntimeState.h"

#include "CudaBackend.h"
#include "tandem/runtime/ModelImage.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>
#include <tuple>

using namespace tandem::rt;
namespace img = tandem::image;

namespace {

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

} // namespace

void tandem::rt::randomFill(const TensorDesc &desc, uint8_t *data,
                            uint64_t &state) {
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

namespace {

bool readWeights(TandemRuntime &rt, const std::string &path,
                 std::string &error);

/// Whether some weight of `image` is read from the weights file (rather
/// than computed at load).
bool readsWeightsFile(const Image &image) {
  return std::any_of(image.weights.begin(), image.weights.end(),
                     [](const WeightRecord &w) { return w.folded < 0; });
}

/// Runs the model's at-load function once, on the CPU, with the same
/// weights (file or seed), and points each folded weight at its result.
bool computeFoldedWeights(TandemRuntime &rt, const std::string &path,
                          std::string &error) {
  double start = now();
  TandemRuntime load;
  load.image = *rt.image.atLoad;
  load.options.backend = "sim"; // its ops are all on the CPU
  load.options.randomWeights = rt.options.randomWeights;
  auto fail = [&](const std::string &why) {
    error = "computing the weights folded at load: " + why;
    tearDown(load);
    return false;
  };
  std::string why;
  if (!setUp(load, why) || !readWeights(load, path, why))
    return fail(why);
  rt.atLoadRuntime = &load;
  try {
    rt.run(&rt); // the body runs the at-load function's ops on `load`
    finishRun(load);
  } catch (...) { // memory exhausted: `load` goes, then the caller reports it
    rt.atLoadRuntime = nullptr;
    tearDown(load);
    throw;
  }
  rt.atLoadRuntime = nullptr;
  if (!load.failure.empty())
    return fail(load.failure);
  rt.foldedWeightData.resize(load.image.outputs.size());
  for (size_t k = 0; k < load.image.outputs.size(); ++k) {
    const auto *bytes = static_cast<const uint8_t *>(load.outputs[k]);
    rt.foldedWeightData[k].assign(bytes,
                                  bytes + load.image.outputs[k].bytes());
  }
  for (size_t i = 0; i < rt.image.weights.size(); ++i)
    if (int64_t folded = rt.image.weights[i].folded; folded >= 0)
      rt.weightData[i] = rt.foldedWeightData[folded].data();
  tearDown(load);
  rt.atLoadSeconds = now() - start;
  return true;
}

/// Reads (or makes up) the weights and uploads the GPU-resident ones.
bool readWeights(TandemRuntime &rt, const std::string &path,
                 std::string &error) {
  const Image &image = rt.image;
  rt.weightData.assign(image.weights.size(), nullptr);
  if (image.weights.empty())
    return true;
  if (rt.options.randomWeights) {
    rt.randomWeightData.resize(image.weights.size());
    for (size_t i = 0; i < image.weights.size(); ++i) {
      if (image.weights[i].folded >= 0)
        continue; // computed at load (computeFoldedWeights)
      // Each weight's values follow from the seed and its name, not its
      // place in the image: the same model placed differently (or a weight
      // read on both devices) gets the same weights.
      uint64_t state = *rt.options.randomWeights ^ hashName(image.weights[i].name);
      rt.randomWeightData[i].resize(image.weights[i].tensor.bytes());
      randomFill(image.weights[i].tensor, rt.randomWeightData[i].data(), state);
      rt.weightData[i] = rt.randomWeightData[i].data();
    }
  } else if (!readsWeightsFile(image)) {
    // Every weight is computed at load, from fills and iotas alone.
  } else {
    if (!rt.weightsFile.open(path, error)) {
      error = "weights: " + error;
      return false;
    }
    for (size_t i = 0; i < image.weights.size(); ++i) {
      const WeightRecord &weight = image.weights[i];
      if (weight.folded >= 0)
        continue; // computed at load (computeFoldedWeights)
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
  if (image.atLoad && !computeFoldedWeights(rt, path, error))
    return false;
  // Resident GPU weights are uploaded once, before the first run.
  for (size_t i = 0; i < image.weights.size(); ++i) {
    const WeightRecord &weight = image.weights[i];
    if (weight.device != img::kGpu)
      continue;
    void *target = rt.arenas[img::kGpu] + weight.arenaOffset;
    if (!rt.useCuda) {
      std::memcpy(target, rt.weightData[i], weight.tensor.bytes());
    } else if (!cuda::toDevice(rt.gpu, target, rt.weightData[i],
                               weight.tensor.bytes(), error)) {
      error = "uploading weight '" + weight.name + "': " + error;
      return false;
    }
  }
  if (rt.useCuda && !cuda::synchronize(rt.gpu, error)) {
    error = "uploading the GPU-resident weights: " + error;
    return false;
  }
  return true;
}

} // namespace

bool tandem::rt::needsWeightsFile(const Image &image) {
  return readsWeightsFile(image) ||
         (image.atLoad && readsWeightsFile(*image.atLoad));
}

bool tandem::rt::loadWeights(TandemRuntime &rt, const std::string &path,
                             std::string &error) {
  if (!readWeights(rt, path, error))
    return false;
  if (rt.cudaQueues)
    pinHostBuffers(rt);
  return true;
}

void tandem::rt::pinHostBuffers(TandemRuntime &rt) {
  // What a scheduled run's copies read and write on the host: the CPU
  // arena, the inputs, and the weights streamed to the GPU (of the mapped
  // file, read-only, only their pages: the file may be near the host's
  // memory, and the resident weights were uploaded once already).
  std::vector<std::tuple<const void *, size_t, bool, std::string>> buffers;
  buffers.push_back({rt.arenas[img::kCpu], size_t(rt.image.cpuArena), false,
                     "the CPU arena"});
  for (size_t k = 0; k < rt.inputData.size(); ++k)
    buffers.push_back({rt.inputData[k].data(), rt.inputData[k].size(), false,
                       "input " + std::to_string(k)});
  // The weights placed on the CPU: those a copy to the GPU may read.
  std::vector<bool> streamed(rt.image.weights.size(), false);
  for (size_t i = 0; i < rt.image.weights.size(); ++i)
    streamed[i] = rt.image.weights[i].device == img::kCpu;
  if (rt.weightsFile.mappedBytes()) {
    // The streamed weights' pages, merged where they touch.
    uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
    std::vector<std::pair<uintptr_t, uintptr_t>> pages;
    for (size_t i = 0; i < rt.weightData.size(); ++i) {
      if (!streamed[i] || !rt.weightData[i] || rt.image.weights[i].folded >= 0)
        continue;
      auto begin = uintptr_t(rt.weightData[i]);
      uintptr_t end = begin + rt.image.weights[i].tensor.bytes();
      pages.push_back({begin / page * page, (end + page - 1) / page * page});
    }
    std::sort(pages.begin(), pages.end());
    std::vector<std::pair<uintptr_t, uintptr_t>> merged;
    for (auto range : pages) {
      if (!merged.empty() && range.first <= merged.back().second)
        merged.back().second = std::max(merged.back().second, range.second);
      else
        merged.push_back(range);
    }
    for (auto [begin, end] : merged)
      buffers.push_back({reinterpret_cast<const void *>(begin),
                         size_t(end - begin), true, "the streamed weights"});
  }
  // A folded weight's host copy once, however many records stream it.
  std::vector<bool> foldedStreamed(rt.foldedWeightData.size(), false);
  for (size_t i = 0; i < rt.image.weights.size(); ++i)
    if (int64_t folded = rt.image.weights[i].folded; streamed[i] && folded >= 0)
      foldedStreamed[folded] = true;
  for (size_t k = 0; k < rt.foldedWeightData.size(); ++k)
    if (foldedStreamed[k])
      buffers.push_back({rt.foldedWeightData[k].data(),
                         rt.foldedWeightData[k].size(), false,
                         "folded weight " + std::to_string(k)});
  for (size_t i = 0; i < rt.randomWeightData.size(); ++i)
    if (streamed[i] && rt.image.weights[i].folded < 0)
      buffers.push_back({rt.randomWeightData[i].data(),
                         rt.randomWeightData[i].size(), false,
                         "weight '" + rt.image.weights[i].name + "'"});
  std::set<std::string> noted;
  for (const auto &[data, bytes, readOnly, what] : buffers) {
    std::string why;
    if (bytes > 0 && !cuda::pinHostMemory(rt.gpu, data, bytes, readOnly, why) &&
        noted.insert(what).second)
      std::fprintf(stderr,
                   "note: cannot page-lock %s (%s): its copies are staged "
                   "through pinned buffers\n",
                   what.c_str(), why.c_str());
  }
}
