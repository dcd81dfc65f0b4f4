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
#include "mlir/Transforms/Passes.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/Conversion/Passes.h"
#include "tandem/Dialect/Tandem/Transforms/Passes.h"
#include "tandem/InitAll.h"
#include "tandem/Support/OutputFile.h"
#include "tandem/Support/SourceChecks.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

#include <cstdlib>

using namespace mlir;
namespace cl = llvm::cl;

// The tool's own options; --help hides the many LLVM registers globally.
static cl::OptionCategory compileCategory("tandem-compile options");

static cl::opt<std::string> inputFile(cl::Positional, cl::cat(compileCategory), cl::desc("<model.mlir>"),
                                      cl::Required);
static cl::opt<std::string> outputFile("o", cl::cat(compileCategory), cl::desc("Output file"),
                                       cl::value_desc("file"));
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
static cl::opt<std::string> objective(
    "objective", cl::cat(compileCategory),
    cl::desc("What auto and exact placement minimize: makespan (the "
             "schedule's, the queues running at once) or serial (the sum of "
             "every op and copy)"),
    cl::init("makespan"));
static cl::opt<int64_t> scheduleWindow(
    "schedule-window", cl::cat(compileCategory),
    cl::desc("Fix how many ops a queue may run ahead of the others that share "
             "its arena (a streamed weight's prefetch depth); -1: unbounded, "
             "0: chosen by the predicted makespan under the budget"),
    cl::init(0));
static cl::opt<int64_t> testDropWait(
    "test-drop-wait", cl::Hidden,
    cl::desc("Tests only: leave the N-th wait of the schedule out of the "
             "program (the race detector must catch it)"),
    cl::init(-1));
static cl::opt<bool> fuse(
    "fuse", cl::cat(compileCategory),
    cl::desc("Group elementwise chains into fused ops with generated kernels "
             "(--tandem-fuse) before placement; --fuse=false to compare"),
    cl::init(true));
static cl::opt<bool> foldAtLoad(
    "fold-at-load", cl::cat(compileCategory),
    cl::desc("Compute the subgraphs on weights once, when the weights are "
             "loaded (--tandem-fold-at-load); --fold-at-load=false to "
             "compare"),
    cl::init(true));
static cl::opt<std::string> vectorMath(
    "vector-math", cl::cat(compileCategory),
    cl::desc("How generated CPU kernels compute exp, log and erf: auto (the "
             "default: glibc's libmvec, 8 lanes a call, where this machine "
             "has AVX2), libmvec-avx2, or libm (once per lane: the same bits "
             "as the prebuilt kernels)"),
    cl::init("auto"));
static cl::opt<std::string> blas(
    "blas", cl::cat(compileCategory),
    cl::desc("The BLAS an executable or library links for the CPU's GEMMs: "
             "auto (the default: the one this build chose), openblas, or mkl "
             "(Intel's oneMKL, where this build found it); without the flag, "
             "$TANDEM_BLAS where it is set"),
    cl::init("auto"));
static cl::opt<std::string> emit("emit", cl::cat(compileCategory),
                                 cl::desc("exe, lib, obj, llvm, mlir or ptx "
                                          "(the GPU-placed fused groups' "
                                          "kernels; empty without any)"),
                                 cl::init("exe"));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "tandem-compile: error: " << message << "\n";
  return 1;
}

/// Writes the text output (--emit=mlir or llvm), whole or not at all.
static int writeText(llvm::function_ref<void(llvm::raw_ostream &)> write) {
  if (llvm::Error error = tandem::writeFileAtomically(outputFile, write))
    return fail(llvm::toString(std::move(error)));
  return 0;
}

/// LLVM's -O2 pipeline over the generated kernels. The straight line of
/// runtime calls (tandem_model_run, one call per op) gains nothing from it
/// and is the bulk of a large model: it is left as it is.
static void optimizeGeneratedKernels(llvm::Module &module,
                                     llvm::TargetMachine &machine) {
  bool anyKernel = false;
  for (llvm::Function &function : module)
    if (!function.isDeclaration() &&
        function.getName().starts_with("tandem_fused_"))
      anyKernel = true;
    else if (!function.isDeclaration())
      function.addFnAttr(llvm::Attribute::OptimizeNone),
          function.addFnAttr(llvm::Attribute::NoInline);
  if (!anyKernel)
    return;
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2)
      .run(module, modules);
}

