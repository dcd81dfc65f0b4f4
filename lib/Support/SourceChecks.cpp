//===- SourceChecks.cpp - input MLIR 19's parser mishandles ---------------===//

#include "tandem/Support/SourceChecks.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

using namespace mlir;

/// "NAME:LINE:COL" of byte `at` of `text`.
static std::string locationOf(llvm::StringRef text, size_t at,
                              llvm::StringRef name) {
  llvm::StringRef before = text.take_front(at);
  size_t line = before.count('\n') + 1;
  size_t lineStart = before.rfind('\n');
  size_t column = lineStart == llvm::StringRef::npos ? at + 1 : at - lineStart;
  return (name + ":" + llvm::Twine(line) + ":" + llvm::Twine(column)).str();
}

llvm::Error tandem::checkSourceForKnownParserBugs(llvm::StringRef text,
                                                  llvm::StringRef name) {
  for (size_t at = text.find("array<"); at != llvm::StringRef::npos;
       at = text.find("array<", at + 1)) {
    llvm::StringRef rest = text.drop_front(at + 6).ltrim();
    if (!rest.consume_front("i1"))
      continue;
    rest = rest.ltrim();
    if (!rest.consume_front(":"))
      continue;
    llvm::StringRef elements = rest.take_until([](char c) { return c == '>'; });
    llvm::SmallVector<llvm::StringRef> parts;
    elements.split(parts, ',');
    for (llvm::StringRef part : parts) {
      part = part.trim();
      if (part == "true" || part == "false")
        continue;
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          locationOf(text, at, name) + ": error: array<i1: ...> elements must "
          "be true or false, got '" + part.take_front(40) + "'");
    }
  }
  return llvm::Error::success();
}
