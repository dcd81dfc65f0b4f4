//===- CudaBackendNone.cpp - a runtime built without CUDA -----------------===//

#include "CudaBackend.h"

using namespace tandem::rt;

static const char *kNotBuilt =
    "this runtime was built without CUDA (no nvcc when it was built)";

bool cuda::available(std::string &why) {
  why = kNotBuilt;
  return false;
}
std::string cuda::describeDevices() { return std::string("cuda: ") + kNotBuilt; }
bool cuda::start(int64_t, std::string &error) {
  error = kNotBuilt;
  return false;
}
void cuda::stop() {}
void *cuda::arena() { return nullptr; }
bool cuda::toDevice(void *, const void *, size_t, std::string &error) {
  error = kNotBuilt;
  return false;
}
bool cuda::toHost(void *, const void *, size_t, std::string &error) {
  error = kNotBuilt;
  return false;
}
bool cuda::runKernel(int64_t, const std::vector<TensorView> &,
                     const TensorView &, const std::vector<int64_t> &,
                     std::string &error) {
  error = kNotBuilt;
  return false;
}
bool cuda::hasKernel(int64_t) { return false; }
