//===- Conv.cu - CUDA kernels for convolution and pooling -----------------===//
//
// The Conv family of OpKinds.def on the GPU: conv2d (grouped, dilated) and
// max/average pooling over NCHW tensors, a thread per result element,
// computing in f32 for f32, f16 and bf16.
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.cuh"

#include <vector>

using namespace tandem::rt;
using namespace tandem::rt::cuda;
namespace img = tandem::image;

namespace {

/// Input (n, c, h, w); weight (o, cg, kh, kw) or the pooling window (kh,
/// kw); result (oh, ow); strides, padding, dilation; og = result channels
/// per group.
struct ConvArgs {
  int64_t n, c, h, w, o, cg, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw, og;
};

template <typename T>
__global__ void conv2dKernel(ConvArgs a, const T *x, const T *wt, const T *bias,
                             T *out) {
  GRID_LOOP(i, a.n * a.o * a.oh * a.ow) {
    int64_t xo = i % a.ow, y = (i / a.ow) % a.oh, oi = (i / (a.ow * a.oh)) % a.o,
            ni = i / (a.ow * a.oh * a.o), g = oi / a.og;
    float sum = bias ? toFloat(bias[oi]) : 0.0f;
    for (int64_t ci = 0; ci < a.cg; ++ci)
      for (int64_t p = 0; p < a.kh; ++p) {
        int64_t iy = y * a.sh - a.ph + p * a.dh;
        if (iy < 0 || iy >= a.h)
          continue;
        for (int64_t q = 0; q < a.kw; ++q) {
          int64_t ix = xo * a.sw - a.pw + q * a.dw;
          if (ix < 0 || ix >= a.w)
            continue;
          sum += toFloat(x[((ni * a.c + g * a.cg + ci) * a.h + iy) * a.w + ix]) *
                 toFloat(wt[((oi * a.cg + ci) * a.kh + p) * a.kw + q]);
        }
      }
    out[i] = fromFloat<T>(sum);
  }
}

template <typename T>
__global__ void poolKernel(ConvArgs a, bool max, const T *x, T *out) {
  GRID_LOOP(i, a.n * a.c * a.oh * a.ow) {
    int64_t xo = i % a.ow, y = (i / a.ow) % a.oh, p = i / (a.ow * a.oh);
    float acc = max ? -INFINITY : 0.0f;
    for (int64_t r = 0; r < a.kh; ++r)
      for (int64_t s = 0; s < a.kw; ++s) {
        int64_t iy = y * a.sh - a.ph + r, ix = xo * a.sw - a.pw + s;
        if (iy < 0 || iy >= a.h || ix < 0 || ix >= a.w)
          continue;
        float v = toFloat(x[(p * a.h + iy) * a.w + ix]);
        acc = max ? ((isnan(v) || v > acc) ? v : acc) : acc + v;
      }
    out[i] = fromFloat<T>(max ? acc : acc / float(a.kh * a.kw));
  }
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

/// Conv2d, max_pool2d and avg_pool2d.
bool runConvOrPool(const KernelCall &call) {
  const std::vector<TensorView> &ops = call.ops;
  const TensorView &out = call.out;
  dim3 grid = call.grid, block = call.block;
  const std::vector<int64_t> &x = ops[0].shape;
  ConvArgs args{x[0], x[1], x[2], x[3], 0, 0, 0, 0, out.shape[2],
                out.shape[3], 0, 0, 0, 0, 1, 1, 1};
  bool ok;
  if (call.kind == img::kConv2d) {
    auto a = img::readAttrs<img::Conv2dAttrs>(call.attrs);
    const std::vector<int64_t> &w = ops[1].shape;
    args.o = w[0]; args.cg = w[1]; args.kh = w[2]; args.kw = w[3];
    args.sh = a.strides[0]; args.sw = a.strides[1];
    args.ph = a.padding[0]; args.pw = a.padding[1];
    args.dh = a.dilation[0]; args.dw = a.dilation[1]; args.og = w[0] / a.groups;
    ok = withFloat(out.dtype, [&](auto t) {
      using T = decltype(t);
      conv2dKernel<T><<<grid, block, 0, call.stream()>>>(args, static_cast<const T *>(ops[0].data),
          static_cast<const T *>(ops[1].data),
          ops.size() > 2 ? static_cast<const T *>(ops[2].data) : nullptr,
          static_cast<T *>(out.data));
    });
  } else {
    auto a = img::readAttrs<img::Pool2dAttrs>(call.attrs);
    args.kh = a.kernel[0]; args.kw = a.kernel[1];
    args.sh = a.strides[0]; args.sw = a.strides[1];
    args.ph = a.padding[0]; args.pw = a.padding[1];
    bool max = call.kind == img::kMaxPool2d;
    ok = withFloat(out.dtype, [&](auto t) {
      using T = decltype(t);
      poolKernel<T><<<grid, block, 0, call.stream()>>>(args, max,
          static_cast<const T *>(ops[0].data), static_cast<T *>(out.data));
    });
  }
  return ok ? launched(call.error) : call.unsupported();
}

} // namespace

void cuda::registerConvKernels(CudaKernelTable &table) {
  table.add(img::kConv2d, runConvOrPool);
  table.add(img::kMaxPool2d, runConvOrPool);
  table.add(img::kAvgPool2d, runConvOrPool);
}
