//===- Image.cpp - decoding the model image -------------------------------===//
//
// The one reader of the model image's words (layout in ModelImage.h): what
// the executable and the library form both start with.
//
//===----------------------------------------------------------------------===//

#include "Image.h"

#include "tandem/runtime/CpuKernelPaths.h"
#include "tandem/runtime/ModelImage.h"

using namespace tandem::rt;
namespace img = tandem::image;

namespace {

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

/// A fused group's list of words (ImageAttrs.h's FusedAttrs, then its
/// producer's operand indices and attributes) is whole and names what
/// exists; else `error` says what is wrong.
bool checkFused(const OpRecord &op, int64_t numKernels, std::string &error) {
  constexpr size_t head = img::wordCount<img::FusedAttrs>();
  if (op.attrs.size() < head) {
    error = "is a fused group with " + std::to_string(op.attrs.size()) +
            " attribute words, fewer than " + std::to_string(head);
    return false;
  }
  auto fused = img::readAttrs<img::FusedAttrs>(op.attrs);
  if (fused.kernel < 0 || fused.kernel >= numKernels) {
    error = "runs generated kernel " + std::to_string(fused.kernel) + " of " +
            std::to_string(numKernels);
    return false;
  }
  // A prebuilt part (producer, consumer): none (kind -1, no operands), or a
  // kind that is not a group, operand indices of the group's, and the
  // kind's attribute words (any number of them, where the words end there).
  size_t at = head;
  auto part = [&](int64_t kind, int64_t operands, bool last,
                  const char *what) {
    if (kind == -1 && operands == 0)
      return true;
    bool valid = kind >= 0 && kind < img::kNumOpKinds && kind != img::kFused &&
                 operands >= 0 && at + size_t(operands) <= op.attrs.size();
    for (int64_t k = 0; valid && k < operands; ++k) {
      int64_t operand = op.attrs[at + k];
      valid = operand >= 0 && size_t(operand) < op.operands.size();
    }
    int64_t words = valid ? img::attrWordCount(kind) : 0;
    valid = valid && (words >= 0 || last);
    if (valid) {
      at += operands;
      size_t end = words >= 0 ? at + size_t(words) : op.attrs.size();
      valid = last ? end == op.attrs.size() : end <= op.attrs.size();
      at = end;
    }
    if (!valid)
      error = std::string("is a fused group with a bad ") + what +
              " (kind, operands or attribute words)";
    return valid;
  };
  // A consumer runs in place on the result: softmax, log_softmax or
  // l2_normalize (no other operand) or layer_norm (scale and shift) alone;
  // or it is a reduction of what the kernel computes (no other operand),
  // after a kernel with no producer.
  bool hasConsumer = fused.consumerKind != -1 || fused.consumerOperands != 0;
  bool reduction = img::isFusedReduction(fused.consumerKind);
  bool rowNormalization = fused.consumerKind == img::kSoftmax ||
                          fused.consumerKind == img::kLogSoftmax ||
                          fused.consumerKind == img::kL2Normalize;
  if (hasConsumer &&
      !(rowNormalization && fused.consumerOperands == 0) &&
      !(fused.consumerKind == img::kLayerNorm && fused.consumerOperands == 2) &&
      !(reduction && fused.consumerOperands == 0 && fused.producerKind == -1)) {
    error = "is a fused group with a bad consumer (kind, operands or "
            "attribute words)";
    return false;
  }
  if (!part(fused.producerKind, fused.producerOperands, !hasConsumer,
            "producer"))
    return false;
  size_t consumerWords = at + size_t(std::max<int64_t>(fused.consumerOperands, 0));
  if (!part(fused.consumerKind, fused.consumerOperands, true, "consumer"))
    return false;
  if (at != op.attrs.size()) {
    error = "is a fused group with " + std::to_string(op.attrs.size() - at) +
            " attribute words left over";
    return false;
  }
  // A reduction's one word: the elements it folds into each output.
  if (reduction && (op.attrs.size() != consumerWords + 1 ||
                    !reductionFusesRows(op.attrs.back()))) {
    error = "is a fused group whose reduction does not fold 1 to " +
            std::to_string(kReducePieceElements) +
            " elements into each output";
    return false;
  }
  return true;
}

} // namespace

