//===- SgemmBenchmark.cpp - what OpenBLAS sgemm alone reaches -------------===//
//
// Usage: tandem-bench-sgemm M N K REPEAT
// Prints the best time of one C[M,N] = A[M,K] · B[N,K]ᵀ (the layout of
// tandem.linear) in microseconds, and the GFLOP/s it reaches.
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
  if (argc != 5) {
    std::fprintf(stderr, "usage: tandem-bench-sgemm M N K REPEAT\n");
    return 1;
  }
  long m = std::atol(argv[1]), n = std::atol(argv[2]), k = std::atol(argv[3]);
  int repeat = std::max(1, std::atoi(argv[4]));
  std::vector<float> a(m * k, 0.5f), b(n * k, 0.25f), c(m * n);
  double best = 1e30;
  for (int i = 0; i < repeat + 1; ++i) {
    auto start = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f,
                a.data(), k, b.data(), k, 0.0f, c.data(), n);
    double us = std::chrono::duration<double, std::micro>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (i > 0) // the first call warms up the thread pool
      best = std::min(best, us);
  }
  std::printf("%.3f %.3f\n", best, 2.0 * m * n * k / best / 1e3);
  return 0;
}
