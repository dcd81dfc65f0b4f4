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
cuda::Device *cuda::start(int64_t, bool, std::string &error) {
  error = kNotBuilt;
  return nullptr;
}
void cuda::stop(Device *) {}
bool cuda::loadGeneratedKernels(Device *, const std::string &,
                                const std::vector<int64_t> &, int64_t,
                                std::string &error) {
  error = "this runtime was built without CUDA";
  return false;
}
void *cuda::arena(Device *) { return nullptr; }
bool cuda::toDevice(Device *, void *, const void *, size_t,
                    std::string &error) {
  error = kNotBuilt;
  return false;
}
bool cuda::toHost(Device *, void *, const void *, size_t, std::string &error) {
  error = kNotBuilt;
  return false;
}
bool cuda::runKernel(Device *, int64_t, const std::vector<TensorView> &,
                     const TensorView &, const std::vector<int64_t> &,
                     std::string &error) {
  error = kNotBuilt;
  return false;
}
bool cuda::synchronize(Device *, std::string &error) {
  error = kNotBuilt;
  return false;
}
bool cuda::hasKernel(int64_t) { return false; }
bool cuda::pinHostMemory(Device *, const void *, size_t, bool,
                         std::string &why) {
  why = kNotBuilt;
  return false;
}
bool cuda::prepareSchedule(Device *, size_t, bool, std::string &error) {
  error = kNotBuilt;
  return false;
}
bool cuda::streamWaitFor(Device *, GpuQueue, size_t, std::string &error) {
  error = kNotBuilt;
  return false;
}
bool cuda::hostWaitFor(Device *, size_t, std::string &error) {
  error = kNotBuilt;
  return false;
}
bool cuda::recordStart(Device *, GpuQueue, size_t, std::string &error) {
  error = kNotBuilt;
  return false;
}
bool cuda::recordDone(Device *, GpuQueue, size_t, std::string &error) {
  error = kNotBuilt;
  return false;
}
bool cuda::opSeconds(Device *, size_t, size_t, double &, double &,
                     std::string &error) {
  error = kNotBuilt;
  return false;
}
bool cuda::copyOnQueue(Device *, GpuQueue, void *, const void *, size_t,
                       std::string &error) {
  error = kNotBuilt;
  return false;
}
bool cuda::beginGraphCapture(Device *, std::string &error) {
  error = kNotBuilt;
  return false;
}
bool cuda::endGraphCapture(Device *, std::string &error) {
  error = kNotBuilt;
  return false;
}
bool cuda::launchGraph(Device *, std::string &error) {
  error = kNotBuilt;
  return false;
}
void cuda::dropGraph(Device *) {}
