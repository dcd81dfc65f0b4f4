//===- SgemmBenchmark.cpp - what the BLAS's sgemm alone reaches -----------===//
//
// Usage: tandem-bench-sgemm M N K REPEAT
// Prints the time of one C[M,N] = A[M,K] · B[N,K]ᵀ (the layout of
// tandem.linear) in microseconds, the mean of REPEAT calls after a first
// one (as a compiled model's --timing reports its runs, so the two compare
// like for like), the GFLOP/s it reaches, and the BLAS's name. The BLAS
// (the one the runtime links, cmake/TandemBlas.cmake) runs on its own
// threads, one per core.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/BlasCore.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
  // The kernels a compiled model runs on (BlasCore.h).
  tandem::rt::reexecOnBetterBlasCore(argv);
  tandem::rt::useThreadedBlas();
  if (argc != 5) {
    std::fprintf(stderr, "usage: tandem-bench-sgemm M N K REPEAT\n");
    return 1;
  }
  long m = std::atol(argv[1]), n = std::atol(argv[2]), k = std::atol(argv[3]);
  int repeat = std::max(1, std::atoi(argv[4]));
  std::vector<float> a(m * k, 0.5f), b(n * k, 0.25f), c(m * n);
  auto call = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f,
                a.data(), k, b.data(), k, 0.0f, c.data(), n);
  };
  call(); // warms up the thread pool
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeat; ++i)
    call();
  double mean = std::chrono::duration<double, std::micro>(
                    std::chrono::steady_clock::now() - start)
                    .count() /
                repeat;
  std::printf("%.3f %.3f %s\n", mean, 2.0 * m * n * k / mean / 1e3,
              tandem::rt::blasName());
  return 0;
}
