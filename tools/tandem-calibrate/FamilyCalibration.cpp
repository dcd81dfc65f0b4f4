//===- FamilyCalibration.cpp - fitting each op family to real runs --------===//
//
// The rates of calibrateCpu are what OpenBLAS and a streaming loop reach;
// the runtime's kernels reach their own fraction of them, and every op pays
// a fixed cost that no roofline sees. So the calibration compiles one model
// of representative ops (each family at several shapes, from the sizes of
// small models to those of large ones) with the real compiler, runs it with
// the real runtime, and fits per family
//
//   measured us = fixed_us + max(compute us / compute_efficiency,
//                                memory us / memory_efficiency)
//
// where an op's compute and memory times at the measured rates are what
// the compiler predicts for it under two profiles with every family at
// {1, 1, 0}: one whose bandwidth is unbounded (its prediction is the
// compute time) and one whose FLOP rate is (the memory time). The fit
// minimizes the squared relative error (small ops count as much as large
// ones) over a grid of the two efficiencies, with the best fixed_us >= 0
// for each.
//
//===----------------------------------------------------------------------===//

#include "Calibration.h"

#include "tandem/Analysis/CostModel.h"
#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/Support/OutputFile.h"
#include "tandem/runtime/CpuKernelPaths.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace mlir::tandem;
using namespace tandem_calibrate;

namespace {

/// The calibration model's text: one function whose arguments feed every
/// op and whose results are every op's result (so that none is dead).
class CalibrationModel {
public:
  /// A new argument of `type`; its SSA name.
  std::string arg(const std::string &type) {
    argTypes.push_back(type);
    return "%a" + std::to_string(argTypes.size() - 1);
  }

  /// An op `text` (with "$r" where its result's name goes) of result type
  /// `type`, the one measured (its location says so). Each argument it is
  /// the first to read is read just before it (a reduction to a scalar), so
  /// that it finds its operands in the caches as an op of a model finds what
  /// its producer just wrote. Its result is one of the model's: written to
  /// memory not recently used. (After reuseResults, the other way: see
  /// buildLargeOpsModel.) Its SSA name.
  std::string op(const std::string &text, const std::string &type) {
    for (size_t at = text.find("%a"); at != std::string::npos;
         at = text.find("%a", at + 2)) {
      size_t end = at + 2;
      while (end < text.size() && isdigit((unsigned char)text[end]))
        ++end;
      size_t index = std::stoul(text.substr(at + 2, end - at - 2));
      if (warmed.size() <= index)
        warmed.resize(index + 1);
      if (warmed[index])
        continue;
      warmed[index] = true;
      reduce(text.substr(at, end - at), argTypes[index]);
    }
    std::string measured = text + " loc(\"" + kMeasured + "\")";
    if (!reusedResults)
      return emit(measured, type);
    // Bytes for the result, written just before and dead, which the memory
    // plan gives it: the first op of a run wrote into bytes last used in the
    // run before, out of the caches (a 128 x 13 x 512 linear took 40-70 us
    // first, 16-25 us right after, and the GEMMs' fixed cost fitted 2x).
    // They are written from an argument of their own (one per write, so
    // that no two writes merge): a fill, computed once at load, wrote
    // nothing in a run, and the 512 x 256 x 768 linear of a
    // transformer's attention measured 730-800 us where the model's own
    // took 600-650.
    std::string scalar = arg(tensor(type));
    reduce(emit(llvm::formatv("$r = tandem.broadcast_to {0} : {1} -> {2} "
                              "loc(\"{3}\")",
                              scalar, tensor(type), type, kWarmUp)
                    .str(),
                type, /*returned=*/false),
           type);
    std::string name = emit(measured, type, /*returned=*/false);
    reduce(name, type);
    return name;
  }

  /// A parallel read of a large argument, not measured: the runtime's
  /// worker threads fall asleep between runs, and the first parallel op of
  /// a run pays for waking them, which no op measured should (the first
  /// GEMMs of the large ops' program measured 2-6x their time alone).
  void wakeWorkers() {
    std::string type = "tensor<1024x1024xf32>";
    reduce(arg(type), type);
  }

  /// A product, not measured: the first GEMM of a run took 25-35 us more
  /// than the same GEMM right after another (whichever came first), as a
  /// model's GEMMs, one after another, do not.
  void warmUpProducts() {
    std::string type = "tensor<64x64xf32>";
    std::string a = arg(type), b = arg(type);
    reduce(helper(llvm::formatv("$r = tandem.matmul {0}, {1} : ({2}, {2}) -> {2}",
                                a, b, type)
                      .str(),
                  type),
           type);
  }

  /// From here on, each op's result is read by a reduction right after it
  /// and is then dead: the memory plan reuses its bytes, so that the ops
  /// write into memory in the caches, as a small model's do.
  void reuseResults() { reusedResults = true; }

  /// An op that only feeds a measured one (its inputs' index arithmetic):
  /// run, not measured, its result not returned.
  std::string helper(const std::string &text, const std::string &type) {
    return emit(text + " loc(\"" + kWarmUp + "\")", type, /*returned=*/false);
  }

