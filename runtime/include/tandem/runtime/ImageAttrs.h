//===- ImageAttrs.h - the attribute words of each op kind -------*- C++ -*-===//
//
// What follows an op's kind in the model image: its attributes, as the
// struct OpKinds.def names for the kind. The compiler writes the struct
// (writeAttrs), the runtime's image reader checks the word count and the
// kernels read it back (readAttrs), so the layout is written once. Every
// field is 8 bytes: an int64_t, or a double stored as its bits. Axes are
// normalized (non-negative).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_IMAGEATTRS_H
#define TANDEM_RUNTIME_IMAGEATTRS_H

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace tandem::image {

/// No attributes.
struct NoAttrs {};
/// A list of words whose length depends on the op (see OpKinds.def).
struct ListAttrs {};

struct FillAttrs {
  double value;
};
struct LinearAttrs {
  int64_t hasBias;
};
/// eq ne lt le gt ge = 0..5 (the dialect's CmpPredicate).
struct CompareAttrs {
  int64_t predicate;
};
struct AxisAttrs {
  int64_t axis;
};
struct EpsilonAttrs {
  double epsilon;
};
struct AxisEpsilonAttrs {
  int64_t axis;
  double epsilon;
};
/// (height, width) pairs; the workspace a GPU convolution may use, at
/// workspaceOffset in the GPU arena (workspaceBytes 0: none planned).
struct Conv2dAttrs {
  int64_t strides[2], padding[2], dilation[2];
  int64_t groups, hasBias;
  int64_t workspaceOffset, workspaceBytes;
};
struct Pool2dAttrs {
  int64_t kernel[2], strides[2], padding[2];
};
/// mode: sum, mean, max = 0..2; paddingIdx -1: none.
struct EmbeddingBagAttrs {
  int64_t mode, paddingIdx, includeLastOffset, hasWeights;
};

/// A fused group's first words: its generated kernel's index in the model's
/// kernel table, the rough operations per element of what the kernel
/// computes (for the thread pool), the GEMM or convolution it starts with:
/// its kind (-1: none) and how many operands it reads, and the op it ends
/// with: a row normalization (softmax, layer_norm; run in place on the
/// result) or a reduction over trailing axes (isFusedReduction): its kind
/// (-1: none) and how many operands it reads besides what the kernel
/// computes. Then come the producer's operand indices (of the group's
/// operands, in order) and its own attribute words
/// (attrWordCount(producerKind) of them), then the consumer's operand
/// indices and its own attribute words; a reduction's are one word, the
/// elements it folds into each output.
struct FusedAttrs {
  int64_t kernel, costPerElement, producerKind, producerOperands, consumerKind,
      consumerOperands;
};

/// How many words a kind's attributes take: -1 for a list.
template <typename Attrs> constexpr int64_t wordCount() {
  if constexpr (std::is_same_v<Attrs, ListAttrs>)
    return -1;
  else if constexpr (std::is_empty_v<Attrs>)
    return 0;
  else {
    static_assert(sizeof(Attrs) % 8 == 0 && std::is_trivially_copyable_v<Attrs>,
                  "attribute structs are made of 8-byte fields");
    return sizeof(Attrs) / 8;
  }
}

/// Appends `attrs` to the image's words.
template <typename Attrs>
void writeAttrs(const Attrs &attrs, std::vector<int64_t> &words) {
  size_t at = words.size();
  words.resize(at + wordCount<Attrs>());
  std::memcpy(words.data() + at, &attrs, sizeof(Attrs));
}

/// The attributes of an op whose word count the image reader has checked.
template <typename Attrs> Attrs readAttrs(const std::vector<int64_t> &words) {
  Attrs attrs;
  std::memcpy(&attrs, words.data(), sizeof(Attrs));
  return attrs;
}

} // namespace tandem::image

#endif // TANDEM_RUNTIME_IMAGEATTRS_H
