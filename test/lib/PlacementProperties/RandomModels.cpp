//===- RandomModels.cpp - random tandem models as MLIR text ---------------===//

#include "RandomModels.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <vector>

using namespace mlir;
using namespace mlir::tandem;

namespace {

/// A 2-D f32 value of the model being written.
struct Tensor {
  std::string name;
  int64_t rows, cols;
};

class ModelWriter {
public:
  explicit ModelWriter(std::mt19937 &rng) : rng(rng) {}

  std::string write(int numOps) {
    int numArguments = 1 + pick(2);
    std::string signature;
    for (int i = 0; i < numArguments; ++i) {
      Tensor argument{llvm::formatv("%arg{0}", i).str(), dim(), dim()};
      signature += (i ? ", " : "") + argument.name + ": " + type(argument);
      values.push_back(argument);
    }
    while (emitted < numOps)
      emitOne();
    // Every value nothing reads is a result, so no op is dead code.
    std::vector<Tensor> results;
    for (const Tensor &value : values)
      if (!isRead(value.name) && value.name.rfind("%arg", 0) != 0)
        results.push_back(value);
    std::string resultNames, resultTypeList;
    for (auto [i, result] : llvm::enumerate(results)) {
      resultNames += (i ? ", " : "") + result.name;
      resultTypeList += (i ? ", " : "") + type(result);
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "func.func @main(" << signature << ") -> (" << resultTypeList
       << ") {\n"
       << body << "  return " << resultNames << " : " << resultTypeList
       << "\n}\n";
    return text;
  }

private:
  std::mt19937 &rng;
  std::vector<Tensor> values;
  std::string body;
  int emitted = 0;
  int counter = 0;
  /// The text of ops written so far, to write some of them twice.
  std::vector<std::pair<std::string, Tensor>> pureOps;

  /// True if the body reads `name` (a use besides its definition).
  bool isRead(const std::string &name) const {
    size_t count = 0;
    for (size_t at = body.find(name); at != std::string::npos;
         at = body.find(name, at + 1)) {
      char next = at + name.size() < body.size() ? body[at + name.size()] : 0;
      count += !std::isdigit(static_cast<unsigned char>(next));
    }
    return count > 1;
  }
  int pick(size_t n) { return int(rng() % n); }
  bool chance(double p) {
    return std::uniform_real_distribution<double>(0, 1)(rng) < p;
  }
  int64_t dim() {
    static const int64_t dims[] = {8, 16, 64, 128, 256, 512, 1024};
    return dims[pick(std::size(dims))];
  }
  static std::string type(const Tensor &t) {
    return llvm::formatv("tensor<{0}x{1}xf32>", t.rows, t.cols).str();
  }
  std::string fresh() { return llvm::formatv("%v{0}", counter++).str(); }
  const Tensor &anyValue() {
    // Prefer recent values, so the graph is deep as well as wide.
    size_t n = values.size();
    size_t window = std::min<size_t>(n, 6);
    return chance(0.75) ? values[n - 1 - pick(window)] : values[pick(n)];
  }
  /// A pin on some ops: the user's fixed choice.
  std::string pin() {
    if (!chance(0.07))
      return "";
    return chance(0.5) ? "tandem.pin = #tandem.device<cpu>"
                       : "tandem.pin = #tandem.device<gpu>";
  }
  static std::string attrs(std::string a, const std::string &b) {
    if (!b.empty())
      a += (a.empty() ? "" : ", ") + b;
    return a.empty() ? "" : " {" + a + "}";
  }
  /// Writes one op line and records its result.
  const Tensor &emit(const std::string &line, Tensor result, bool pure = true) {
    body += "  " + result.name + " = " + line + "\n";
    ++emitted;
    values.push_back(result);
    if (pure)
      pureOps.push_back({line, result});
    return values.back();
  }
  Tensor weight(int64_t rows, int64_t cols) {
    Tensor w{fresh(), rows, cols};
    emit(llvm::formatv("\"tandem.weight\"(){0} : () -> {1}",
                       attrs(llvm::formatv("name = \"w{0}\"", counter).str(),
                             pin()),
                       type(w))
             .str(),
         w, /*pure=*/false);
    return w;
  }

  void emitOne() {
    const Tensor x = anyValue();
    switch (pick(12)) {
    case 0:
    case 1: { // linear, sometimes with a bias
      int64_t n = dim();
      Tensor w = weight(n, x.cols);
      Tensor y{fresh(), x.rows, n};
      if (chance(0.5)) {
        std::string bias = fresh();
        body += llvm::formatv("  {0} = \"tandem.weight\"() {{name = \"b{1}\"} "
                              ": () -> tensor<{2}xf32>\n",
                              bias, counter, n);
        ++emitted;
        emit(llvm::formatv("\"tandem.linear\"({0}, {1}, {2}){3} : ({4}, {5}, "
                           "tensor<{6}xf32>) -> {7}",
                           x.name, w.name, bias, attrs("", pin()), type(x),
                           type(w), n, type(y)),
             y);
      } else {
        emit(llvm::formatv("\"tandem.linear\"({0}, {1}){2} : ({3}, {4}) -> {5}",
                           x.name, w.name, attrs("", pin()), type(x), type(w),
                           type(y)),
             y);
      }
      return;
    }
    case 2: { // matmul with another value of matching rows, or a weight
      Tensor rhs{"", 0, 0};
      for (const Tensor &v : values)
        if (v.rows == x.cols && v.name != x.name && chance(0.5))
          rhs = v;
      if (rhs.rows == 0)
        rhs = weight(x.cols, dim());
      Tensor y{fresh(), x.rows, rhs.cols};
      emit(llvm::formatv("\"tandem.matmul\"({0}, {1}){2} : ({3}, {4}) -> {5}",
                         x.name, rhs.name, attrs("", pin()), type(x),
                         type(rhs), type(y)),
           y);
      return;
    }
    case 3: { // binary with a same-shaped value, else a broadcast row
      static const char *ops[] = {"add", "mul", "maximum", "sub"};
      const char *op = ops[pick(4)];
      Tensor rhs{"", 0, 0};
      for (const Tensor &v : values)
        if (v.rows == x.rows && v.cols == x.cols && chance(0.6))
          rhs = v;
      if (rhs.rows == 0)
        rhs = chance(0.5) ? weight(1, x.cols)
                          : fill(1, x.cols, /*value=*/0.25);
      Tensor y{fresh(), x.rows, x.cols};
      emit(llvm::formatv("\"tandem.{0}\"({1}, {2}){3} : ({4}, {5}) -> {6}", op,
                         x.name, rhs.name, attrs("", pin()), type(x),
                         type(rhs), type(y)),
           y);
      return;
    }
    case 4:
    case 5: { // unary
      static const char *ops[] = {"relu", "gelu", "exp", "tanh", "sigmoid",
                                  "neg"};
      Tensor y{fresh(), x.rows, x.cols};
      emit(llvm::formatv("\"tandem.{0}\"({1}){2} : ({3}) -> {3}", ops[pick(6)],
                         x.name, attrs("", pin()), type(x)),
           y);
      return;
    }
    case 6: { // reshape (aliases its operand on the GPU) or transpose
      Tensor y{fresh(), x.cols, x.rows};
      if (chance(0.6)) {
        if (x.cols % 2 == 0) {
          y.rows = x.rows * 2;
          y.cols = x.cols / 2;
        }
        emit(llvm::formatv("\"tandem.reshape\"({0}){1} : ({2}) -> {3}", x.name,
                           attrs("", pin()), type(x), type(y)),
             y);
      } else {
        emit(llvm::formatv("\"tandem.transpose\"({0}) {{perm = array<i64: 1, "
                           "0>{1}} : ({2}) -> {3}",
                           x.name, pinSuffix(), type(x), type(y)),
             y);
      }
      return;
    }
    case 7: { // softmax or a reduction kept 2-D
      if (chance(0.5)) {
        Tensor y{fresh(), x.rows, x.cols};
        emit(llvm::formatv("\"tandem.softmax\"({0}) {{axis = -1 : i64{1}} : "
                           "({2}) -> {2}",
                           x.name, pinSuffix(), type(x)),
             y);
      } else {
        Tensor y{fresh(), x.rows, 1};
        emit(llvm::formatv("\"tandem.reduce_sum\"({0}) {{axes = array<i64: 1>, "
                           "keepdims = true{1}} : ({2}) -> {3}",
                           x.name, pinSuffix(), type(x), type(y)),
             y);
      }
      return;
    }
    case 8: { // concat along rows with a value of the same width
      Tensor other = x;
      for (const Tensor &v : values)
        if (v.cols == x.cols && chance(0.5))
          other = v;
      Tensor y{fresh(), x.rows + other.rows, x.cols};
      emit(llvm::formatv("\"tandem.concat\"({0}, {1}) {{axis = 0 : i64{2}} : "
                         "({3}, {4}) -> {5}",
                         x.name, other.name, pinSuffix(), type(x),
                         type(other), type(y)),
           y);
      return;
    }
    case 9: { // dynamic_slice: offsets read on the host
      if (x.rows < 2 || x.cols < 2)
        return;
      std::string offsets = fresh();
      if (chance(0.5)) {
        // From the shape (a constant once folded) minus a fill.
        std::string shape = fresh(), crop = fresh();
        body += llvm::formatv(
            "  {0} = \"tandem.shape\"({1}) : ({2}) -> tensor<2xi64>\n"
            "  {3} = \"tandem.fill\"() {{value = 1 : i64} : () -> "
            "tensor<2xi64>\n"
            "  {4} = \"tandem.sub\"({0}, {3}) : (tensor<2xi64>, "
            "tensor<2xi64>) -> tensor<2xi64>\n",
            shape, x.name, type(x), crop, offsets);
        emitted += 3;
      } else {
        // Computed from data, on whichever device the argmax runs.
        std::string rows = fresh();
        body += llvm::formatv(
            "  {0} = \"tandem.slice\"({1}) {{starts = array<i64: 0, 0>, "
            "limits = array<i64: 2, {2}>, strides = array<i64: 1, 1>} : ({3}) "
            "-> tensor<2x{2}xf32>\n"
            "  {4} = \"tandem.argmax\"({0}) {{axis = 1 : i64{5}} : "
            "(tensor<2x{2}xf32>) -> tensor<2xi64>\n",
            rows, x.name, x.cols, type(x), offsets, pinSuffix());
        emitted += 2;
      }
      Tensor y{fresh(), x.rows / 2, x.cols / 2};
      emit(llvm::formatv("\"tandem.dynamic_slice\"({0}, {1}) {{sizes = "
                         "array<i64: {2}, {3}>{4}} : ({5}, tensor<2xi64>) -> "
                         "{6}",
                         x.name, offsets, y.rows, y.cols, pinSuffix(), type(x),
                         type(y)),
           y);
      return;
    }
    case 10: { // a fill used as an operand, sometimes written twice
      Tensor f = fill(x.rows, x.cols, 0.5);
      Tensor y{fresh(), x.rows, x.cols};
      emit(llvm::formatv("\"tandem.add\"({0}, {1}) : ({2}, {2}) -> {2}",
                         x.name, f.name, type(x)),
           y);
      return;
    }
    case 11: { // an op written a second time: CSE merges the two
      if (pureOps.empty())
        return;
      auto [line, original] = pureOps[pick(pureOps.size())];
      Tensor copy{fresh(), original.rows, original.cols};
      emit(line, copy);
      return;
    }
    }
  }

  std::string pinSuffix() {
    std::string p = pin();
    return p.empty() ? "" : ", " + p;
  }

  Tensor fill(int64_t rows, int64_t cols, double value) {
    Tensor f{fresh(), rows, cols};
    emit(llvm::formatv("\"tandem.fill\"() {{value = {0} : f32} : () -> {1}",
                       value, type(f))
             .str(),
         f);
    return f;
  }
};

} // namespace

std::string tandem::makeRandomModel(std::mt19937 &rng, int numOps) {
  return ModelWriter(rng).write(numOps);
}
