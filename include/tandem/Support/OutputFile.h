//===- OutputFile.h - files written whole or not at all ---------*- C++ -*-===//
//
// Every file Tandem's tools write (reports, pictures, profiles, compiled
// models) goes through here: the path is checked before any work (not a
// directory; its folder exists), the bytes go to a temporary file beside it,
// and only a file written and closed without error is renamed over the path.
// A full disk is an error naming the file, never a half-written file or a
// crash. Text may also go to a stream that already exists (/dev/null,
// /dev/stdout, a FIFO), written directly; a binary never does.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SUPPORT_OUTPUTFILE_H
#define TANDEM_SUPPORT_OUTPUTFILE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::tandem {

enum class OutputKind {
  /// Only a regular file (a compiled model, an object file).
  Binary,
  /// A regular file, or an existing stream such as /dev/null or a FIFO.
  Text,
};

/// An error unless `path` can be written as an output of `kind`: it is not
/// a directory, and its folder exists.
llvm::Error checkOutputPath(llvm::StringRef path,
                            OutputKind kind = OutputKind::Text);

/// A temporary file beside an output path, renamed over it by commit();
/// removed if never committed.
class StagedOutput {
public:
  static llvm::Expected<StagedOutput> create(llvm::StringRef path);
  StagedOutput(StagedOutput &&other);
  StagedOutput &operator=(StagedOutput &&) = delete;
  ~StagedOutput();

  /// Where to write.
  llvm::StringRef getTempPath() const { return tempPath; }
  /// Renames the temporary file over the output path.
  llvm::Error commit();

private:
  StagedOutput(std::string path, std::string tempPath)
      : path(std::move(path)), tempPath(std::move(tempPath)) {}
  std::string path, tempPath;
  bool done = false;
};

/// Writes `path` whole or not at all with `write`; "-" writes to standard
/// output, and an existing stream is written directly. Errors name the file and the cause (e.g. no space left).
llvm::Error writeFileAtomically(llvm::StringRef path,
                                llvm::function_ref<void(llvm::raw_ostream &)>
                                    write);

} // namespace mlir::tandem

#endif // TANDEM_SUPPORT_OUTPUTFILE_H
