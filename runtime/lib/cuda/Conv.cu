//===- Conv.cu - CUDA kernels for convolution and pooling -----------------===//
//
// The Conv family of OpKinds.def on the GPU: conv2d (grouped, dilated) and
// max/average pooling over NCHW tensors. Convolutions go to cuDNN where it
// loads, with the algorithm its heuristics rank first among those that fit
// the workspace the memory plan gave the op (tandem.workspace_offset), and
// the bias broadcast into the result for cuDNN to accumulate onto. Our own kernels, a thread per result
// element computing in f32 for f32, f16 and bf16, run the pooling, and the
// convolutions cuDNN cannot (not loaded, sizes beyond its int descriptors,
// no algorithm within the workspace).
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.cuh"

#include <climits>
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

#if TANDEM_HAVE_CUDNN
/// The convolution on cuDNN. Sets `done` when cuDNN ran it (false with
/// call.error where it failed); leaves it false where cuDNN cannot take
/// this convolution, for our kernel to run.
bool convolveWithCudnn(const KernelCall &call, const ConvArgs &args,
                       const img::Conv2dAttrs &attrs, bool &done) {
  done = false;
  Device &device = call.device;
  cudnnDataType_t type;
  switch (call.out.dtype) {
  case DType::F32: type = CUDNN_DATA_FLOAT; break;
  case DType::F16: type = CUDNN_DATA_HALF; break;
  case DType::BF16: type = CUDNN_DATA_BFLOAT16; break;
  default: return true;
  }
  // The legacy descriptors take int dimensions.
  for (int64_t v : {args.n, args.c, args.h, args.w, args.o, args.oh, args.ow})
    if (v <= 0 || v > INT_MAX)
      return true;
  // The workspace the plan gave the op, if it lies in the arena.
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
  if (attrs.workspaceBytes > 0 && attrs.workspaceOffset >= 0 &&
      attrs.workspaceOffset <= device.arenaBytes - attrs.workspaceBytes) {
    workspace = static_cast<uint8_t *>(device.arena) + attrs.workspaceOffset;
    workspaceBytes = size_t(attrs.workspaceBytes);
  }
  const Cudnn *api = cudnnFor(device);
  if (!api)
    return true;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  // The math cuDNN may use: strict f32 (FMA) unless TF32 is allowed, when
  // its default (TF32 tensor cores on Ampere and later) is; tensor cores for
  // f16/bf16. Never ALLOW_CONVERSION, which would run f32 data in f16.
  bool strict = type == CUDNN_DATA_FLOAT && !device.allowTf32;
  cudnnMathType_t math = type != CUDNN_DATA_FLOAT ? CUDNN_TENSOR_OP_MATH
                         : strict                 ? CUDNN_FMA_MATH
                                                  : CUDNN_DEFAULT_MATH;
  auto allowed = [&](cudnnMathType_t ranked) {
    if (ranked == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
      return false;
    return !strict || ranked == CUDNN_FMA_MATH;
  };
  bool described =
      api->cudnnCreateTensorDescriptor(&x) == CUDNN_STATUS_SUCCESS &&
      api->cudnnCreateTensorDescriptor(&y) == CUDNN_STATUS_SUCCESS &&
      api->cudnnCreateFilterDescriptor(&w) == CUDNN_STATUS_SUCCESS &&
      api->cudnnCreateConvolutionDescriptor(&conv) == CUDNN_STATUS_SUCCESS &&
      api->cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, type, int(args.n),
                                      int(args.c), int(args.h),
                                      int(args.w)) == CUDNN_STATUS_SUCCESS &&
      api->cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, type, int(args.n),
                                      int(args.o), int(args.oh),
                                      int(args.ow)) == CUDNN_STATUS_SUCCESS &&
      api->cudnnSetFilter4dDescriptor(w, type, CUDNN_TENSOR_NCHW, int(args.o),
                                      int(args.cg), int(args.kh),
                                      int(args.kw)) == CUDNN_STATUS_SUCCESS &&
      api->cudnnSetConvolution2dDescriptor(
          conv, int(args.ph), int(args.pw), int(args.sh), int(args.sw),
          int(args.dh), int(args.dw), CUDNN_CROSS_CORRELATION,
          CUDNN_DATA_FLOAT) == CUDNN_STATUS_SUCCESS &&
      api->cudnnSetConvolutionGroupCount(conv, int(attrs.groups)) ==
          CUDNN_STATUS_SUCCESS &&
      api->cudnnSetConvolutionMathType(conv, math) == CUDNN_STATUS_SUCCESS;
  // The algorithm and its math type, chosen once per shape: the first
  // cuDNN's heuristics rank whose math the precision allows and whose
  // workspace, as cuDNN reports it for that math, fits the planned one.
  Device::ConvChoice choice;
  std::vector<int64_t> key = {args.n,  args.c,  args.h,  args.w,  args.o,
                              args.cg, args.kh, args.kw, args.sh, args.sw,
                              args.ph, args.pw, args.dh, args.dw,
                              attrs.groups, int64_t(type), int64_t(math),
                              int64_t(workspaceBytes)};
  auto found = device.convAlgorithms.find(key);
  if (!described) {
    // cuDNN refused the descriptors: our kernel runs it.
  } else if (found != device.convAlgorithms.end()) {
    choice = found->second;
  } else {
    int most = 0;
    std::vector<cudnnConvolutionFwdAlgoPerf_t> ranked;
    if (api->cudnnGetConvolutionForwardAlgorithmMaxCount(device.dnn, &most) ==
        CUDNN_STATUS_SUCCESS && most > 0)
      ranked.resize(size_t(most));
    int count = 0;
    if (!ranked.empty() &&
        api->cudnnGetConvolutionForwardAlgorithm_v7(
            device.dnn, x, w, conv, y, most, &count, ranked.data()) !=
            CUDNN_STATUS_SUCCESS)
      count = 0;
    for (int k = 0; k < count && choice.algorithm < 0; ++k) {
      const cudnnConvolutionFwdAlgoPerf_t &entry = ranked[size_t(k)];
      size_t needed = 0;
      if (entry.status != CUDNN_STATUS_SUCCESS || !allowed(entry.mathType) ||
          api->cudnnSetConvolutionMathType(conv, entry.mathType) !=
              CUDNN_STATUS_SUCCESS ||
          api->cudnnGetConvolutionForwardWorkspaceSize(
              device.dnn, x, w, conv, y, entry.algo, &needed) !=
              CUDNN_STATUS_SUCCESS ||
          needed > workspaceBytes)
        continue;
      choice = {int(entry.algo), int(entry.mathType)};
    }
    device.convAlgorithms[key] = choice;
  }
  bool ok = true;
  if (choice.algorithm >= 0 &&
      api->cudnnSetConvolutionMathType(conv, cudnnMathType_t(choice.math)) ==
          CUDNN_STATUS_SUCCESS) {
    // A bias is broadcast into the result first and accumulated into (as
    // Linear does with cuBLAS): y = conv(x) + 1·y.
    bool bias = call.ops.size() > 2;
    done = true;
    if (bias &&
        !launchStridedCopy(call.grid, call.block, call.stream(),
                           layoutOf(call.out.shape,
                                    {broadcastStrides({1, args.o, 1, 1},
                                                      call.out.shape)}),
                           call.n, 0, static_cast<const uint8_t *>(call.ops[2].data),
                           static_cast<uint8_t *>(call.out.data), call.item)) {
      ok = call.unsupported(); // (f32, f16 and bf16 all copy)
    } else {
      float one = 1.0f, beta = bias ? 1.0f : 0.0f; // f32: the compute type
      cudnnStatus_t status = api->cudnnConvolutionForward(
          device.dnn, &one, x, call.ops[0].data, w, call.ops[1].data, conv,
          cudnnConvolutionFwdAlgo_t(choice.algorithm), workspace,
          workspaceBytes, &beta, y, call.out.data);
      if (status == CUDNN_STATUS_NOT_SUPPORTED ||
          status == CUDNN_STATUS_BAD_PARAM) {
        // cuDNN cannot take it after all: our kernel runs it (overwriting
        // the bias copied in), now and later.
        device.convAlgorithms[key] = Device::ConvChoice();
        done = false;
      } else if (status != CUDNN_STATUS_SUCCESS) {
        call.error = std::string("cuDNN convolution: ") +
                     api->cudnnGetErrorString(status);
        ok = false;
      }
    }
  }
  if (x) api->cudnnDestroyTensorDescriptor(x);
  if (y) api->cudnnDestroyTensorDescriptor(y);
  if (w) api->cudnnDestroyFilterDescriptor(w);
  if (conv) api->cudnnDestroyConvolutionDescriptor(conv);
  return ok;
}
#endif

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
#if TANDEM_HAVE_CUDNN
    bool done = false;
    if (!convolveWithCudnn(call, args, a, done))
      return false;
    if (done)
      return launched(call.error);
#endif
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
