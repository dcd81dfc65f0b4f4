//===- OutputPaths.h - how Tandem treats an output path ---------*- C++ -*-===//
//
// One rule for the compiler's tools and the compiled models alike: outputs
// are written to a temporary file beside their path and renamed over it,
// except where renaming would be wrong.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_OUTPUTPATHS_H
#define TANDEM_RUNTIME_OUTPUTPATHS_H

#include <string>

namespace tandem::rt {

/// Whether `path` must be written where it is rather than staged and
/// renamed: an existing file that is neither regular nor a directory (a
/// device, a FIFO), or anything under /dev or /proc (/dev/stdout may lead
/// to a regular file; renaming over it would replace the link).
bool isWrittenInPlace(const std::string &path);

/// The file a path names: a symbolic link's target (so that staging and
/// renaming replace the target, not the link), else the path itself.
std::string resolveSymlink(const std::string &path);

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_OUTPUTPATHS_H
