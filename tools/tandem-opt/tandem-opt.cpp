//===- tandem-opt.cpp - the Tandem optimizer driver -----------------------===//
//
// MlirOptMain with every Tandem dialect and pass registered, plus the
// upstream ones the pipeline uses.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "tandem/InitAll.h"

#include "tandem/Support/SourceChecks.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

/// MLIR's pass-option parser reads "gpu-memory= 4GiB" as an empty value
/// and an option named "4GiB"; say what is wrong instead.
static bool hasSpaceAfterEquals(llvm::StringRef arg) {
  size_t options = arg.find('=');
  if (!arg.starts_with("--") || options == llvm::StringRef::npos)
    return false;
  llvm::StringRef rest = arg.drop_front(options + 1);
  for (size_t at = rest.find("= "); at != llvm::StringRef::npos;
       at = rest.find("= ", at + 1)) {
    llvm::StringRef key = rest.take_front(at).rsplit(' ').second;
    llvm::errs() << "tandem-opt: error: in '" << arg << "': option '"
                 << (key.empty() ? rest.take_front(at) : key)
                 << "' has a space after its '=': write key=value with no "
                    "space, and quote values that have spaces ('key=\"a b\"')\n";
    return true;
  }
  return false;
}

/// Input files (positional arguments) that MLIR 19 would crash on after
/// parsing them; standard input is not checked.
static bool hasKnownParserBug(llvm::StringRef arg) {
  if (arg.starts_with("-"))
    return false;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(arg);
  if (!file)
    return false; // MlirOptMain reports it
  if (llvm::Error error = mlir::tandem::checkSourceForKnownParserBugs(
          (*file)->getBuffer(), arg)) {
    llvm::errs() << llvm::toString(std::move(error)) << "\n";
    return true;
  }
  return false;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    bool isOutput = llvm::StringRef(argv[i - 1]) == "-o";
    if (hasSpaceAfterEquals(argv[i]) ||
        (!isOutput && hasKnownParserBug(argv[i])))
      return 1;
  }
  mlir::DialectRegistry registry;
  mlir::tandem::registerAllDialects(registry);
  mlir::tandem::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Tandem optimizer driver: the tandem dialect and its passes\n",
      registry));
}