  /// The locations that mark the ops measured and the warm-up reads.
  static constexpr const char *kMeasured = "calibration", *kWarmUp = "warm-up";

  std::string text() const {
    std::string args, results;
    for (size_t k = 0; k < argTypes.size(); ++k)
      args += (k ? ", %a" : "%a") + std::to_string(k) + ": " + argTypes[k];
    for (size_t k = 0; k < resultTypes.size(); ++k)
      results += (k ? ", " : "") + resultTypes[k];
    std::string names;
    for (size_t k = 0; k < resultNames.size(); ++k)
      names += (k ? ", " : "") + resultNames[k];
    return "func.func @main(" + args + ") -> (" + results + ") {\n" + body +
           "  return " + names + " : " + results + "\n}\n";
  }

private:
  /// Emits `text` as the next result; `returned`: one of the function's
  /// results (the scalar reductions, which keep every measured op live).
  std::string emit(const std::string &text, const std::string &type,
                   bool returned = true) {
    std::string name = "%r" + std::to_string(values++);
    std::string line = text;
    line.replace(line.find("$r"), 2, name);
    body += "  " + line + "\n";
    if (returned) {
      resultNames.push_back(name);
      resultTypes.push_back(type);
    }
    return name;
  }

  /// A warm-up read of `value` (of `type`): its maximum, a returned scalar.
  void reduce(const std::string &value, const std::string &type) {
    std::string axes;
    for (int64_t k = 0, rank = std::count(type.begin(), type.end(), 'x');
         k < rank; ++k)
      axes += (k ? ", " : "") + std::to_string(k);
    emit(llvm::formatv("$r = tandem.reduce_max {0} {{axes = array<i64: {1}>} "
                       ": {2} -> {3} loc(\"{4}\")",
                       value, axes, type, tensor(type), kWarmUp)
             .str(),
         tensor(type));
  }

  /// The 0-d tensor of `type`'s element type.
  static std::string tensor(const std::string &type) {
    size_t last = type.rfind('x');
    std::string element =
        type.substr(last + 1, type.size() - last - 2); // drop the '>'
    return "tensor<" + element + ">";
  }

