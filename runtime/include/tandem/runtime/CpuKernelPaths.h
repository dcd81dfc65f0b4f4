//===- CpuKernelPaths.h - which path a CPU kernel takes ---------*- C++ -*-===//
//
// The CPU's kernels take different paths by shape (runtime/lib/cpu/): a GEMM
// too small to split runs on the calling thread, a convolution runs as
// im2col and a GEMM or skips the im2col, a depthwise one runs plane by plane
// or channels side by side. The cost model prices each path differently
// (lib/Analysis/CostModel.cpp), so both ask here.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_CPUKERNELPATHS_H
#define TANDEM_RUNTIME_CPUKERNELPATHS_H

#include <algorithm>
#include <cstdint>

namespace tandem::rt {

/// GEMMs of fewer FLOPs run as one block on the calling thread: splitting
/// them over the pool (waking a worker) costs more than it saves.
constexpr int64_t kMinSplitFlops = int64_t(1) << 18;

/// Whether a linear or a matmul of `flops` FLOPs (a batched one's in all)
/// runs whole on the calling thread, with no worker woken.
inline bool gemmRunsOnCallingThread(double flops) {
  return flops < double(kMinSplitFlops);
}

/// A product at most this many rows (or columns) wide is skinny: reading
/// its wide operand, not multiplying, sets its time (Gemm.cpp runs it in
/// blocks along its long side; the cost model prices it as gemm_skinny).
constexpr int64_t kSkinnyGemmWidth = 16;

/// Below this many pixels an image's columns are too few for an efficient
/// GEMM alone, and the images' im2col columns go side by side instead.
constexpr int64_t kConvInPlaceMinPixels = 64;

/// Whether the CPU multiplies a convolution's input as it lies, image by
/// image, with no im2col and no product to scatter back to NCHW: a 1x1
/// kernel with unit strides and no padding (an image's channels are then its
/// im2col columns), over one image or images of at least
/// kConvInPlaceMinPixels output pixels.
inline bool convMultipliesInPlace(int64_t kernelHeight, int64_t kernelWidth,
                                  const int64_t strides[2],
                                  const int64_t padding[2], int64_t images,
                                  int64_t pixels) {
  return kernelHeight == 1 && kernelWidth == 1 && strides[0] == 1 &&
         strides[1] == 1 && padding[0] == 0 && padding[1] == 0 &&
         (images == 1 || pixels >= kConvInPlaceMinPixels);
}

/// A convolution's im2col columns take at most this many floats per GEMM
/// (2 MiB: they stay in the caches from the copy to OpenBLAS's packing),
/// unless that leaves the GEMM under kConvMinGemmWidth columns.
constexpr int64_t kConvColumnsFloats = int64_t(1) << 19;
constexpr int64_t kConvMinGemmWidth = 256;

/// How many of `units` units of `unitColumns` im2col columns each (images,
/// or an image's output rows) a convolution's GEMM takes at once, for
/// `rows` im2col rows and `sharers` groups' columns in the caches at once:
/// as many as keep the columns within kConvColumnsFloats, but at least
/// kConvMinGemmWidth columns, and at least one.
inline int64_t convUnitsPerGemm(int64_t rows, int64_t unitColumns,
                                int64_t units, int64_t sharers) {
  int64_t perUnit = std::max<int64_t>(1, rows * unitColumns * sharers);
  int64_t wide = (kConvMinGemmWidth + unitColumns - 1) /
                 std::max<int64_t>(unitColumns, 1);
  return std::clamp<int64_t>(std::max(wide, kConvColumnsFloats / perUnit), 1,
                             std::max<int64_t>(units, 1));
}

/// How many of `images` images a convolution's GEMM multiplies at once,
/// their columns side by side, for `rows` im2col rows (input channels per
/// group x kernel taps) and `pixels` output pixels an image, with `sharers`
/// groups' columns in the caches at once (one group, or one per thread
/// where groups run side by side). Over one image the GEMM writes NCHW
/// directly; over several its product is scattered back. The small CNN of
/// bench/runtime (32 images, 32x32 and 64x64 maps): 1.3x faster than with
/// 32 MiB of columns, which the copy and the packing each read from memory.
inline int64_t convImagesPerGemm(int64_t rows, int64_t pixels, int64_t images,
                                 int64_t sharers) {
  return convUnitsPerGemm(rows, pixels, images, sharers);
}

/// Output channels per group up to which a convolution's GEMM goes in
/// bands of output rows (convOutputRowsPerGemm).
constexpr int64_t kConvBandMaxChannels = 16;

/// How many output rows of one image a convolution's GEMM multiplies at
/// once, for `rows` im2col rows, `channels` output channels per group and
/// output rows `outputWidth` wide (`sharers` as above). Where the image's
/// columns alone exceed kConvColumnsFloats and its GEMM is a few channels
/// tall, bands whose columns fit (but at least kConvMinGemmWidth columns),
/// each copied and multiplied while in the caches: with few channels the
/// copy is most of the time. With more, narrower GEMMs cost more than the
/// caches save. Two cores, an Intel Xeon: 3x3 convolutions from 64
/// channels over 56 x 56 to 8 channels 800 -> 660 us, to 16 930 -> 830 us,
/// to 32 3% slower, to 64 6% slower (128 to 128 over 28 x 28: 22% slower);
/// style_net's 9x9 convolution to 3 channels over 64 x 64 2.3 -> 1.5 ms.
inline int64_t convOutputRowsPerGemm(int64_t rows, int64_t channels,
                                     int64_t outputHeight, int64_t outputWidth,
                                     int64_t sharers) {
  if (channels > kConvBandMaxChannels)
    return std::max<int64_t>(outputHeight, 1);
  return convUnitsPerGemm(rows, outputWidth, outputHeight, sharers);
}

/// Whether a convolution's im2col gathers its columns from a zero-padded
/// copy of each input plane through one table of offsets (output rows under
/// 16 wide: a network's last 2x2 to 8x8 maps, where a row-by-row copy spends
/// several times the copy on each row's set-up and fills), rather than
/// output row by output row. Both copy the same bytes, and the cost model
/// prices them alike; the rule is here with the others for the reader.
inline bool im2colGathersFromPaddedPlane(int64_t outputWidth) {
  return outputWidth < 16;
}

/// Channels a depthwise convolution over narrow outputs computes side by
/// side.
constexpr int64_t kDepthwiseLanes = 16;

/// Whether the CPU runs a depthwise convolution kDepthwiseLanes channels
/// side by side (pixel by pixel) rather than plane by plane (one loop per
/// output row and tap): where the output rows are under 32 wide, and the
/// loops' set-up would cost about as much as their multiply-adds or more
/// (MobileNetV2's depthwise convolutions at 96x96: 24x24 maps 15-30%
/// faster side by side, 48x48 the same either way, 3x3 to 12x12 1.2-3x).
inline bool depthwiseRunsChannelsSideBySide(int64_t outputWidth) {
  return outputWidth < 32;
}

/// A reduction folds each output's elements as one run of at most this
/// many (longer ones in pieces of it, so that few long rows still split
/// over the threads): Reduce.cpp.
constexpr int64_t kReducePieceElements = int64_t(1) << 15;

/// Whether a fused group can end in a reduction of `count` elements an
/// output over its trailing axes: the runtime computes a block of rows of
/// its input at a time into a thread's scratch and folds each row whole,
/// exactly as the reduction folds a row of a materialized input of up to
/// kReducePieceElements (Reduce.cpp), so that fusing changes no bit.
inline bool reductionFusesRows(int64_t count) {
  return count >= 1 && count <= kReducePieceElements;
}

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_CPUKERNELPATHS_H
