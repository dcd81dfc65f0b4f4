//===- SourceChecks.h - input MLIR 19's parser mishandles -------*- C++ -*-===//
//
// Text that the MLIR 19 parser accepts but that crashes MLIR afterwards
// (fixed upstream after LLVM 19): the tools check their input for it before
// parsing, and report it as the parse error it should have been.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SUPPORT_SOURCECHECKS_H
#define TANDEM_SUPPORT_SOURCECHECKS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlir::tandem {

/// An error "NAME:LINE:COL: error: ..." if `text` holds an `array<i1: ...>`
/// with an element other than true or false: MLIR 19 parses an integer into a
/// bool array that crashes the printer (llvm-project issue 173373).
llvm::Error checkSourceForKnownParserBugs(llvm::StringRef text,
                                          llvm::StringRef name);

} // namespace mlir::tandem

#endif // TANDEM_SUPPORT_SOURCECHECKS_H
