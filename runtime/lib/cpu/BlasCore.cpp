//===- BlasCore.cpp - OpenBLAS on the kernels the CPU allows --------------===//
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

#include <cstdlib>
#include <string>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

// OpenBLAS's own query; null where the BLAS is another library.
extern "C" char *openblas_get_corename(void) __attribute__((weak));

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

} // namespace

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
