//===- OutputFile.cpp - files written whole or not at all -----------------===//

#include "tandem/Support/OutputFile.h"

#include "tandem/runtime/OutputPaths.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"

using namespace mlir;
using namespace mlir::tandem;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error mlir::tandem::checkOutputPath(llvm::StringRef path,
                                          OutputKind kind) {
  if (path.empty())
    return makeError("no output file named");
  if (path == "-" && kind == OutputKind::Binary)
    return makeError("cannot write a binary to standard output ('-'): name "
                     "a file");
  if (llvm::sys::fs::is_directory(path))
    return makeError("cannot write '" + path + "': it is a directory");
  if (::tandem::rt::isWrittenInPlace(path.str())) {
    if (kind == OutputKind::Text)
      return llvm::Error::success();
    return makeError("cannot write '" + path + "': it is not a regular file");
  }
  llvm::StringRef folder = llvm::sys::path::parent_path(path);
  if (!folder.empty() && !llvm::sys::fs::is_directory(folder))
    return makeError("cannot write '" + path + "': no folder '" + folder +
                     "'");
  return llvm::Error::success();
}

llvm::Expected<StagedOutput> StagedOutput::create(llvm::StringRef given) {
  if (llvm::Error error = checkOutputPath(given, OutputKind::Binary))
    return std::move(error);
  std::string path = ::tandem::rt::resolveSymlink(given.str());
  // Beside the output, so the final rename stays on one file system; a
  // short name of its own, so a path near the length limit still works.
  llvm::SmallString<256> model = llvm::sys::path::parent_path(path);
  llvm::sys::path::append(model, ".tandem-partial-%%%%%%%%");
  llvm::SmallString<256> temp;
  int fd;
  if (std::error_code code = llvm::sys::fs::createUniqueFile(model, fd, temp))
    return makeError("cannot write '" + given + "': " + code.message());
  llvm::sys::fs::closeFile(fd);
  // An interrupted tool leaves no partial file behind.
  llvm::sys::RemoveFileOnSignal(temp);
  return StagedOutput(path, temp.str().str());
}

StagedOutput::StagedOutput(StagedOutput &&other)
    : path(std::move(other.path)), tempPath(std::move(other.tempPath)),
      done(other.done) {
  other.done = true;
}

StagedOutput::~StagedOutput() {
  if (done)
    return;
  llvm::sys::fs::remove(tempPath);
  llvm::sys::DontRemoveFileOnSignal(tempPath);
}

llvm::Error StagedOutput::commit() {
  done = true;
  llvm::sys::DontRemoveFileOnSignal(tempPath);
  if (std::error_code code = llvm::sys::fs::rename(tempPath, path)) {
    llvm::sys::fs::remove(tempPath);
    return makeError("cannot write '" + path + "': " + code.message());
  }
  return llvm::Error::success();
}

/// Writes `file` with `write`; errors name `path`, the file the user asked
/// for.
static llvm::Error
writeTo(llvm::StringRef file, llvm::StringRef path,
        llvm::function_ref<void(llvm::raw_ostream &)> write) {
  std::error_code code;
  llvm::raw_fd_ostream os(file, code, llvm::sys::fs::OF_None);
  if (code)
    return makeError("cannot write '" + path + "': " + code.message());
  write(os);
  os.close();
  if (os.has_error()) {
    code = os.error();
    // Reported here; the stream must not abort the process on its own.
    os.clear_error();
    return makeError("cannot write '" + path + "': " + code.message());
  }
  return llvm::Error::success();
}

llvm::Error mlir::tandem::writeFileAtomically(
    llvm::StringRef path,
    llvm::function_ref<void(llvm::raw_ostream &)> write) {
  if (path == "-") {
    write(llvm::outs());
    llvm::outs().flush();
    if (llvm::outs().has_error()) {
      std::error_code code = llvm::outs().error();
      llvm::outs().clear_error();
      return makeError("cannot write to standard output: " + code.message());
    }
    return llvm::Error::success();
  }
  if (llvm::Error error = checkOutputPath(path, OutputKind::Text))
    return error;
  if (::tandem::rt::isWrittenInPlace(path.str()))
    return writeTo(path, path, write);
  llvm::Expected<StagedOutput> staged = StagedOutput::create(path);
  if (!staged)
    return staged.takeError();
  if (llvm::Error error = writeTo(staged->getTempPath(), path, write))
    return error;
  return staged->commit();
}
