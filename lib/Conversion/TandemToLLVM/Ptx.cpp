//===- Ptx.cpp - GPU kernels of the LLVM dialect to PTX -------------------===//

#include "Ptx.h"

#include "FusedKernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/Internalize.h"

#include <mutex>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

using namespace mlir;
using namespace mlir::tandem;

namespace {

constexpr llvm::StringLiteral kTriple = "nvptx64-nvidia-cuda";

/// Where the CUDA toolkit's libdevice is: $TANDEM_LIBDEVICE, else the
/// toolkit Tandem was built with.
std::string libdevicePath() {
  if (std::optional<std::string> path =
          llvm::sys::Process::GetEnv("TANDEM_LIBDEVICE"))
    return *path;
#ifdef TANDEM_LIBDEVICE_PATH
  return TANDEM_LIBDEVICE_PATH;
#else
  return "";
#endif
}

/// Math functions as libdevice names them: what nvcc calls for expf & co.
void callLibdevice(ModuleOp module) {
  SmallVector<Operation *> calls;
  module.walk([&](Operation *op) {
    if (isa<math::ExpOp, math::LogOp, math::ErfOp, math::PowFOp>(op))
      calls.push_back(op);
  });
  OpBuilder builder(module.getContext());
  for (Operation *op : calls) {
    StringRef name = llvm::TypeSwitch<Operation *, StringRef>(op)
                         .Case([](math::ExpOp) { return "__nv_expf"; })
                         .Case([](math::LogOp) { return "__nv_logf"; })
                         .Case([](math::ErfOp) { return "__nv_erff"; })
                         .Case([](math::PowFOp) { return "__nv_powf"; });
    auto type = builder.getFunctionType(op->getOperandTypes(),
                                        op->getResultTypes());
    if (!module.lookupSymbol(name)) {
      builder.setInsertionPointToStart(module.getBody());
      builder.create<func::FuncOp>(op->getLoc(), name, type).setPrivate();
    }
    builder.setInsertionPoint(op);
    Value result = builder
                       .create<func::CallOp>(op->getLoc(), name,
                                             op->getResultTypes(),
                                             op->getOperands())
                       .getResult(0);
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
  }
}

} // namespace

FailureOr<std::string> tandem::compileToPtx(ModuleOp module) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  callLibdevice(module);
  if (failed(lowerGeneratedKernelsToLLVM(module)))
    return failure();

  MLIRContext *context = module.getContext();
  registerBuiltinDialectTranslation(*context);
  registerLLVMDialectTranslation(*context);
  registerNVVMDialectTranslation(*context);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "tandem_gpu_kernels");
  if (!llvmModule)
    return module.emitError("cannot translate the generated GPU kernels to "
                            "LLVM IR");

  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(kTriple.str(), error);
  if (!target)
    return module.emitError("LLVM has no NVPTX target for the generated GPU "
                            "kernels: ")
           << error;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      kTriple.str(), kPtxArchitecture.str(), "", llvm::TargetOptions(),
      std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  llvmModule->setTargetTriple(kTriple.str());
  llvmModule->setDataLayout(machine->createDataLayout());

  // libdevice's math functions, the ones the kernels call, as nvcc links
  // them; nothing of it is needed without a call.
  bool callsLibdevice = llvm::any_of(*llvmModule, [](llvm::Function &f) {
    return f.isDeclaration() && f.getName().starts_with("__nv_");
  });
  if (callsLibdevice) {
    std::string path = libdevicePath();
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
        path.empty() ? std::make_error_code(std::errc::no_such_file_or_directory)
                     : llvm::MemoryBuffer::getFile(path);
    if (!file)
      return module.emitError()
             << "a fused group on the GPU calls a math function, which "
                "needs the CUDA toolkit's libdevice: cannot read '"
             << (path.empty() ? "libdevice.10.bc" : path)
             << "' (set TANDEM_LIBDEVICE to its path)";
    llvm::Expected<std::unique_ptr<llvm::Module>> libdevice =
        llvm::parseBitcodeFile((*file)->getMemBufferRef(), llvmContext);
    if (!libdevice)
      return module.emitError() << "cannot read libdevice '" << path
                                << "': " << llvm::toString(libdevice.takeError());
    (*libdevice)->setTargetTriple(kTriple.str());
    (*libdevice)->setDataLayout(llvmModule->getDataLayout());
    if (llvm::Linker::linkModules(*llvmModule, std::move(*libdevice),
                                  llvm::Linker::LinkOnlyNeeded))
      return module.emitError("cannot link libdevice into the generated GPU "
                              "kernels");
  }
  // The kernels are the module's entry points; what libdevice brought is
  // internal, so the optimizer inlines it and drops the rest.
  llvm::StringSet<> kernels;
  for (llvm::Function &function : *llvmModule)
    if (!function.isDeclaration() &&
        function.getName().starts_with("tandem_fused_"))
      kernels.insert(function.getName());
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  // The NVPTX target adds NVVMReflect, which settles libdevice's
  // __nvvm_reflect("__CUDA_FTZ") queries (0: denormals kept, as on the CPU).
  llvm::PassBuilder builder(machine.get());
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::ModulePassManager passes;
  passes.addPass(llvm::InternalizePass([&](const llvm::GlobalValue &value) {
    return kernels.contains(value.getName());
  }));
  passes.addPass(
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3));
  passes.run(*llvmModule, modules);

  llvm::SmallString<0> ptx;
  {
    llvm::raw_svector_ostream stream(ptx);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, stream, nullptr,
                                     llvm::CodeGenFileType::AssemblyFile))
      return module.emitError("the NVPTX target cannot emit PTX");
    codegen.run(*llvmModule);
  }
  return std::string(ptx.str());
}
