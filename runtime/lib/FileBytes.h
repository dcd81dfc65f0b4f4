//===- FileBytes.h - the runtime's file reads and writes --------*- C++ -*-===//
//
// Inputs are opened only if they are regular files (a FIFO or a device is
// refused before anything blocks on it); outputs are written beside their
// paths and renamed into place once every one of them is written, so a run
// that fails leaves the earlier run's files whole.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_FILEBYTES_H
#define TANDEM_RUNTIME_LIB_FILEBYTES_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tandem::rt {

/// Opens `path` for reading if it is a regular file; returns the file
/// descriptor, or -1 with `error` naming the file and the cause.
int openRegularFile(const std::string &path, std::string &error);

/// Reads all of `path`; on failure sets `error` with the file and the cause.
bool readFileBytes(const std::string &path, std::vector<uint8_t> &bytes,
                   std::string &error);

/// Writes all of `bytes` to `path`; on failure sets `error`.
bool writeFileBytes(const std::string &path, const std::vector<uint8_t> &bytes,
                    std::string &error);

/// Whether `path` can be an output file: not a directory, and its folder
/// exists (or it is an existing stream). Sets `error` if not.
bool checkOutputPath(const std::string &path, std::string &error);

/// Output files written together: each is written to a temporary name beside
/// its path, and commit() renames them all into place. Files not committed
/// are removed. A path that is an existing stream (/dev/stdout, a FIFO) is
/// written directly.
class StagedWrites {
public:
  StagedWrites() = default;
  StagedWrites(const StagedWrites &) = delete;
  StagedWrites &operator=(const StagedWrites &) = delete;
  ~StagedWrites();

  enum class Target {
    RegularFile,   ///< a result: an existing stream there is an error
    StreamAllowed, ///< a report: /dev/stdout or a FIFO is written directly
  };

  /// Where to write `path`'s bytes; "" with `error` set if `path` cannot be
  /// an output (a directory, a missing folder). A symbolic link's target is
  /// what gets replaced. Until commit, an interrupt (SIGINT, SIGTERM)
  /// removes the staged file.
  std::string stage(const std::string &path, Target target,
                    std::string &error);
  /// Renames every staged file over its path.
  bool commit(std::string &error);

private:
  static void registerForSignals(const std::string &temp);
  static void unregisterForSignals(const std::string &temp);
  std::vector<std::pair<std::string, std::string>> staged; // (temp, path)
};

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_LIB_FILEBYTES_H