bool tandem::rt::decodeImage(const int64_t *words, const char *strings,
                             const img::FusedKernel *kernels, Image &image,
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
  image.scheduled = reader.next() != 0;
  int64_t makespanNs = reader.next(), serialNs = reader.next();
  if (makespanNs < 0 || serialNs < 0) {
    error = "the model image is corrupt: a negative predicted time";
    return false;
  }
  image.numKernels = reader.next();
  if (image.numKernels < 0) {
    error = "the model image is corrupt: a negative kernel count";
    return false;
  }
  if (image.numKernels > 0 && !kernels) {
    error = "the model has generated kernels but no kernel table was given";
    return false;
  }
  image.kernels = kernels;
  int64_t ptxOffset = reader.next();
  if (ptxOffset >= 0)
    image.ptx = strings + ptxOffset;
  int64_t atLoadOffset = reader.next();
  image.predictedMakespanSeconds = double(makespanNs) * 1e-9;
  image.predictedSerialSeconds = double(serialNs) * 1e-9;
  for (int64_t i = 0; i < inputs; ++i)
    image.inputs.push_back(reader.tensor());
  for (int64_t i = 0; i < outputs; ++i)
    image.outputs.push_back(reader.tensor());
  for (int64_t i = 0; i < weights; ++i) {
    WeightRecord weight;
    weight.name = reader.string();
    weight.device = reader.next();
    weight.arenaOffset = reader.next();
    weight.folded = reader.next();
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
    op.family = reader.string();
    // Queues and waits refer to earlier ops only: a run cannot deadlock.
    auto earlierOp = [&](int64_t index, bool orNone) {
      return (orNone && index == -1) || (index >= 0 && index < i);
    };
    op.queue = reader.next();
    int64_t predictedNs = reader.next();
    op.predictedSeconds = double(predictedNs) * 1e-9;
    int64_t waits = reader.next();
    bool valid = op.queue >= 0 && op.queue < img::kNumQueues && waits >= 0 &&
                 waits <= i && predictedNs >= 0;
    for (int64_t k = 0; valid && k < waits; ++k) {
      op.waits.push_back(reader.next());
      valid = earlierOp(op.waits.back(), false);
    }
    int64_t operands = valid ? reader.next() : 0;
    for (int64_t k = 0; valid && k < operands; ++k) {
      op.operandDevices.push_back(reader.next());
      op.operandProducers.push_back(reader.next());
      valid = earlierOp(op.operandProducers.back(), true);
      op.operands.push_back(reader.tensor());
    }
    if (!valid) {
      error = "the model image is corrupt: op #" + std::to_string(i) +
              " has a bad queue, predicted time, wait or operand producer";
      return false;
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
    if (op.kind == img::kFused && !checkFused(op, image.numKernels, error)) {
      error = "the model image is corrupt: op #" + std::to_string(i) + " " +
              error;
      return false;
    }
    image.ops.push_back(op);
  }
  int64_t foldedWeights = 0;
  for (const WeightRecord &weight : image.weights)
    foldedWeights += weight.folded >= 0;
  if (atLoadOffset < 0) {
    if (foldedWeights == 0)
      return true;
    error = "the model image is corrupt: it has weights computed at load but "
            "no at-load function";
    return false;
  }
  // The at-load function's image follows the model's; its results are the
  // folded weights, each of the weight's type.
  if (atLoadOffset < int64_t(reader.position())) {
    error = "the model image is corrupt: a bad at-load offset";
    return false;
  }
  auto atLoad = std::make_shared<Image>();
  if (!decodeImage(words + atLoadOffset, strings, kernels, *atLoad, error))
    return false;
  // (A folded weight read on both devices is two records of one result.)
  bool valid = atLoad->inputs.empty() && !atLoad->atLoad;
  for (const WeightRecord &weight : image.weights)
    valid = valid && weight.folded < int64_t(atLoad->outputs.size()) &&
            (weight.folded < 0 ||
             (atLoad->outputs[weight.folded].dtype == weight.tensor.dtype &&
              atLoad->outputs[weight.folded].shape == weight.tensor.shape));
  if (!valid) {
    error = "the model image is corrupt: its at-load function does not "
            "compute its folded weights";
    return false;
  }
  image.atLoad = std::move(atLoad);
  return true;
}
