//===- Passes.td - tandem conversion passes ----------------*- tablegen -*-===//

#ifndef TANDEM_CONVERSION_PASSES_TD
#define TANDEM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTandemToLLVM : Pass<"convert-tandem-to-llvm", "::mlir::ModuleOp"> {
  let summary = "Lower placed, planned @main to LLVM dialect calls into the "
                "runtime";
  let description = [{
    Takes the output of --tandem-placement-pipeline and produces the LLVM
    dialect module tandem-compile turns into an executable: a model image
    (a constant array of words describing inputs, outputs, weights and every
    op, see runtime/include/tandem/runtime/ModelImage.h) with its string
    table, `tandem_model_run`, which computes each buffer's address from its
    arena and planned offset and calls `tandem_rt_execute` once per op, and
    `main`, which hands both to `tandem_rt_main`.

    Each fused group (`tandem.fused`) gets a generated kernel: a function
    of the module (`tandem_fused_N`, numbered in `tandem.kernel`) that
    evaluates the group's body on a range of its result's elements, a
    vector loop and a scalar tail built with the scf, arith, math and vector
    dialects and lowered to the LLVM dialect with upstream's conversions.
    The table of kernels (`tandem_model_kernels`) goes to the runtime with
    the image. A group placed on the GPU also gets a GPU kernel of the same
    name, one thread per element (a grid-stride loop), compiled in process
    to PTX for sm_80 (LLVM's NVPTX backend, with the CUDA toolkit's
    libdevice for exp, log, erf and pow); the PTX is in the image's string
    table, and the CUDA backend loads it when the model starts.

    Every op of the IR contract, and dense `arith.constant`s (folded
    shapes); anything else is an error naming it.

    With `library`, instead of `main` it defines the C entry points of a
    shared library: `int tandem_model_load(const char *weights, const char
    *backend, char *error, int64_t errorSize)`, `int tandem_model_infer(const
    void *const *inputs, void *const *outputs, char *error, int64_t
    errorSize)` (caller-owned buffers of the model's shapes, in order) and
    `void tandem_model_unload(void)`.
  }];
  let options = [
    Option<"library", "library", "bool", /*default=*/"false",
           "Emit the entry points of a shared library instead of main">,
    Option<"deviceProfile", "device-profile", "std::string",
           /*default=*/"\"\"",
           "Record each op's predicted time, and the schedule's makespan, "
           "by this device profile in the image (for --sim-timing=profile "
           "and the profile's predicted column); none without it">,
    Option<"ptxFile", "ptx-file", "std::string", /*default=*/"\"\"",
           "Also write the PTX of the GPU-placed fused groups' kernels to "
           "this file (tandem-compile --emit=ptx)">,
    Option<"vectorMath", "vector-math", "std::string", /*default=*/"\"\"",
           "How the generated CPU kernels compute exp, log and erf on their "
           "8-lane vectors: 'libmvec-avx2' calls glibc's vector math library "
           "(the model's object must be linked with -lmvec and run on a CPU "
           "with AVX2), '' (the default) libm once per lane">,
    Option<"testDropWait", "test-drop-wait", "int64_t", /*default=*/"-1",
           "For tests of the runtime's race detector: leave the N-th "
           "tandem.wait (from 0, in block order) out of the program">
  ];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect", "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // TANDEM_CONVERSION_PASSES_TD
