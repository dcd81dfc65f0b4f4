//===- BlasCore.h - the CPU's BLAS, set up for the runtime ------*- C++ -*-===//
//
// See BlasCore.cpp: which BLAS is loaded (OpenBLAS or oneMKL, chosen when
// Tandem is built: cmake/TandemBlas.cmake), how it is made to run
// single-threaded inside the runtime's pool, and OpenBLAS's kernels on
// CPUs newer than Debian 12's OpenBLAS (an executable runs itself again
// with OPENBLAS_CORETYPE set).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_BLASCORE_H
#define TANDEM_RUNTIME_BLASCORE_H

namespace tandem::rt {

/// The loaded BLAS, as a report names it: "oneMKL" or "OpenBLAS".
const char *blasName();

/// Makes every BLAS call run on the calling thread only: the runtime's pool
/// splits each product into blocks, one call per block, and a BLAS's own
/// threads would compete with the pool's for the same cores. Idempotent;
/// call before the first BLAS call.
void useSequentialBlas();

/// useSequentialBlas(), then one tiny product: a BLAS that loads its CPU's
/// kernels at its first call (oneMKL: 7-9 ms) does so now, at a model's
/// load, instead of inside the first run's first GEMM.
void warmUpSequentialBlas();

/// Lets the BLAS use its own threads, one per core (the sgemm benchmark,
/// which measures the BLAS alone). Call before the first BLAS call.
void useThreadedBlas();

/// The OpenBLAS core the CPU's features allow ("SkylakeX" with AVX-512,
/// "Haswell" with AVX2 and FMA), or null.
const char *blasCoreForThisCpu();

/// blasCoreForThisCpu() where the loaded OpenBLAS runs kernels below it and
/// the user has not set OPENBLAS_CORETYPE; else null.
const char *betterBlasCore();

/// Whether the loaded BLAS is OpenBLAS on kernels with small-matrix SGEMM
/// kernels (which multiply a small product without packing its operands).
bool blasHasSmallMatrixKernels();

/// Where betterBlasCore() names a core: executes this program again with
/// `argv` and OPENBLAS_CORETYPE naming it (it does not return). Else, or if
/// that fails, returns.
void reexecOnBetterBlasCore(char **argv);

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_BLASCORE_H