  std::vector<std::string> argTypes, resultTypes, resultNames;
  std::vector<bool> warmed;
  std::string body;
  int values = 0;
  bool reusedResults = false;
};

std::string tensor(const std::vector<int64_t> &shape,
                   const char *element = "f32") {
  std::string type = "tensor<";
  for (int64_t dim : shape)
    type += std::to_string(dim) + "x";
  return type + element + ">";
}

/// conv2d of x [n, c, h, h] by o filters k x k (stride s, padding p,
/// groups g), with a bias.
void conv(CalibrationModel &m, int64_t n, int64_t c, int64_t h, int64_t o,
          int64_t k, int64_t s, int64_t p, int64_t g) {
  int64_t oh = (h + 2 * p - k) / s + 1;
  std::string x = m.arg(tensor({n, c, h, h}));
  std::string w = m.arg(tensor({o, c / g, k, k}));
  std::string b = m.arg(tensor({o}));
  std::string result = tensor({n, o, oh, oh});
  m.op(llvm::formatv("$r = tandem.conv2d {0}, {1}, {2} {{strides = "
                     "array<i64: {3}, {3}>, padding = array<i64: {4}, {4}>, "
                     "groups = {5} : i64} : ({6}, {7}, {8}) -> {9}",
                     x, w, b, s, p, g, tensor({n, c, h, h}),
                     tensor({o, c / g, k, k}), tensor({o}), result)
           .str(),
       result);
}

/// linear of x [rows, in] to out features, with a bias.
void linear(CalibrationModel &m, int64_t rows, int64_t in, int64_t out) {
  std::string x = m.arg(tensor({rows, in})), w = m.arg(tensor({out, in})),
              b = m.arg(tensor({out}));
  m.op(llvm::formatv("$r = tandem.linear {0}, {1}, {2} : ({3}, {4}, {5}) -> "
                     "{6}",
                     x, w, b, tensor({rows, in}), tensor({out, in}),
                     tensor({out}), tensor({rows, out}))
           .str(),
       tensor({rows, out}));
}

/// A batched matmul of [batch, size, size] matrices.
void matmul(CalibrationModel &m, int64_t batch, int64_t size) {
  std::string type = tensor({batch, size, size});
  std::string a = m.arg(type), b = m.arg(type);
  m.op(llvm::formatv("$r = tandem.matmul {0}, {1} : ({2}, {2}) -> {2}", a, b,
                     type)
           .str(),
       type);
}

/// A k x k pooling window (stride s, padding p) over x [n, c, h, h].
void pool(CalibrationModel &m, int64_t n, int64_t c, int64_t h, int64_t k,
          int64_t s, int64_t p, bool max) {
  int64_t oh = (h + 2 * p - k) / s + 1;
  std::string x = m.arg(tensor({n, c, h, h}));
  std::string result = tensor({n, c, oh, oh});
  m.op(llvm::formatv("$r = tandem.{0} {1} {{kernel = array<i64: {2}, {2}>, "
                     "strides = array<i64: {3}, {3}>, padding = array<i64: "
                     "{4}, {4}>} : {5} -> {6}",
                     max ? "max_pool2d" : "avg_pool2d", x, k, s, p,
                     tensor({n, c, h, h}), result)
           .str(),
       result);
}

/// Elementwise and transcendental ops over [rows, width]: unary ones, and
/// binary ones with and without broadcasting.
void elementwise(CalibrationModel &m, int64_t rows, int64_t width,
                 std::initializer_list<const char *> unaries) {
  std::string type = tensor({rows, width});
  std::string x = m.arg(type), y = m.arg(type), row = m.arg(tensor({width}));
  for (const char *unary : unaries)
    m.op(llvm::formatv("$r = tandem.{0} {1} : {2}", unary, x, type).str(),
         type);
  m.op(llvm::formatv("$r = tandem.add {0}, {1} : {2}", x, y, type).str(),
       type);
  m.op(llvm::formatv("$r = tandem.mul {0}, {1} : {2}, {3} -> {2}", x, row,
                     type, tensor({width}))
           .str(),
       type);
}

/// reduce_mean of `shape` over its last axis, or its last two (`pixels`).
void reduction(CalibrationModel &m, const std::vector<int64_t> &shape,
               bool pixels) {
  std::vector<int64_t> out(shape.begin(), shape.end() - (pixels ? 2 : 1));
  size_t rank = shape.size();
  std::string axes = pixels ? llvm::formatv("{0}, {1}", rank - 2, rank - 1).str()
                            : std::to_string(rank - 1);
  std::string x = m.arg(tensor(shape));
  m.op(llvm::formatv("$r = tandem.reduce_mean {0} {{axes = array<i64: {1}>} : "
                     "{2} -> {3}",
                     x, axes, tensor(shape), tensor(out))
           .str(),
       tensor(out));
}

/// softmax and log_softmax over the last axis of `shape`.
void softmax(CalibrationModel &m, const std::vector<int64_t> &shape) {
  std::string x = m.arg(tensor(shape));
  for (const char *name : {"softmax", "log_softmax"})
    m.op(llvm::formatv("$r = tandem.{0} {1} {{axis = {2} : i64} : {3}", name, x,
                       shape.size() - 1, tensor(shape))
             .str(),
         tensor(shape));
}

void layerNorm(CalibrationModel &m, int64_t rows, int64_t width) {
  std::string type = tensor({rows, width});
  std::string x = m.arg(type), g = m.arg(tensor({width})),
              b = m.arg(tensor({width}));
  m.op(llvm::formatv("$r = tandem.layer_norm {0}, {1}, {2} {{axis = 1 : i64} "
                     ": ({3}, {4}, {4}) -> {3}",
                     x, g, b, type, tensor({width}))
           .str(),
       type);
}

void batchNorm(CalibrationModel &m, int64_t n, int64_t c, int64_t h) {
  std::string type = tensor({n, c, h, h}), channel = tensor({c});
  std::string x = m.arg(type), mean = m.arg(channel), var = m.arg(channel),
              scale = m.arg(channel), shift = m.arg(channel);
  m.op(llvm::formatv("$r = tandem.batch_norm {0}, {1}, {2}, {3}, {4} "
                     "{{epsilon = 1.0e-5 : f32} : ({5}, {6}, {6}, {6}, {6}) -> "
                     "{5}",
                     x, scale, shift, mean, var, type, channel)
           .str(),
       type);
}

/// A transpose, a concat, a slice, a broadcast and a fill of [rows, 256].
void dataMovement(CalibrationModel &m, int64_t rows) {
  std::string in = tensor({rows, 256}), out = tensor({256, rows});
  std::string x = m.arg(in), y = m.arg(in);
  m.op(llvm::formatv("$r = tandem.transpose {0} {{perm = array<i64: 1, 0>} : "
                     "{1} -> {2}",
                     x, in, out)
           .str(),
       out);
  std::string joined = tensor({rows, 512});
  m.op(llvm::formatv("$r = tandem.concat {0}, {1} {{axis = 1 : i64} : ({2}, "
                     "{2}) -> {3}",
                     x, y, in, joined)
           .str(),
       joined);
  std::string part = tensor({rows, 128});
  m.op(llvm::formatv("$r = tandem.slice {0} {{starts = array<i64: 0, 64>, "
                     "limits = array<i64: {1}, 192>, strides = array<i64: 1, "
                     "1>} : {2} -> {3}",
                     x, rows, in, part)
           .str(),
       part);
  std::string row = m.arg(tensor({256}));
  m.op(llvm::formatv("$r = tandem.broadcast_to {0} : {1} -> {2}", row,
                     tensor({256}), in)
           .str(),
       in);
  m.op(llvm::formatv("$r = tandem.fill(0.0 : f32) : {0}", in).str(), in);
}

/// Ids i * 7919 mod rows for i < lookups, computed in the model by helper
/// ops (not measured).
std::string scatteredIds(CalibrationModel &m, int64_t rows, int64_t lookups) {
  std::string ids = tensor({lookups}, "i64");
  auto helper = [&](const std::string &text) { return m.helper(text, ids); };
  std::string iota =
      helper(llvm::formatv("$r = tandem.iota {{axis = 0 : i64} : {0}", ids));
  std::string prime =
      helper(llvm::formatv("$r = tandem.fill(7919 : i64) : {0}", ids));
  std::string count =
      helper(llvm::formatv("$r = tandem.fill({0} : i64) : {1}", rows, ids));
  std::string scaled = helper(
      llvm::formatv("$r = tandem.mul {0}, {1} : {2}", iota, prime, ids));
  std::string quotient = helper(
      llvm::formatv("$r = tandem.div {0}, {1} : {2}", scaled, count, ids));
  std::string whole = helper(
      llvm::formatv("$r = tandem.mul {0}, {1} : {2}", quotient, count, ids));
  return helper(
      llvm::formatv("$r = tandem.sub {0}, {1} : {2}", scaled, whole, ids));
}

/// An embedding lookup of `lookups` scattered rows (scatteredIds).
void embedding(CalibrationModel &m, int64_t rows, int64_t width,
               int64_t lookups) {
  std::string ids = tensor({lookups}, "i64");
  std::string index = scatteredIds(m, rows, lookups);
  std::string table = m.arg(tensor({rows, width}));
  std::string result = tensor({lookups, width});
  m.op(llvm::formatv("$r = tandem.embedding {0}, {1} : ({2}, {3}) -> {4}",
                     table, index, tensor({rows, width}), ids, result)
           .str(),
       result);
}

/// An embedding bag (mode sum) of `lookups` scattered rows (the same ids as
/// embedding's) into `bags` equal bags.
void embeddingBag(CalibrationModel &m, int64_t rows, int64_t width,
                  int64_t lookups, int64_t bags) {
  std::string ids = tensor({lookups}, "i64"), offsetType = tensor({bags}, "i64");
  std::string index = scatteredIds(m, rows, lookups);
  std::string iota = m.helper(
      llvm::formatv("$r = tandem.iota {{axis = 0 : i64} : {0}", offsetType),
      offsetType);
  std::string size = m.helper(llvm::formatv("$r = tandem.fill({0} : i64) : {1}",
                                            lookups / bags, offsetType),
                              offsetType);
  std::string offsets = m.helper(
      llvm::formatv("$r = tandem.mul {0}, {1} : {2}", iota, size, offsetType),
      offsetType);
  std::string table = m.arg(tensor({rows, width}));
  std::string result = tensor({bags, width});
  m.op(llvm::formatv("$r = tandem.embedding_bag {0}, {1}, {2} {{mode = \"sum\"} "
                     ": ({3}, {4}, {5}) -> {6}",
                     table, index, offsets, tensor({rows, width}), ids,
                     offsetType, result)
           .str(),
       result);
}

/// Where the large ops' results go: into memory not recently used, or into
/// the bytes of the result before, which the caches still hold. A model's
/// op writes into arena bytes that the memory plan reuses, in the caches or
/// not by how large the arena is and how long ago the bytes were last
/// used; the two programs bracket it and each family is fitted to both.
/// (On a Xeon with a large L3, cold results alone predicted 9 of the
/// validation's 28 models within 0.85-1.15, nearly all too slow; reused
/// results alone 20, too fast on copies of large tensors; both 26, the same
/// hour. On other machines each alone had been 1.2-1.5x off.)
enum class ResultMemory { Cold, Reused };

/// Every family at shapes from a small model's to a large one's
/// (CalibrationModel::op says how each is run).
CalibrationModel buildLargeOpsModel(ResultMemory results) {
  CalibrationModel m;
  m.wakeWorkers();
  m.warmUpProducts();
  if (results == ResultMemory::Reused)
    m.reuseResults();
  // (The products of 2^18 to 2^25 FLOPs, split over the pool, are an MLP's
  // and a recurrent cell's: fitted from two of them alone, the hand-off's
  // fixed cost moved from 13 to 38 us between calibrations.)
  for (auto [rows, in, out] : {std::tuple<int64_t, int64_t, int64_t>{512, 16, 32},
                               {128, 13, 512},
                               {256, 64, 64},
                               {128, 128, 128},
                               {256, 512, 128},
                               {64, 256, 256},
                               {512, 256, 768},
                               {256, 1024, 1024},
                               {512, 1024, 256},
                               {4, 1024, 1024}})
    linear(m, rows, in, out);
  matmul(m, 4, 32);
  matmul(m, 32, 64);
  // Dense convolutions (3x3 and a 7x7 stem; few output channels, few input
  // channels over a batch), grouped, 1x1 and depthwise ones.
  conv(m, 1, 8, 16, 8, 3, 1, 1, 1);
  conv(m, 2, 16, 32, 16, 3, 1, 1, 1);
  conv(m, 2, 64, 16, 64, 3, 1, 1, 1);
  conv(m, 2, 128, 8, 128, 3, 1, 1, 1);
  conv(m, 2, 256, 4, 256, 3, 1, 1, 1);
  conv(m, 2, 3, 64, 64, 7, 2, 3, 1);
  conv(m, 1, 32, 56, 64, 3, 1, 1, 1);
  conv(m, 2, 64, 64, 64, 3, 1, 1, 1);
  conv(m, 1, 64, 28, 128, 3, 2, 1, 1);
  conv(m, 2, 128, 16, 32, 3, 1, 1, 1);
  conv(m, 2, 128, 2, 32, 3, 1, 1, 1);
  conv(m, 2, 256, 2, 256, 3, 1, 1, 1);
  conv(m, 16, 3, 64, 32, 3, 1, 1, 1);
  // Stems (conv_stem): the first layers of mobilenet_v3 and efficientnet at
  // 224 x 224, mobilenet_v2's at 96 x 96, resnet's over a 112 x 112 image.
  conv(m, 1, 3, 224, 16, 3, 2, 1, 1);
  conv(m, 1, 3, 224, 32, 3, 2, 1, 1);
  conv(m, 2, 3, 96, 32, 3, 2, 1, 1);
  conv(m, 1, 3, 112, 64, 7, 2, 3, 1);
  conv(m, 4, 32, 32, 64, 3, 1, 1, 1);
  conv(m, 2, 64, 16, 64, 3, 1, 1, 4);
  conv(m, 2, 128, 8, 128, 3, 2, 1, 8);
  conv(m, 1, 96, 28, 96, 3, 1, 1, 12);
  conv(m, 2, 256, 4, 256, 3, 1, 1, 16);
  conv(m, 2, 64, 16, 256, 1, 1, 0, 1);
  conv(m, 1, 96, 28, 24, 1, 1, 0, 1);
  conv(m, 1, 240, 14, 40, 1, 1, 0, 1);
  conv(m, 2, 512, 4, 512, 1, 1, 0, 1);
  conv(m, 1, 16, 112, 64, 1, 1, 0, 1);
  conv(m, 1, 32, 112, 32, 3, 1, 1, 32);
  conv(m, 1, 144, 56, 144, 3, 2, 1, 144);
  conv(m, 1, 240, 28, 240, 5, 1, 2, 240);
  conv(m, 1, 960, 7, 960, 3, 1, 1, 960);
  conv(m, 2, 64, 16, 64, 3, 1, 1, 64);
  pool(m, 2, 64, 32, 3, 2, 1, true);
  pool(m, 1, 64, 112, 3, 2, 1, true);
  pool(m, 2, 128, 16, 2, 2, 0, false);
  pool(m, 8, 32, 32, 2, 2, 0, true);
  for (int64_t rows : {4, 64, 1024, 8192})
    elementwise(m, rows, 256, {"relu", "sigmoid", "gelu", "exp", "tanh"});
  for (auto [shape, pixels] : {std::pair<std::vector<int64_t>, bool>{{16, 16}, false},
                               {{64, 1024}, false},
                               {{4096, 256}, false},
                               {{2, 512, 8, 8}, true},
                               {{1, 960, 7, 7}, true},
                               {{256, 4096}, false}})
    reduction(m, shape, pixels);
  for (std::vector<int64_t> shape : {std::vector<int64_t>{4, 16, 16},
                                     {8, 64, 64},
                                     {32, 64, 64},
                                     {512, 1024}})
    softmax(m, shape);
  for (auto [rows, width] : {std::pair<int64_t, int64_t>{16, 64}, {512, 256}, {2048, 1024}})
    layerNorm(m, rows, width);
  batchNorm(m, 2, 64, 32);
  batchNorm(m, 1, 32, 112);
  batchNorm(m, 2, 512, 4);
  for (int64_t rows : {16, 512, 2048})
    dataMovement(m, rows);
  // Attention's transposes: heads out of the rows (the innermost axis
  // kept), and keys for the scores (moved).
  for (auto [in, perm, out] :
       {std::tuple<std::vector<int64_t>, const char *, std::vector<int64_t>>{
            {8, 64, 4, 64}, "0, 2, 1, 3", {8, 4, 64, 64}},
        {{2, 128, 4, 32}, "0, 2, 1, 3", {2, 4, 128, 32}},
        {{8, 4, 64, 64}, "0, 1, 3, 2", {8, 4, 64, 64}},
        {{2, 4, 128, 32}, "0, 1, 3, 2", {2, 4, 32, 128}}}) {
    std::string x = m.arg(tensor(in));
    m.op(llvm::formatv("$r = tandem.transpose {0} {{perm = array<i64: {1}>} : "
                       "{2} -> {3}",
                       x, perm, tensor(in), tensor(out))
             .str(),
         tensor(out));
  }
  embedding(m, 1000, 64, 64);
  embedding(m, 10000, 64, 4096);
  embedding(m, 200000, 32, 8192);
  embeddingBag(m, 1000, 32, 64, 16);
  embeddingBag(m, 100000, 32, 16384, 2048);
  return m;
}

/// The small shapes of every family, as a small model (an MLP, a recurrent
/// cell, a tiny CNN) runs them: a program of their own, run many times
/// over, so that its code and data stay in the caches from run to run, one
/// op after another in memory the plan reuses. (Run after the large ops in
/// one program, the same tiny GEMMs took 3-5 us against 1.5-2.6 us in a
/// small model.)
CalibrationModel buildSmallOpsModel() {
  CalibrationModel m;
  // As in the large ops' program: the first measured GEMM, 128 x 13 x 16,
  // took 3.9 us after the rest of the program's ops, and 1.0-2.0 us as an
  // MLP's first layer, where the same three GEMMs run run after run.
  m.warmUpProducts();
  m.reuseResults();
  {
    linear(m, 128, 13, 16);
    linear(m, 128, 16, 32);
    linear(m, 128, 32, 1); // a regression head: one output column
    linear(m, 16, 64, 64);
    linear(m, 4, 256, 768);
    // Skinny products (gemm_skinny) whose weights stay in the caches from
    // step to step, as a recurrent cell's or a decoder's do.
    linear(m, 1, 512, 512);
    linear(m, 8, 256, 1024);
    linear(m, 16, 256, 256);
    linear(m, 2, 1024, 512);
    matmul(m, 4, 16);
    conv(m, 1, 8, 8, 8, 3, 1, 1, 1);
    conv(m, 1, 16, 8, 32, 1, 1, 0, 1);
    conv(m, 1, 16, 8, 16, 3, 1, 1, 16);
    conv(m, 1, 16, 8, 16, 3, 1, 1, 4);
    conv(m, 1, 96, 1, 4, 1, 1, 0, 1);
    conv(m, 1, 4, 1, 96, 1, 1, 0, 1);
    pool(m, 1, 8, 16, 2, 2, 0, true);
    elementwise(m, 128, 16, {"relu"});
    elementwise(m, 4, 256, {"relu", "sigmoid", "tanh"});
    reduction(m, {4, 256}, false);
    softmax(m, {4, 4, 16, 16});
    layerNorm(m, 4, 64);
    batchNorm(m, 1, 8, 8);
    dataMovement(m, 4);
    embedding(m, 1000, 64, 16);
  }
  return m;
}

/// Runs `program` with `args`, its output to `log`; an error naming the
/// step and the log's tail when it fails.
llvm::Error runStep(llvm::StringRef what, llvm::StringRef program,
                    const std::vector<std::string> &args,
                    llvm::StringRef log) {
  std::vector<llvm::StringRef> argv{program};
  for (const std::string &arg : args)
    argv.push_back(arg);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log, log};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(program, argv, std::nullopt,
                                         redirects, 0, 0, &message);
  if (status == 0)
    return llvm::Error::success();
  std::string output;
  if (auto buffer = llvm::MemoryBuffer::getFile(log))
    output = (*buffer)->getBuffer().take_back(2000).str();
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv("{0} failed ({1}): {2}", what,
                    message.empty() ? "exit status " + std::to_string(status)
                                    : message,
                    output)
          .str());
}

