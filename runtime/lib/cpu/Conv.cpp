//===- Conv.cpp - the CPU's convolution and pooling -----------------------===//
//
// The Conv family of OpKinds.def on NCHW f32: conv2d as im2col and OpenBLAS
// GEMMs split across the pool (depthwise convolution directly), max and
// average pooling. All three walk output rows over the columns whose window
// lies inside the input, so padding costs no branch in the inner loops.
//
//===----------------------------------------------------------------------===//

#include "CpuSupport.h"
#include "tandem/runtime/CpuKernelPaths.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

using namespace tandem::rt;
using namespace tandem::rt::cpu;

namespace {

/// The output columns [first, last) whose input column xo·stride + offset
/// lies inside [0, width): the others read padding. (Ceiling divisions; a
/// negative numerator truncates toward zero, which the clamps absorb.)
std::pair<int64_t, int64_t> columnsInside(int64_t offset, int64_t stride,
                                          int64_t width, int64_t outputs) {
  int64_t first =
      std::min(outputs, std::max<int64_t>(0, (-offset + stride - 1) / stride));
  int64_t last = std::max(
      first, std::min(outputs, (width - offset + stride - 1) / stride));
  return {first, last};
}

/// A convolution's or a pooling's geometry: the input's [n, c, h, wd], the
/// window's kh x kw, the output's oh x ow, the strides, padding and
/// dilation.
struct Window {
  int64_t n, c, h, wd, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw;
};

Window depthwiseWindow(const TensorView &x, const TensorView &w,
                       const TensorView &out, const img::Conv2dAttrs &a) {
  return {x.shape[0],   x.shape[1],   x.shape[2],   x.shape[3],
          w.shape[2],   w.shape[3],   out.shape[2], out.shape[3],
          a.strides[0], a.strides[1], a.padding[0], a.padding[1],
          a.dilation[0], a.dilation[1]};
}

/// Blocks [first, last) of narrowDepthwiseConv2dF32 (kDepthwiseLanes
/// channels of one image each).
TANDEM_VECTOR_CLONES
void narrowDepthwiseBlocks(const Window &g, const float *in, const float *wt,
                           const float *bias, float *z,
                           const BlockEpilogue *epilogue, int64_t first,
                           int64_t last) {
  constexpr int64_t L = kDepthwiseLanes;
  int64_t taps = g.kh * g.kw;
  int64_t paddedHeight = g.h + 2 * g.ph, paddedWidth = g.wd + 2 * g.pw;
  int64_t blocksPerImage = (g.c + L - 1) / L;
  // The border stays zero: only the interior is written. A last block of
  // fewer than L channels computes stale lanes it never stores.
  std::vector<float> padded(paddedHeight * paddedWidth * L, 0.0f);
  std::vector<float> filters(taps * L), initial(L);
  for (int64_t block = first; block < last; ++block) {
    int64_t image = block / blocksPerImage;
    int64_t c0 = block % blocksPerImage * L;
    int64_t lanes = std::min(L, g.c - c0);
    int64_t plane0 = image * g.c + c0;
    for (int64_t l = 0; l < lanes; ++l) {
      const float *src = in + (plane0 + l) * g.h * g.wd;
      for (int64_t y = 0; y < g.h; ++y)
        for (int64_t xi = 0; xi < g.wd; ++xi)
          padded[((y + g.ph) * paddedWidth + xi + g.pw) * L + l] =
              src[y * g.wd + xi];
    }
    for (int64_t l = 0; l < L; ++l) {
      for (int64_t tap = 0; tap < taps; ++tap)
        filters[tap * L + l] = l < lanes ? wt[(c0 + l) * taps + tap] : 0;
      initial[l] = bias && l < lanes ? bias[c0 + l] : 0.0f;
    }
    for (int64_t y = 0; y < g.oh; ++y)
      for (int64_t xo = 0; xo < g.ow; ++xo) {
        float acc[L];
        for (int64_t l = 0; l < L; ++l)
          acc[l] = initial[l];
        const float *window =
            padded.data() + (y * g.sh * paddedWidth + xo * g.sw) * L;
        for (int64_t i = 0; i < g.kh; ++i)
          for (int64_t j = 0; j < g.kw; ++j) {
            const float *pixel =
                window + (i * g.dh * paddedWidth + j * g.dw) * L;
            const float *filter = filters.data() + (i * g.kw + j) * L;
            for (int64_t l = 0; l < L; ++l)
              acc[l] += filter[l] * pixel[l];
          }
        for (int64_t l = 0; l < lanes; ++l)
          z[(plane0 + l) * g.oh * g.ow + y * g.ow + xo] = acc[l];
      }
    if (epilogue)
      (*epilogue)(plane0 * g.oh * g.ow, (plane0 + lanes) * g.oh * g.ow);
  }
}

/// Depthwise convolution over narrow outputs (CpuKernelPaths.h: a MobileNet's
/// 24x24 and smaller maps), kDepthwiseLanes channels side by side: one loop per
/// plane, output row and tap would cost more in set-up than in
/// multiply-adds. The channels of a block (of one image) are copied,
/// interleaved, into a zero-padded block, pixel-major and channel-minor, and
/// each output pixel accumulates its taps over all of them at once.
void narrowDepthwiseConv2dF32(const TensorView &x, const TensorView &w,
                              const TensorView *b, const TensorView &out,
                              const img::Conv2dAttrs &a,
                              const BlockEpilogue *epilogue) {
  constexpr int64_t L = kDepthwiseLanes;
  Window g = depthwiseWindow(x, w, out, a);
  int64_t paddedHeight = g.h + 2 * g.ph, paddedWidth = g.wd + 2 * g.pw;
  const float *in = static_cast<const float *>(x.data);
  const float *wt = static_cast<const float *>(w.data);
  const float *bias = b ? static_cast<const float *>(b->data) : nullptr;
  float *z = static_cast<float *>(out.data);
  int64_t blocksPerImage = (g.c + L - 1) / L;
  parallelFor(g.n * blocksPerImage,
              L * (g.oh * g.ow * g.kh * g.kw + paddedHeight * paddedWidth),
              [&](int64_t first, int64_t last) {
                narrowDepthwiseBlocks(g, in, wt, bias, z, epilogue, first,
                                      last);
              });
}

/// Planes [first, last) of depthwiseConv2dF32.
TANDEM_VECTOR_CLONES
void depthwisePlanes(const Window &g, const float *in, const float *wt,
                     const float *bias, float *z, int64_t first,
                     int64_t last) {
  for (int64_t plane = first; plane < last; ++plane) {
    int64_t channel = plane % g.c;
    const float *src = in + plane * g.h * g.wd;
    const float *filter = wt + channel * g.kh * g.kw;
    for (int64_t y = 0; y < g.oh; ++y) {
      float *acc = z + (plane * g.oh + y) * g.ow;
      std::fill(acc, acc + g.ow, bias ? bias[channel] : 0.0f);
      for (int64_t i = 0; i < g.kh; ++i) {
        int64_t iy = y * g.sh - g.ph + i * g.dh;
        if (iy < 0 || iy >= g.h)
          continue;
        const float *row = src + iy * g.wd;
        for (int64_t j = 0; j < g.kw; ++j) {
          int64_t offset = j * g.dw - g.pw;
          auto [x0, x1] = columnsInside(offset, g.sw, g.wd, g.ow);
          float weight = filter[i * g.kw + j];
          const float *from = row + offset;
          for (int64_t xo = x0; xo < x1; ++xo)
            acc[xo] += weight * from[xo * g.sw];
        }
      }
    }
  }
}

/// Depthwise convolution (one input channel per group and one filter per
/// channel, as in MobileNets) directly: each output row accumulates kernel
/// row by kernel column over all its outputs at once, planes in parallel.
/// A GEMM per channel would be 1 x cols x k*k: all overhead.
void depthwiseConv2dF32(const TensorView &x, const TensorView &w,
                        const TensorView *b, const TensorView &out,
                        const img::Conv2dAttrs &a,
                        const BlockEpilogue *epilogue) {
  if (depthwiseRunsChannelsSideBySide(out.shape[3]))
    return narrowDepthwiseConv2dF32(x, w, b, out, a, epilogue);
  Window g = depthwiseWindow(x, w, out, a);
  const float *in = static_cast<const float *>(x.data);
  const float *wt = static_cast<const float *>(w.data);
  const float *bias = b ? static_cast<const float *>(b->data) : nullptr;
  float *z = static_cast<float *>(out.data);
  int64_t planeSize = g.oh * g.ow;
  parallelFor(g.n * g.c, planeSize * g.kh * g.kw,
              [&](int64_t first, int64_t last) {
                depthwisePlanes(g, in, wt, bias, z, first, last);
                if (epilogue)
                  (*epilogue)(first * planeSize, last * planeSize);
              });
}

/// Convolution as GEMMs: the input windows of a chunk of images are laid out
/// as columns (im2col; padding reads as zeros) and each group's filters
/// multiply all of them at once, which keeps the GEMM wide for small images.
/// The GEMM's blocks run on the pool; each block's rows go back to NCHW (one
/// image: the GEMM writes there directly) with the bias and the epilogue
/// while they are in cache.
void conv2dF32(const TensorView &x, const TensorView &w, const TensorView *b,
               const TensorView &out, const img::Conv2dAttrs &a,
               const BlockEpilogue *epilogue) {
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  int64_t o = w.shape[0], cg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  int64_t oh = out.shape[2], ow = out.shape[3];
  int64_t sh = a.strides[0], sw = a.strides[1], ph = a.padding[0],
          pw = a.padding[1], dh = a.dilation[0], dw = a.dilation[1],
          groups = a.groups;
  int64_t og = o / groups, rows = cg * kh * kw, cols = oh * ow;
  if (groups == c && o == c && cg == 1)
    return depthwiseConv2dF32(x, w, b, out, a, epilogue);
  const float *in = static_cast<const float *>(x.data);
  const float *wt = static_cast<const float *>(w.data);
  const float *bias = b ? static_cast<const float *>(b->data) : nullptr;
  float *z = static_cast<float *>(out.data);
  if (rows == 0 || cols == 0 || og == 0 || n == 0) {
    int64_t count = n * o * cols;
    for (int64_t i = 0; i < count; ++i)
      z[i] = bias ? bias[(i / cols) % o] : 0.0f;
    if (epilogue && count)
      (*epilogue)(0, count);
    return;
  }
  // Groups run side by side, one a task, where there are enough of them to
  // share among the threads: each group's GEMM (a few rows of filters) is
  // then whole on one core, and the pool hands off once per chunk of images
  // instead of twice per group (each group's im2col and GEMM split over the
  // threads). Each task then has columns of its own.
  int64_t threads = poolThreads();
  bool groupsAtOnce = threads > 1 && groups >= 2 * threads;
  // A 1x1 convolution's input is already its im2col columns (CpuKernelPaths.h).
  bool inPlace = convMultipliesInPlace(kh, kw, a.strides, a.padding, n, cols);
  int64_t chunk =
      inPlace ? 1
              : convImagesPerGemm(rows, cols, n, groupsAtOnce ? threads : 1);
  int64_t paddedHeight = h + 2 * ph, paddedWidth = wd + 2 * pw;
  // A 1x1 convolution with unit strides and no padding over images too
  // small to multiply in place: each input plane is a row of the columns
  // as it lies, so each is copied whole (the row-by-row and padded-plane
  // copies spent their set-up on 2x2 and 4x4 maps: shufflenet_v2's 1x1
  // convolutions there).
  bool pointwise = !inPlace && kh == 1 && kw == 1 && sh == 1 && sw == 1 &&
                   ph == 0 && pw == 0;
  bool narrow = !inPlace && !pointwise && im2colGathersFromPaddedPlane(ow) &&
                paddedHeight * paddedWidth <
                    std::numeric_limits<int32_t>::max();
  // The output columns whose input column lies inside the image, per
  // filter column j (the row-by-row im2col's).
  bool rowPath = !inPlace && !pointwise && !narrow;
  std::vector<std::pair<int64_t, int64_t>> inside;
  if (rowPath)
    for (int64_t j = 0; j < kw; ++j)
      inside.push_back(columnsInside(j * dw - pw, sw, wd, ow));
  // Over one image whose columns alone exceed the caches, for a few output
  // channels, the row-by-row im2col and its GEMM go band of output rows by
  // band (CpuKernelPaths.h).
  int64_t bandRows =
      rowPath && chunk == 1
          ? convOutputRowsPerGemm(rows, og, oh, ow,
                                  groupsAtOnce ? threads : 1)
          : oh;
  // Group g's im2col of output rows [y0, y1) of `images` images from n0
  // into `columns`, each row (r, image) output row by output row: zeros
  // where the window reads padding, the inside columns copied.
  auto rowColumns = [&](int64_t g, int64_t n0, int64_t images, int64_t y0,
                        int64_t y1, float *columns) {
    int64_t band = (y1 - y0) * ow, width = images * band;
    parallelFor(rows * images, band, [&](int64_t first, int64_t last) {
      // Row r = (ci·kh + i)·kw + j of image `image`, stepped along (no
      // divisions per row: on small images they cost more than the copy).
      int64_t r = first % rows, image = first / rows;
      int64_t ci = r / (kh * kw), i = (r / kw) % kh, j = r % kw;
      for (int64_t task = first; task < last; ++task) {
        const float *plane = in + ((n0 + image) * c + g * cg + ci) * h * wd;
        float *row = columns + r * width + image * band;
        int64_t offset = j * dw - pw;
        auto [x0, x1] = inside[j];
        for (int64_t y = y0; y < y1; ++y) {
          float *dst = row + (y - y0) * ow;
          int64_t iy = y * sh - ph + i * dh;
          if (iy < 0 || iy >= h) {
            std::fill(dst, dst + ow, 0.0f);
            continue;
          }
          const float *src = plane + iy * wd + offset;
          std::fill(dst, dst + x0, 0.0f);
          for (int64_t xo = x0; xo < x1; ++xo)
            dst[xo] = src[xo * sw];
          std::fill(dst + x1, dst + ow, 0.0f);
        }
        if (++j == kw) {
          j = 0;
          if (++i == kh)
            i = 0, ++ci;
        }
        if (++r == rows)
          r = ci = i = j = 0, ++image;
      }
    });
  };
  // The same for narrow outputs (a network's last 2x2 to 8x8 maps), where
  // the row-by-row copy spends several times the copy on each output row's
  // set-up and fills (2x2 maps: 2.3x the time of the im2col and GEMM
  // together). Each input plane is copied once into a zero-padded plane,
  // and each of its kh·kw rows gathers its columns from there through one
  // table of offsets: no bounds, no per-row set-up.
  std::vector<int32_t> gatherOffsets;
  if (narrow) {
    gatherOffsets.resize(cols);
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xo = 0; xo < ow; ++xo)
        gatherOffsets[y * ow + xo] = int32_t(y * sh * paddedWidth + xo * sw);
  }
  auto narrowColumns = [&](int64_t g, int64_t n0, int64_t images,
                           float *columns) {
    int64_t width = images * cols, taps = kh * kw;
    parallelFor(
        cg * images, taps * cols + paddedHeight * paddedWidth,
        [&](int64_t first, int64_t last) {
          // The border stays zero: only the interior is written.
          std::vector<float> padded(paddedHeight * paddedWidth, 0.0f);
          for (int64_t task = first; task < last; ++task) {
            int64_t image = task / cg, ci = task % cg;
            const float *plane = in + ((n0 + image) * c + g * cg + ci) * h * wd;
            for (int64_t y = 0; y < h; ++y)
              std::copy(plane + y * wd, plane + (y + 1) * wd,
                        padded.data() + (y + ph) * paddedWidth + pw);
            for (int64_t tap = 0; tap < taps; ++tap) {
              int64_t i = tap / kw, j = tap % kw;
              float *row = columns + (ci * taps + tap) * width + image * cols;
              const float *src = padded.data() + i * dh * paddedWidth + j * dw;
              for (int64_t k = 0; k < cols; ++k)
                row[k] = src[gatherOffsets[k]];
            }
          }
        });
  };
  auto pointwiseColumns = [&](int64_t g, int64_t n0, int64_t images,
                              float *columns) {
    int64_t width = images * cols;
    parallelFor(cg * images, cols, [&](int64_t first, int64_t last) {
      for (int64_t task = first; task < last; ++task) {
        int64_t ci = task / images, image = task % images;
        const float *plane = in + ((n0 + image) * c + g * cg + ci) * cols;
        std::copy(plane, plane + cols, columns + ci * width + image * cols);
      }
    });
  };
  // Group g's im2col and its GEMM (into `product` where more than one image
  // goes to the GEMM), then the rows back to NCHW, band of output rows by
  // band (one band unless one image's columns exceed the caches). Every
  // element of both buffers is written before it is read: the columns by
  // the copy (zeros where a window reads padding), the product by the GEMM
  // (beta 0).
  auto runGroup = [&](int64_t g, int64_t n0, int64_t images, float *columns,
                      float *product) {
    // Output channel g*og + oi of image `image` starts at this element.
    auto start = [&](int64_t image, int64_t oi) {
      return ((n0 + image) * o + g * og + oi) * cols;
    };
    for (int64_t y0 = 0; y0 < oh; y0 += bandRows) {
      int64_t y1 = std::min(oh, y0 + bandRows);
      // The band's first output pixel, its columns per image, in all.
      int64_t skip = y0 * ow, band = (y1 - y0) * ow, width = images * band;
      const float *gemmColumns = columns;
      if (inPlace)
        gemmColumns = in + (n0 * c + g * cg) * cols;
      else if (pointwise)
        pointwiseColumns(g, n0, images, columns);
      else if (narrow)
        narrowColumns(g, n0, images, columns);
      else
        rowColumns(g, n0, images, y0, y1, columns);
      // One image: the GEMM writes its rows of the channels' planes.
      float *result = images == 1 ? z + start(0, 0) + skip : product;
      int64_t resultStride = images == 1 ? cols : width;
      parallelSgemm(
          {og, width, rows, wt + g * og * rows, rows, gemmColumns, width,
           /*transB=*/false, result, resultStride},
          [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
            // The block's columns, image by image.
            for (int64_t image = c0 / band; image * band < c1; ++image) {
              int64_t from = std::max(c0, image * band) - image * band;
              int64_t to = std::min(c1, (image + 1) * band) - image * band;
              for (int64_t oi = r0; oi < r1; ++oi) {
                float *dst = z + start(image, oi) + skip;
                const float *src =
                    result + oi * resultStride + image * band;
                float add = bias ? bias[g * og + oi] : 0.0f;
                if (images > 1 || bias)
                  for (int64_t k = from; k < to; ++k)
                    dst[k] = src[k] + add;
              }
              if (epilogue)
                epilogueOnBlock(*epilogue, start(image, 0), cols, r0, r1,
                                skip + from, skip + to);
            }
          });
    }
  };
  size_t columnsSize = inPlace ? 0 : size_t(rows) * chunk * bandRows * ow,
         productSize = chunk > 1 ? size_t(og) * chunk * cols : 0;
  for (int64_t n0 = 0; n0 < n; n0 += chunk) {
    int64_t images = std::min(chunk, n - n0);
    // Groups [first, last) one after another, in buffers of their own.
    // (No scratch is borrowed where none is needed: each costs a lock.)
    auto runGroups = [&](int64_t first, int64_t last) {
      std::optional<Scratch> columns, product;
      if (columnsSize)
        columns.emplace(columnsSize);
      if (productSize)
        product.emplace(productSize);
      for (int64_t g = first; g < last; ++g)
        runGroup(g, n0, images, columns ? columns->get() : nullptr,
                 product ? product->get() : nullptr);
    };
    if (groupsAtOnce)
      parallelFor(groups, 2 * og * rows * images * cols, runGroups);
    else
      runGroups(0, groups);
  }
}

