//===- BlasCore.h - OpenBLAS on the kernels the CPU allows ------*- C++ -*-===//
//
// See BlasCore.cpp: Debian 12's OpenBLAS falls back to generic kernels on
// CPUs newer than itself; an executable runs itself again with
// OPENBLAS_CORETYPE set.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_BLASCORE_H
#define TANDEM_RUNTIME_BLASCORE_H

namespace tandem::rt {

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
