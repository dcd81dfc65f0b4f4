//===- CpuCalibration.cpp - measuring the CPU -----------------------------===//

#include "Calibration.h"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

using namespace tandem_calibrate;

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The best of `repeats` timings of `work`, in seconds.
double bestOf(int repeats, const std::function<void()> &work) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    double start = now();
    work();
    best = std::min(best, now() - start);
  }
  return best;
}

double measureSgemm(bool quick) {
  int n = quick ? 512 : 2048;
  std::vector<float> a(size_t(n) * n, 1.0f), b(size_t(n) * n, 0.5f),
      c(size_t(n) * n);
  auto gemm = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
                a.data(), n, b.data(), n, 0.0f, c.data(), n);
  };
  gemm(); // warm up the threads and caches
  return 2.0 * n * n * double(n) / bestOf(quick ? 2 : 5, gemm);
}

double measureTriad(bool quick, unsigned threads) {
  size_t n = quick ? (size_t(1) << 22) : (size_t(1) << 25); // floats per array
  std::vector<float> a(n), b(n, 1.0f), c(n, 2.0f);
  auto triad = [&] {
    std::vector<std::thread> workers;
    size_t chunk = (n + threads - 1) / threads;
    for (unsigned t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        size_t begin = t * chunk, end = std::min(n, begin + chunk);
        for (size_t i = begin; i < end; ++i)
          a[i] = b[i] + 3.0f * c[i];
      });
    for (std::thread &worker : workers)
      worker.join();
  };
  triad();
  // Reads b and c, writes a.
  return 3.0 * n * sizeof(float) / bestOf(quick ? 2 : 5, triad);
}

/// The round trip of handing one empty task to a waiting worker thread and
/// waiting for it: what starting an op on the runtime's thread pool costs.
double measureDispatchUs(bool quick) {
  std::mutex mutex;
  std::condition_variable wake, done;
  int posted = 0, finished = 0;
  bool stop = false;
  std::thread worker([&] {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      wake.wait(lock, [&] { return stop || posted > finished; });
      if (stop)
        return;
      ++finished;
      done.notify_one();
    }
  });
  int rounds = quick ? 2000 : 20000;
  double start = now();
  for (int i = 0; i < rounds; ++i) {
    std::unique_lock<std::mutex> lock(mutex);
    ++posted;
    wake.notify_one();
    done.wait(lock, [&] { return finished == posted; });
  }
  double elapsed = now() - start;
  {
    std::lock_guard<std::mutex> lock(mutex);
    stop = true;
  }
  wake.notify_one();
  worker.join();
  return elapsed / rounds * 1e6;
}

std::string cpuName() {
  std::ifstream info("/proc/cpuinfo");
  std::string line;
  while (std::getline(info, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos)
        return line.substr(colon + 2);
    }
  return "unknown CPU";
}

} // namespace

ProcessorRates tandem_calibrate::calibrateCpu(bool quick) {
  ProcessorRates rates;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  rates.name = cpuName() + " (" + std::to_string(threads) + " threads)";
  rates.f32Flops = measureSgemm(quick);
  // The CPU kernels compute f16 and bf16 in f32; integer work is
  // memory-bound and priced like f32.
  rates.f16Flops = rates.bf16Flops = rates.intOps = rates.f32Flops;
  rates.memoryBandwidth = measureTriad(quick, threads);
  rates.dispatchUs = measureDispatchUs(quick);
  rates.memoryBytes =
      int64_t(sysconf(_SC_PHYS_PAGES)) * int64_t(sysconf(_SC_PAGE_SIZE));
  return rates;
}

#ifndef TANDEM_HAVE_CUDA
GpuCalibration tandem_calibrate::calibrateGpu(bool) {
  GpuCalibration gpu;
  gpu.error = "this build has no CUDA support (no nvcc when it was built)";
  return gpu;
}
#endif