static LogicalResult emitObject(llvm::Module &module, StringRef path,
                                std::string &error) {
  std::string triple = llvm::sys::getDefaultTargetTriple();
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return failure();
  llvm::TargetOptions options;
  // The model is built for the machine that compiles it, as a native
  // executable is: the generated kernels use its vector units.
  llvm::SubtargetFeatures features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature.first(), feature.second);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(), options,
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(triple);
  optimizeGeneratedKernels(module, *machine);
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
  os.close();
  if (os.has_error()) {
    error = "cannot write the object file: " + os.error().message();
    os.clear_error();
    return failure();
  }
  return success();
}

/// The runtime's archives, found next to this executable: <dir>/../lib, in
/// the build tree and in an installed (or moved) prefix alike. `anchor` is
/// any function of this program, for getMainExecutable.
static LogicalResult findRuntime(const char *argv0, void *anchor,
                                 std::vector<std::string> &archives,
                                 std::string &error) {
  std::string self = llvm::sys::fs::getMainExecutable(argv0, anchor);
  SmallString<256> dir(self);
  llvm::sys::path::remove_filename(dir); // bin
  llvm::sys::path::remove_filename(dir); // the prefix
  llvm::sys::path::append(dir, "lib");
  for (StringRef name :
       {TANDEM_RUNTIME_LIBRARY_NAME, TANDEM_RUNTIME_IO_LIBRARY_NAME,
        TANDEM_BLAS_CORE_LIBRARY_NAME}) {
    SmallString<256> archive(dir);
    llvm::sys::path::append(archive, name);
    if (!llvm::sys::fs::is_regular_file(archive)) {
      error = "the runtime library " + archive.str().str() +
              " is missing: tandem-compile links models with the runtime "
              "installed beside it (<prefix>/bin/tandem-compile, "
              "<prefix>/lib/" + name.str() + ")";
      return failure();
    }
    archives.push_back(archive.str().str());
  }
  return success();
}

/// Whether the generated kernels call glibc's vector math library for exp,
/// log and erf (--vector-math): by default where this machine (which the
/// model is built for, as for its vector units) has AVX2 and the toolchain
/// has libmvec to link.
static bool useLibmvec() {
  if (vectorMath == "libm")
    return false;
#ifdef TANDEM_HAVE_LIBMVEC
  if (vectorMath == "libmvec-avx2")
    return true;
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return features.lookup("avx2") && features.lookup("fma");
#else
  return false;
#endif
}

