//===- InitAll.h - everything a Tandem tool registers -----------*- C++ -*-===//
//
// One list of dialects and passes, used by every tool, so that no tool keeps
// its own.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_INITALL_H
#define TANDEM_INITALL_H

namespace mlir {
class DialectRegistry;

namespace tandem {

/// The tandem dialect, the upstream dialects Tandem IR uses, and the
/// interface models attached to upstream ops.
void registerAllDialects(DialectRegistry &registry);

/// Tandem's passes and the upstream passes its pipelines use.
void registerAllPasses();

} // namespace tandem
} // namespace mlir

#endif // TANDEM_INITALL_H
