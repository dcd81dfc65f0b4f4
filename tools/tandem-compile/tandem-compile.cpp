//===- tandem-compile.cpp - a model to a native executable ----------------===//
//
// tandem-compile model.mlir -o model [--gpu-memory=4GiB] [--device-profile=h200]
//   [--strategy=auto] [--report=placement.json] [--emit=exe|lib|obj|llvm|mlir]
//
// Parses and verifies the model, runs the placement pipeline, lowers to the
// LLVM dialect (calls into the runtime), translates to LLVM IR, emits an
// object with LLVM's TargetMachine in process and links it with the runtime.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/Conversion/Passes.h"
#include "tandem/Dialect/Tandem/Transforms/Passes.h"
#include "tandem/InitAll.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
namespace cl = llvm::cl;

// The tool's own options; --help hides the many LLVM registers globally.
static cl::OptionCategory compileCategory("tandem-compile options");

static cl::opt<std::string> inputFile(cl::Positional, cl::cat(compileCategory), cl::desc("<model.mlir>"),
                                      cl::Required);
static cl::opt<std::string> outputFile("o", cl::cat(compileCategory), cl::desc("Output file"),
                                       cl::value_desc("file"), cl::Required);
static cl::opt<std::string> gpuMemory("gpu-memory", cl::cat(compileCategory),
                                      cl::desc("GPU memory budget (e.g. 4GiB); "
                                               "default: the profile's"),
                                      cl::init(""));
static cl::opt<std::string>
    deviceProfile("device-profile", cl::cat(compileCategory),
                  cl::desc("Builtin profile or JSON path"), cl::init("h200"));
static cl::opt<std::string> strategy("strategy", cl::cat(compileCategory), cl::desc("Placement strategy"),
                                     cl::init("auto"));
static cl::opt<std::string> report("report", cl::cat(compileCategory),
                                   cl::desc("Write the placement report (JSON)"),
                                   cl::init(""));
static cl::opt<std::string> emit("emit", cl::cat(compileCategory),
                                 cl::desc("exe, lib, obj, llvm or mlir"),
                                 cl::init("exe"));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "tandem-compile: error: " << message << "\n";
  return 1;
}

static LogicalResult emitObject(llvm::Module &module, StringRef path,
                                std::string &error) {
  std::string triple = llvm::sys::getDefaultTargetTriple();
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return failure();
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "generic", "", options, llvm::Reloc::PIC_));
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(triple);
  std::error_code code;
  llvm::raw_fd_ostream os(path, code, llvm::sys::fs::OF_None);
  if (code) {
    error = "cannot write '" + path.str() + "': " + code.message();
    return failure();
  }
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return failure();
  }
  passes.run(module);
  return success();
}

static LogicalResult link(StringRef object, StringRef output, bool shared,
                          std::string &error) {
  llvm::ErrorOr<std::string> driver = llvm::sys::findProgramByName("c++");
  if (!driver) {
    error = "no C++ compiler driver (c++) on PATH to link with";
    return failure();
  }
  std::vector<std::string> args = {*driver, object.str(), "-o", output.str()};
  if (shared)
    args.push_back("-shared");
  args.push_back(TANDEM_RUNTIME_LIBRARY);
  args.push_back(TANDEM_RUNTIME_IO_LIBRARY);
  SmallVector<StringRef> blas;
  StringRef(TANDEM_BLAS_LIBRARIES).split(blas, ';', -1, false);
  for (StringRef library : blas)
    args.push_back(library.str());
  SmallVector<StringRef> extraFlags;
  StringRef(TANDEM_CUDA_LINK_FLAGS).split(extraFlags, '|', -1, false);
  StringRef(TANDEM_SANITIZER_LINK_FLAGS).split(extraFlags, '|', -1, false);
  for (StringRef flag : extraFlags)
    args.push_back(flag.str());
  args.push_back("-lpthread");
  args.push_back("-lm");
  std::vector<StringRef> argv(args.begin(), args.end());
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*driver, argv, std::nullopt, {}, 0, 0,
                                         &message);
  if (status != 0) {
    error = "linking failed" + (message.empty() ? "" : ": " + message);
    return failure();
  }
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(compileCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "tandem-compile: compile a Tandem model into a "
                              "native executable\n");
  if (emit != "exe" && emit != "lib" && emit != "obj" && emit != "llvm" &&
      emit != "mlir")
    return fail("unknown --emit '" + emit +
                "': expected exe, lib, obj, llvm or mlir");

  // Flags are checked before the model is read, so their errors come first
  // and alone.
  if (!gpuMemory.empty())
    if (llvm::Expected<int64_t> bytes = tandem::parseByteSize(gpuMemory); !bytes)
      return fail("--gpu-memory: " + llvm::toString(bytes.takeError()));
  if (llvm::Expected<tandem::DeviceProfile> profile =
          tandem::loadDeviceProfile(deviceProfile);
      !profile)
    return fail("--device-profile: " + llvm::toString(profile.takeError()));

  DialectRegistry registry;
  tandem::registerAllDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  tandem::registerAllPasses();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // A failing pass must not dump the whole model after its message.
  context.printOpOnDiagnostic(false);

  std::string openError;
  std::unique_ptr<llvm::MemoryBuffer> file =
      openInputFile(inputFile, &openError);
  if (!file)
    return fail(openError);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  PassManager pm(&context);
  tandem::PlacementPipelineOptions options;
  options.gpuMemory = gpuMemory.getValue();
  options.deviceProfile = deviceProfile.getValue();
  options.strategy = strategy.getValue();
  options.report = report.getValue();
  tandem::buildPlacementPipeline(pm, options);
  tandem::LowerToLLVMOptions lowering;
  lowering.library = emit == "lib";
  pm.addPass(tandem::createLowerToLLVM(lowering));
  if (failed(pm.run(*module)))
    return 1;
  if (emit == "mlir") {
    std::error_code code;
    llvm::raw_fd_ostream os(outputFile, code);
    if (code)
      return fail("cannot write '" + outputFile + "': " + code.message());
    module->print(os);
    return 0;
  }

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, "tandem_model");
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  if (emit == "llvm") {
    std::error_code code;
    llvm::raw_fd_ostream os(outputFile, code);
    if (code)
      return fail("cannot write '" + outputFile + "': " + code.message());
    llvmModule->print(os, nullptr);
    return 0;
  }

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string error;
  std::string object = emit == "obj" ? outputFile.getValue()
                                     : outputFile.getValue() + ".o";
  if (failed(emitObject(*llvmModule, object, error)))
    return fail(error);
  if (emit == "obj")
    return 0;
  if (failed(link(object, outputFile, emit == "lib", error)))
    return fail(error);
  llvm::sys::fs::remove(object);
  return 0;
}
