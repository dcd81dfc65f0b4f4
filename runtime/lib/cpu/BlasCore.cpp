//===- BlasCore.cpp - the CPU's BLAS, set up for the runtime --------------===//
//
// The runtime calls the BLAS through its standard CBLAS interface; which
// library that is was chosen when Tandem was built (cmake/TandemBlas.cmake):
// OpenBLAS, or Intel's oneMKL (its libmkl_rt). Each exports controls the
// other lacks, declared weak below: null where the other library is loaded.
//
// OpenBLAS chooses its kernels once, when it loads (a library constructor
// reads OPENBLAS_CORETYPE, else the CPUID family and model). Debian 12's
// OpenBLAS (0.3.21) does not know CPUs newer than itself (Intel's Emerald
// Rapids, family 6 model 207, among them) and falls back to its generic SSE3
// kernels ("Prescott"): sgemm then runs 4-5x slower than the CPU allows.
// Nothing can run before that constructor and change its mind (a
// .preinit_array entry's setenv is undone when libc starts), and the choice
// is fixed once made, so an executable that finds OpenBLAS on generic
// kernels runs itself again with OPENBLAS_CORETYPE naming the kernels the
// CPU's features allow. A variable the user set is left alone.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/BlasCore.h"

#include <cblas.h>
#include <cstdlib>
#include <mutex>
#include <string>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

// OpenBLAS's own query and controls.
extern "C" char *openblas_get_corename(void) __attribute__((weak));
extern "C" void openblas_set_num_threads(int) __attribute__((weak));
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));
// oneMKL's (mkl_service.h).
extern "C" int MKL_Set_Threading_Layer(int) __attribute__((weak));
extern "C" int MKL_CBWR_Set(int) __attribute__((weak));

namespace {

struct Core {
  const char *name;
  bool avx512;
};

/// The OpenBLAS cores that use AVX2 (and those AVX-512) for sgemm, as
/// openblas_get_corename spells them.
constexpr Core kVectorCores[] = {
    {"Haswell", false},  {"Zen", false},       {"SkylakeX", true},
    {"Cooperlake", true}, {"SapphireRapids", true},
};

bool usesAvx512() {
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
}

// mkl_service.h's and mkl_types.h's values.
constexpr int kMklThreadingSequential = 1;
constexpr int kMklThreadingGnu = 3;
constexpr int kMklCbwrAuto = 2;

/// oneMKL may pick a GEMM's code path by more than the CPU unless told not
/// to; conditional numerical reproducibility on the CPU's own path makes a
/// product give the same bits on every run wherever its operands are
/// 64-byte aligned, as the arena's buffers are (the tests hold fused and
/// unfused runs, and the sim and cpu backends, to identical bits). Its
/// strict mode, which ignores alignment too, made small products 2-4x
/// slower (a 4 x 256 x 256 linear 5 -> 10 us; AUTO alone cost nothing).
void useReproducibleMkl() {
  if (MKL_CBWR_Set)
    MKL_CBWR_Set(kMklCbwrAuto);
}

} // namespace

const char *tandem::rt::blasName() {
  if (MKL_Set_Threading_Layer)
    return "oneMKL";
  if (openblas_get_corename)
    return "OpenBLAS";
  return "a CBLAS";
}

void tandem::rt::useSequentialBlas() {
  static std::once_flag once;
  std::call_once(once, [] {
    // OpenBLAS's threads, started when it loaded, are stopped too: left
    // idle, they kept waking to yield (sched_yield, 5% of a 4-GEMM chain's
    // samples in the kernel's scheduler) and the chain ran 20-25% slower
    // than with OPENBLAS_NUM_THREADS=1. A threaded call would start them
    // again; single-threaded ones never do.
    if (openblas_set_num_threads)
      openblas_set_num_threads(1);
    if (blas_thread_shutdown_)
      blas_thread_shutdown_();
    // oneMKL's sequential layer loads no OpenMP runtime at all.
    if (MKL_Set_Threading_Layer)
      MKL_Set_Threading_Layer(kMklThreadingSequential);
    useReproducibleMkl();
  });
}

void tandem::rt::warmUpSequentialBlas() {
  useSequentialBlas();
  static std::once_flag once;
  std::call_once(once, [] {
    float a = 1, b = 1, c = 0;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f, &a,
                1, &b, 1, 0.0f, &c, 1);
  });
}

void tandem::rt::useThreadedBlas() {
  // OpenBLAS threads by default; oneMKL's GNU layer runs on libgomp, which
  // GCC installs (its Intel layer would need Intel's OpenMP runtime).
  if (MKL_Set_Threading_Layer)
    MKL_Set_Threading_Layer(kMklThreadingGnu);
  useReproducibleMkl();
}

const char *tandem::rt::blasCoreForThisCpu() {
  __builtin_cpu_init();
  if (usesAvx512())
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "Haswell";
  return nullptr;
}

const char *tandem::rt::betterBlasCore() {
  if (!openblas_get_corename || std::getenv("OPENBLAS_CORETYPE"))
    return nullptr;
  const char *best = blasCoreForThisCpu();
  if (!best)
    return nullptr;
  bool wantAvx512 = usesAvx512();
  const char *current = openblas_get_corename();
  for (const Core &core : kVectorCores)
    if (current && strcasecmp(current, core.name) == 0 &&
        (core.avx512 || !wantAvx512))
      return nullptr;
  return best;
}

bool tandem::rt::blasHasSmallMatrixKernels() {
  // OpenBLAS 0.3.21's small-matrix SGEMM kernels are SkylakeX's (Cooperlake
  // and SapphireRapids use them too): its AVX-512 cores.
  static const bool has = [] {
    const char *current =
        openblas_get_corename ? openblas_get_corename() : nullptr;
    for (const Core &core : kVectorCores)
      if (current && core.avx512 && strcasecmp(current, core.name) == 0)
        return true;
    return false;
  }();
  return has;
}

namespace {

/// Whether /proc/self/exe is the program `argv0` names (found on PATH when it
/// has no slash): not so under `ld.so PROGRAM` or valgrind, where executing
/// /proc/self/exe again would run the loader or the tool.
bool selfIsProgram(const char *argv0) {
  struct stat self, named;
  if (!argv0 || stat("/proc/self/exe", &self) != 0)
    return false;
  auto same = [&](const std::string &path) {
    return stat(path.c_str(), &named) == 0 && named.st_dev == self.st_dev &&
           named.st_ino == self.st_ino;
  };
  std::string name(argv0);
  if (name.find('/') != std::string::npos)
    return same(name);
  const char *path = std::getenv("PATH");
  for (std::string dirs = path ? path : ""; !dirs.empty();) {
    size_t colon = dirs.find(':');
    std::string dir = dirs.substr(0, colon);
    if (same((dir.empty() ? "." : dir) + "/" + name))
      return true;
    dirs = colon == std::string::npos ? "" : dirs.substr(colon + 1);
  }
  return false;
}

} // namespace

void tandem::rt::reexecOnBetterBlasCore(char **argv) {
  const char *core = betterBlasCore();
  if (!core || !selfIsProgram(argv[0]))
    return;
  setenv("OPENBLAS_CORETYPE", core, /*overwrite=*/1);
  execv("/proc/self/exe", argv);
  // Not re-executed (no /proc): run on the generic kernels.
  unsetenv("OPENBLAS_CORETYPE");
}