/// Links `object` with the runtime (`archives`) into `output`; the linker's
/// messages go to `log`, and the first of them into `error` when it fails.
static LogicalResult link(StringRef object, StringRef output, bool shared,
                          const std::vector<std::string> &archives,
                          StringRef log, std::string &error) {
  llvm::ErrorOr<std::string> driver = llvm::sys::findProgramByName("c++");
  if (!driver) {
    error = "no C++ compiler driver (c++) on PATH to link with";
    return failure();
  }
  std::vector<std::string> args = {*driver, object.str(), "-o", output.str()};
  if (shared)
    args.push_back("-shared");
  args.insert(args.end(), archives.begin(), archives.end());
  // --blas (checked in main): OpenBLAS from the loader's path, or oneMKL's
  // libmkl_rt found through the rpath (pip installs it off that path).
  std::string library = blas == "auto" ? std::string(TANDEM_DEFAULT_BLAS) : blas.getValue();
  SmallVector<StringRef> extraFlags;
  if (library == "mkl") {
    args.push_back(TANDEM_MKL_LIBRARY);
    args.push_back(
        ("-Wl,-rpath," + llvm::sys::path::parent_path(TANDEM_MKL_LIBRARY))
            .str());
  } else {
    StringRef(TANDEM_OPENBLAS_LIBRARIES).split(extraFlags, ';', -1, false);
  }
  StringRef(TANDEM_CUDA_LINK_FLAGS).split(extraFlags, '|', -1, false);
  StringRef(TANDEM_SANITIZER_LINK_FLAGS).split(extraFlags, '|', -1, false);
  for (StringRef flag : extraFlags)
    args.push_back(flag.str());
  args.push_back("-lpthread");
  if (useLibmvec())
    args.push_back("-lmvec");
  args.push_back("-lm");
  std::vector<StringRef> argv(args.begin(), args.end());
  std::string message;
  std::optional<StringRef> redirects[] = {std::nullopt, log, log};
  int status = llvm::sys::ExecuteAndWait(*driver, argv, std::nullopt,
                                         redirects, 0, 0, &message);
  if (status == 0)
    return success();
  // The linker's first lines say why (a full disk, a missing library).
  error = "linking failed";
  if (!message.empty())
    error += ": " + message;
  if (auto text = llvm::MemoryBuffer::getFile(log)) {
    SmallVector<StringRef> lines;
    (*text)->getBuffer().split(lines, '\n', /*MaxSplit=*/4, false);
    for (StringRef line : lines)
      error += "\n  " + line.take_front(300).str();
  }
  return failure();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(compileCategory);
  std::string usageErrors;
  llvm::raw_string_ostream usageStream(usageErrors);
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "tandem-compile: compile a Tandem model "
                                   "into a native executable\n",
                                   &usageStream)) {
    // One "error:" line, like every other error of the tool.
    llvm::SmallVector<StringRef> lines;
    StringRef(usageErrors).split(lines, '\n', -1, false);
    std::string message;
    for (StringRef line : lines) {
      line.consume_front("tandem-compile: ");
      message += (message.empty() ? "" : " ") + line.trim().str();
    }
    return fail(message);
  }
  if (!outputFile.getNumOccurrences())
    return fail("no output file: name it with -o FILE");
  for (auto *option : {&gpuMemory, &report})
    if (option->getNumOccurrences() && option->empty())
      return fail("--" + option->ArgStr + " is empty");
  if (emit != "exe" && emit != "lib" && emit != "obj" && emit != "llvm" &&
      emit != "mlir" && emit != "ptx")
    return fail("unknown --emit '" + emit +
                "': expected exe, lib, obj, llvm, mlir or ptx");
  // A script that compiles binaries for another machine (bench/gpu's) sets
  // TANDEM_BLAS once for every compile it starts.
  if (!blas.getNumOccurrences())
    if (const char *fromEnvironment = std::getenv("TANDEM_BLAS"))
      blas = fromEnvironment;
  if (blas != "auto" && blas != "openblas" && blas != "mkl")
    return fail("unknown --blas '" + blas +
                "': expected auto, openblas or mkl");
  if (blas == "mkl" && StringRef(TANDEM_MKL_LIBRARY).empty())
    return fail("--blas=mkl: this build found no oneMKL (libmkl_rt) to link; "
                "install it (pip install mkl) and configure the build again");
  if (vectorMath != "auto" && vectorMath != "libm" &&
      vectorMath != "libmvec-avx2")
    return fail("unknown --vector-math '" + vectorMath +
                "': expected auto, libmvec-avx2 or libm");
#ifndef TANDEM_HAVE_LIBMVEC
  if (vectorMath == "libmvec-avx2")
    return fail("--vector-math=libmvec-avx2: this build found no libmvec "
                "(glibc's vector math library) to link");
