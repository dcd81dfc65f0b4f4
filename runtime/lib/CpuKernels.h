//===- CpuKernels.h - forwards to cpu/CpuKernels.h --------------*- C++ -*-===//
//
// The CPU kernels moved to cpu/. CudaBackend.h still includes this name (it
// is being changed on another branch); once it includes cpu/CpuKernels.h,
// delete this file.
//
//===----------------------------------------------------------------------===//

#include "cpu/CpuKernels.h"
