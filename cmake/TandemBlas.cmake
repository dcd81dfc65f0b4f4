# The CPU's BLAS, for the runtime's GEMMs and convolutions (docs/runtime.md).
#
# TANDEM_BLAS=openblas (the default) builds with OpenBLAS; =mkl with Intel's
# oneMKL (fails when it is not found). Either way, where oneMKL is installed
# tandem-compile --blas=mkl links a model with it. oneMKL comes from PyPI's
# `mkl` wheel (scripts/setup.sh installs it on Intel CPUs), whose single
# library libmkl_rt chooses its threading at run time: the runtime asks for
# the sequential layer (its own pool splits every product), so no OpenMP
# runtime is loaded. On an Intel Xeon (AVX-512, 2 vCPU) models linked with it
# ran 7-21% faster (bench/runtime): scripts/setup.sh configures a new build
# with TANDEM_BLAS=mkl on Intel CPUs, where it installs it, and openblas
# elsewhere (docs/runtime.md). A build configured by hand gets OpenBLAS.
#
# Sets BLAS_LIBRARIES (what the tools and, by default, compiled models link),
# TANDEM_BLAS_NAME ("oneMKL" or "OpenBLAS", as the runtime's blasName() says
# it), TANDEM_DEFAULT_BLAS (tandem-compile's --blas: mkl or openblas),
# TANDEM_OPENBLAS_LIBRARIES, and
# TANDEM_MKL_RT (libmkl_rt's path, or empty where it was not found).
# tandem-compile --blas links a model with either: the build's choice by
# default, OpenBLAS for a binary carried to a machine without oneMKL, oneMKL
# for speed where it is installed.

set(TANDEM_BLAS "openblas" CACHE STRING "The CPU's BLAS: openblas or mkl")
set_property(CACHE TANDEM_BLAS PROPERTY STRINGS openblas mkl)
if(NOT TANDEM_BLAS MATCHES "^(mkl|openblas)$")
  message(FATAL_ERROR "TANDEM_BLAS=${TANDEM_BLAS}: expected openblas or mkl")
endif()

# The cblas.h every build includes is OpenBLAS's (libopenblas-dev); its
# prototypes are the standard CBLAS ones that oneMKL exports too.
set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)
set(TANDEM_OPENBLAS_LIBRARIES ${BLAS_LIBRARIES})

# pip installs the mkl wheel's libraries in <python prefix>/lib.
set(tandem_mkl_hints $ENV{MKLROOT})
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  execute_process(COMMAND ${Python3_EXECUTABLE} -c "import sys; print(sys.prefix)"
                  OUTPUT_VARIABLE tandem_python_prefix
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  list(APPEND tandem_mkl_hints ${tandem_python_prefix})
endif()
find_library(TANDEM_MKL_RT_LIBRARY NAMES mkl_rt libmkl_rt.so.3 libmkl_rt.so.2
             HINTS ${tandem_mkl_hints} PATH_SUFFIXES lib lib/intel64)
set(TANDEM_MKL_RT "")
if(TANDEM_MKL_RT_LIBRARY)
  set(TANDEM_MKL_RT ${TANDEM_MKL_RT_LIBRARY})
endif()

if(TANDEM_BLAS STREQUAL "mkl")
  if(NOT TANDEM_MKL_RT)
    message(FATAL_ERROR "TANDEM_BLAS=mkl: libmkl_rt not found (pip install mkl, "
                        "or set MKLROOT)")
  endif()
  set(BLAS_LIBRARIES ${TANDEM_MKL_RT})
  set(TANDEM_BLAS_NAME "oneMKL")
  set(TANDEM_DEFAULT_BLAS "mkl")
else()
  set(TANDEM_BLAS_NAME "OpenBLAS")
  set(TANDEM_DEFAULT_BLAS "openblas")
endif()
message(STATUS "Tandem CPU BLAS: ${TANDEM_BLAS_NAME} (${BLAS_LIBRARIES}); "
               "oneMKL: ${TANDEM_MKL_RT}")