#endif

  // Flags and the output path are checked before the model is read, so
  // their errors come first and alone.
  bool textOutput = emit == "mlir" || emit == "llvm";
  if (llvm::Error error = tandem::checkOutputPath(
          outputFile, textOutput ? tandem::OutputKind::Text
                                 : tandem::OutputKind::Binary))
    return fail(llvm::toString(std::move(error)));
  if (!report.empty())
    if (llvm::Error error = tandem::checkOutputPath(report))
      return fail("--report: " + llvm::toString(std::move(error)));
  // No output may replace the model it is compiled from, or another output.
  if (llvm::sys::fs::equivalent(inputFile, outputFile))
    return fail("-o '" + outputFile + "' is the model being compiled: name "
                "another file");
  if (!report.empty() && llvm::sys::fs::equivalent(inputFile, report))
    return fail("--report '" + report + "' is the model being compiled: "
                "name another file");
  if (!report.empty() &&
      (report == outputFile || llvm::sys::fs::equivalent(report, outputFile)))
    return fail("--report and -o name the same file '" + report + "'");
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
  if (llvm::Error error = tandem::checkSourceForKnownParserBugs(
          file->getBuffer(), file->getBufferIdentifier())) {
    llvm::errs() << llvm::toString(std::move(error)) << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  // Executables and libraries link the runtime: find it before compiling.
  std::vector<std::string> runtimeArchives;
  std::string runtimeError;
  if ((emit == "exe" || emit == "lib") &&
      failed(findRuntime(argv[0], reinterpret_cast<void *>(&findRuntime),
                         runtimeArchives, runtimeError)))
    return fail(runtimeError);

  PassManager pm(&context);
  tandem::PlacementPipelineOptions options;
  options.gpuMemory = gpuMemory.getValue();
  options.deviceProfile = deviceProfile.getValue();
  options.strategy = strategy.getValue();
  options.report = report.getValue();
  options.scheduleWindow = scheduleWindow.getValue();
  options.objective = objective.getValue();
  // Duplicates merged and folds done first (fused or not, the same IR),
  // so that groups form over the ops that will run.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (foldAtLoad)
    pm.addPass(tandem::createFoldAtLoad());
  if (fuse)
    pm.addPass(tandem::createFuse());
  tandem::buildPlacementPipeline(pm, options);
  tandem::ConvertTandemToLLVMOptions lowering;
  lowering.library = emit == "lib";
  lowering.testDropWait = testDropWait.getValue();
  lowering.deviceProfile = options.deviceProfile;
  if (emit == "ptx")
    lowering.ptxFile = outputFile.getValue();
  if (useLibmvec())
    lowering.vectorMath = "libmvec-avx2";
  pm.addPass(tandem::createConvertTandemToLLVM(lowering));
  if (failed(pm.run(*module)))
    return 1;
  if (emit == "mlir")
    return writeText([&](llvm::raw_ostream &os) { module->print(os); });
  if (emit == "ptx")
    return 0; // written by the lowering

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, "tandem_model");
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  if (emit == "llvm")
    return writeText(
        [&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); });

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // The output appears whole or not at all: it is written beside its path
  // and renamed over it; the object file and the linker's messages live in
  // private temporary files, removed at the end.
  llvm::Expected<tandem::StagedOutput> staged =
      tandem::StagedOutput::create(outputFile);
  if (!staged)
    return fail(llvm::toString(staged.takeError()));
  std::string error;
  if (emit == "obj") {
    if (failed(emitObject(*llvmModule, staged->getTempPath(), error)))
      return fail(error);
  } else {
    // Private temporary files (removed at the end, or on an interrupt).
    llvm::SmallString<128> object, log;
    for (auto [suffix, path] : {std::pair{"o", &object}, {"log", &log}}) {
      if (std::error_code code = llvm::sys::fs::createTemporaryFile(
              "tandem-compile", suffix, *path))
        return fail("cannot make a temporary file: " + code.message());
      llvm::sys::RemoveFileOnSignal(*path);
    }
    auto removeScratch = llvm::make_scope_exit([&] {
      for (llvm::SmallString<128> *path : {&object, &log}) {
        llvm::sys::fs::remove(*path);
        llvm::sys::DontRemoveFileOnSignal(*path);
      }
    });
    if (failed(emitObject(*llvmModule, object, error)) ||
        failed(link(object, staged->getTempPath(), emit == "lib",
                    runtimeArchives, log, error)))
      return fail(error);
  }
  if (llvm::Error error = staged->commit())
    return fail(llvm::toString(std::move(error)));
  return 0;
}