/// Planes [first, last) of pool2dF32, from `start` (the identity of max or
/// of the sum), times `scale` for the average.
TANDEM_VECTOR_CLONES
void poolPlanes(const Window &g, const float *in, float *z, bool max,
                float start, float scale, int64_t first, int64_t last) {
  for (int64_t p = first; p < last; ++p)
    for (int64_t y = 0; y < g.oh; ++y) {
      float *acc = z + (p * g.oh + y) * g.ow;
      std::fill(acc, acc + g.ow, start);
      int64_t top = y * g.sh - g.ph;
      for (int64_t i = std::max<int64_t>(0, -top);
           i < std::min(g.kh, g.h - top); ++i) {
        const float *row = in + (p * g.h + top + i) * g.wd;
        for (int64_t j = 0; j < g.kw; ++j) {
          int64_t offset = j - g.pw;
          auto [x0, x1] = columnsInside(offset, g.sw, g.wd, g.ow);
          const float *src = row + offset;
          if (max)
            for (int64_t xo = x0; xo < x1; ++xo) {
              float v = src[xo * g.sw];
              acc[xo] = v > acc[xo] || v != v ? v : acc[xo];
            }
          else
            for (int64_t xo = x0; xo < x1; ++xo)
              acc[xo] += src[xo * g.sw];
        }
      }
      if (!max)
        for (int64_t xo = 0; xo < g.ow; ++xo)
          acc[xo] *= scale;
    }
}