/// The op runs of a --profile-json.
llvm::Expected<std::vector<llvm::json::Object>>
readOpRuns(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read the calibration run's profile");
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse((*buffer)->getBuffer());
  if (!parsed)
    return parsed.takeError();
  const llvm::json::Array *runs =
      parsed->getAsObject() ? parsed->getAsObject()->getArray("op_runs")
                            : nullptr;
  if (!runs)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the calibration run's profile has no "
                                   "op_runs");
  std::vector<llvm::json::Object> result;
  for (const llvm::json::Value &run : *runs) {
    const llvm::json::Object *object = run.getAsObject();
    if (!object || object->getNumber("calls").value_or(0) <= 0)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "an op of the calibration run never ran");
    result.push_back(*object);
  }
  return result;
}

/// One op's steady time in a run, microseconds: its average without the
/// first call, which pays for faulting in the arenas' pages.
double steadyUs(const llvm::json::Object &run) {
  double calls = run.getNumber("calls").value_or(1);
  double total = run.getNumber("total_us").value_or(0);
  if (calls < 2)
    return total / std::max(calls, 1.0);
  return (total - run.getNumber("first_us").value_or(0)) / (calls - 1);
}

/// A log-spaced grid of efficiencies from `low` to `high`.
std::vector<double> efficiencyGrid(double low, double high, int points) {
  std::vector<double> grid;
  for (int k = 0; k < points; ++k)
    grid.push_back(low * std::pow(high / low, double(k) / (points - 1)));
  return grid;
}