void pool2dF32(const TensorView &x, const TensorView &out,
               const img::Pool2dAttrs &a, bool max) {
  Window g = {x.shape[0],   x.shape[1],   x.shape[2],   x.shape[3],
              a.kernel[0],  a.kernel[1],  out.shape[2], out.shape[3],
              a.strides[0], a.strides[1], a.padding[0], a.padding[1],
              1,            1};
  const float *in = static_cast<const float *>(x.data);
  float *z = static_cast<float *>(out.data);
  // Each output row accumulates window row by window row and column by
  // column, over all its outputs at once (long, branch-free inner loops).
  // Padding is -inf for max and 0 for the average, so it is skipped; padded
  // zeros still count in the average's divisor (count_include_pad=True).
  float start = max ? -std::numeric_limits<float>::infinity() : 0.0f;
  float scale = max ? 1.0f : 1.0f / float(g.kh * g.kw);
  parallelFor(g.n * g.c, g.oh * g.ow * g.kh * g.kw,
              [&](int64_t first, int64_t last) {
                poolPlanes(g, in, z, max, start, scale, first, last);
              });
}

bool conv2dKernel(int64_t, const std::vector<TensorView> &ops,
                  const TensorView &out, const std::vector<int64_t> &attrs,
                  std::string &error) {
  return conv2dWithEpilogue(ops, out, attrs, nullptr, error);
}

bool pool2dKernel(int64_t kind, const std::vector<TensorView> &ops,
                  const TensorView &out, const std::vector<int64_t> &attrs,
                  std::string &error) {
  if (out.dtype != DType::F32)
    return unsupported(out.dtype, error);
  pool2dF32(ops[0], out, img::readAttrs<img::Pool2dAttrs>(attrs),
            kind == img::kMaxPool2d);
  return true;
}

} // namespace

bool cpu::conv2dWithEpilogue(const std::vector<TensorView> &ops,
                             const TensorView &out,
                             const std::vector<int64_t> &attrs,
                             const BlockEpilogue *epilogue,
                             std::string &error) {
  if (out.dtype != DType::F32)
    return unsupported(out.dtype, error);
  auto a = img::readAttrs<img::Conv2dAttrs>(attrs);
  conv2dF32(ops[0], ops[1], a.hasBias ? &ops[2] : nullptr, out, a, epilogue);
  return true;
}

void cpu::registerConvKernels(CpuKernelTable &table) {
  table[img::kConv2d] = conv2dKernel;
  table[img::kMaxPool2d] = pool2dKernel;
  table[img::kAvgPool2d] = pool2dKernel;
}