/// The fitted time of `sample` under `cost`.
double fittedUs(const CalibrationSample &sample, const FamilyCost &cost) {
  double fixedUs = sample.onCallingThread && cost.inlineFixedUs
                       ? *cost.inlineFixedUs
                       : cost.fixedUs;
  return fixedUs + kernelBodyUs(sample.computeUs / cost.computeEfficiency,
                               sample.memoryUs / cost.memoryEfficiency,
                               sample.inPhases);
}

/// The family cost through `samples` with the least sum of
/// (fitted - measured)^2 / measured: between absolute errors (where the
/// large ops alone would count) and relative ones (where the many small ops
/// of the calibration would pull the efficiencies of large ones, which make
/// most of a model's time).
FamilyFit fit(const std::vector<const CalibrationSample *> &samples) {
  // For given efficiencies the best fixed cost of sum (a + r - t)^2 / t is
  // the weighted mean of t - r with weights 1 / t (at least 0).
  static const std::vector<double> grid = efficiencyGrid(1e-3, 100, 121);
  std::vector<std::pair<FamilyCost, double>> fits; // each point's error
  double leastError = INFINITY;
  // GEMMs that run on the calling thread (no worker woken) get a fixed cost
  // of their own, where the family has both kinds.
  bool bothKinds =
      llvm::any_of(samples, [](auto *s) { return s->onCallingThread; }) &&
      llvm::any_of(samples, [](auto *s) { return !s->onCallingThread; });
  for (double compute : grid)
    for (double memory : grid) {
      FamilyCost cost{compute, memory, 0};
      double weights[2] = {0, 0}, residual[2] = {0, 0};
      for (const CalibrationSample *sample : samples) {
        int kind = bothKinds && sample->onCallingThread;
        double w = 1 / sample->measuredUs;
        weights[kind] += w;
        residual[kind] += w * (sample->measuredUs - fittedUs(*sample, cost));
      }
      cost.fixedUs = std::max(0.0, residual[0] / weights[0]);
      if (bothKinds)
        cost.inlineFixedUs = std::max(0.0, residual[1] / weights[1]);
      double error = 0;
      for (const CalibrationSample *sample : samples) {
        double difference = fittedUs(*sample, cost) - sample->measuredUs;
        error += difference * difference / sample->measuredUs;
      }
      fits.push_back({cost, error});
      leastError = std::min(leastError, error);
    }
  // Of the fits as good as the best, the highest efficiencies (compute
  // first): an efficiency no sample is bound by (a lookup's FLOP rate) is
  // then not the grid's floor, which priced an embedding bag's adds as if
  // the CPU ran 1000x slower.
  FamilyFit best;
  for (const auto &[cost, error] : fits)
    if (error <= leastError * (1 + 1e-9) + 1e-12)
      best.cost = cost; // the grid ascends: later is higher
  best.samples = samples.size();
  for (const CalibrationSample *sample : samples) {
    double ratio = sample->measuredUs / fittedUs(*sample, best.cost);
    best.worstRatio = std::max({best.worstRatio, ratio, 1 / ratio});
  }
  return best;
}

} // namespace

llvm::Expected<FamilyCalibration>
tandem_calibrate::calibrateFamilies(const DeviceProfile &rates,
                                    llvm::StringRef compiler, bool quick,
                                    llvm::StringRef saveModel) {
  llvm::SmallString<128> dir;
  if (std::error_code error =
          llvm::sys::fs::createUniqueDirectory("tandem-calibrate", dir))
    return llvm::createStringError(error, "cannot make a temporary directory");
  auto path = [&](llvm::StringRef name) {
    llvm::SmallString<128> full(dir);
    llvm::sys::path::append(full, name);
    return std::string(full);
  };
  // Everything the calibration writes goes when it is done.
  struct RemoveDir {
    std::string dir;
    ~RemoveDir() { llvm::sys::fs::remove_directories(dir); }
  } cleanup{std::string(dir)};

  // The measured rates with every family at {1, 1, 0}, and either the
  // bandwidth or the FLOP rate unbounded: each op's predicted time is then
  // its compute time, or its memory time.
  constexpr double kUnbounded = 1e21;
  DeviceProfile computeOnly = rates;
  computeOnly.gpu.reset();
  computeOnly.cpu.setUniformFamilies(0);
  DeviceProfile memoryOnly = computeOnly;
  computeOnly.cpu.memoryBandwidth = kUnbounded;
  memoryOnly.cpu.f32Flops = memoryOnly.cpu.f16Flops =
      memoryOnly.cpu.bf16Flops = memoryOnly.cpu.intOps = kUnbounded;
  std::string log = path("log.txt");
  auto write = [&](const std::string &file,
                   const std::string &text) -> llvm::Error {
    return writeFileAtomically(file,
                               [&](llvm::raw_ostream &os) { os << text; });
  };
  // Compiles `model` under `profile` and runs it `rounds` times of `repeat`
  // runs; the op runs of each round.
  auto compileAndRun = [&](llvm::StringRef model, const DeviceProfile &profile,
                           llvm::StringRef name, int rounds, int repeat)
      -> llvm::Expected<std::vector<std::vector<llvm::json::Object>>> {
    std::string profilePath = path((name + ".json").str()),
                binary = path(name.str());
    if (llvm::Error error =
            write(profilePath, llvm::formatv("{0:2}", toJSON(profile)).str()))
      return std::move(error);
    if (llvm::Error error = runStep(
            "compiling the calibration model", compiler,
            // Every op runs in every run: many read weights alone, which
            // a model would compute once, at load. Each op runs alone too:
            // fused with the reduction that reads it (a warm-up read), an
            // elementwise sample became a reduction group, and the
            // elementwise and reduction families were fitted to neither.
            {model.str(), "-o", binary, "--strategy=all-cpu",
             "--fold-at-load=false", "--fuse=false",
             "--device-profile=" + profilePath},
            log))
      return std::move(error);
    std::vector<std::vector<llvm::json::Object>> result;
    for (int round = 0; round < rounds; ++round) {
      std::string runProfile = path("run.json");
      if (llvm::Error error = runStep(
              "running the calibration model", binary,
              {"--random-inputs", "1", "--repeat", std::to_string(repeat),
               "--profile-json", runProfile},
              log))
        return std::move(error);
      llvm::Expected<std::vector<llvm::json::Object>> runs =
          readOpRuns(runProfile);
      if (!runs)
        return runs.takeError();
      result.push_back(std::move(*runs));
    }
    return result;
  };
  // The large ops' program, then the small ones' (run 20 times as often: a
  // run of it takes about a hundredth of the large one's).
  int rounds = quick ? 2 : 5, repeat = quick ? 3 : 10, smallRepeat = 20 * repeat;
  struct Program {
    const char *name;
    CalibrationModel model;
    int repeat;
  } programs[] = {{"large", buildLargeOpsModel(ResultMemory::Cold), repeat},
                  {"large-reused", buildLargeOpsModel(ResultMemory::Reused),
                   repeat},
                  {"small", buildSmallOpsModel(), smallRepeat}};
  std::vector<CalibrationSample> samples;
  for (const Program &program : programs) {
    std::string modelPath = path((llvm::Twine(program.name) + ".mlir").str());
    std::string text = program.model.text();
    if (llvm::Error error = write(modelPath, text))
      return std::move(error);
    if (!saveModel.empty()) {
      // The large ops' program at the path given, the others beside it.
      llvm::SmallString<128> saved(saveModel);
      if (llvm::StringRef(program.name) == "small")
        llvm::sys::path::replace_extension(saved, "small.mlir");
      else if (llvm::StringRef(program.name) == "large-reused")
        llvm::sys::path::replace_extension(saved, "reused.mlir");
      if (llvm::Error error = write(std::string(saved), text))
        return std::move(error);
    }
    std::string name = program.name;
    auto timed = compileAndRun(modelPath, computeOnly, name + "-compute",
                               rounds, program.repeat);
    if (!timed)
      return timed.takeError();
    // One run of the memory-time build gives its predictions.
    auto memory = compileAndRun(modelPath, memoryOnly, name + "-memory", 1, 1);
    if (!memory)
      return memory.takeError();
    for (size_t k = 0; k < timed->front().size(); ++k) {
      const llvm::json::Object &run = timed->front()[k];
      if (run.getString("loc").value_or("") != CalibrationModel::kMeasured)
        continue;
      CalibrationSample sample;
      sample.family = run.getString("family").value_or("").str();
      sample.name = run.getString("name").value_or("").str();
      sample.computeUs = run.getNumber("predicted_us").value_or(0);
      sample.memoryUs =
          k < memory->front().size()
              ? memory->front()[k].getNumber("predicted_us").value_or(0)
              : 0;
      std::optional<CostFamily> family = parseCostFamily(sample.family);
      // A GEMM's FLOPs, from its compute time at the measured rate.
      sample.onCallingThread =
          family && isGemmFamily(*family) &&
          ::tandem::rt::gemmRunsOnCallingThread(sample.computeUs * 1e-6 *
                                                rates.cpu.f32Flops);
      sample.inPhases =
          family && kernelRunsInPhases(*family, DeviceKind::CPU);
      sample.measuredUs = INFINITY;
      for (const std::vector<llvm::json::Object> &round : *timed)
        if (k < round.size())
          sample.measuredUs = std::min(sample.measuredUs, steadyUs(round[k]));
      samples.push_back(sample);
    }
  }

  if (samples.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the calibration run measured no ops");
  std::map<std::string, std::vector<const CalibrationSample *>> byFamily;
  for (const CalibrationSample &sample : samples)
    if (sample.computeUs + sample.memoryUs > 0 && sample.measuredUs > 0 &&
        std::isfinite(sample.measuredUs))
      byFamily[sample.family].push_back(&sample);
  FamilyCalibration result;
  for (auto &[name, familyCalibrationSamples] : byFamily) {
    std::optional<CostFamily> family = parseCostFamily(name);
    if (!family)
      continue;
    FamilyFit familyFit = fit(familyCalibrationSamples);
    familyFit.family = *family;
    result.fits.push_back(familyFit);
  }
  for (CalibrationSample &sample : samples)
    for (const FamilyFit &familyFit : result.fits)
      if (costFamilyName(familyFit.family) == sample.family)
        sample.fittedUs = fittedUs(sample, familyFit.cost);
  result.samples = std::move(samples);
  result.rounds = rounds;
  result.repeat = repeat;
  result.smallRepeat = smallRepeat;
  return result;
}
