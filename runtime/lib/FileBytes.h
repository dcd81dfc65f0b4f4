//===- FileBytes.h - whole-file reads and writes for the readers ----------===//

#ifndef TANDEM_RUNTIME_LIB_FILEBYTES_H
#define TANDEM_RUNTIME_LIB_FILEBYTES_H

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::rt {

/// Reads all of `path`; on failure sets `error` with the file and the cause.
bool readFileBytes(const std::string &path, std::vector<uint8_t> &bytes,
                   std::string &error);

/// Writes all of `bytes` to `path`; on failure sets `error`.
bool writeFileBytes(const std::string &path, const std::vector<uint8_t> &bytes,
                    std::string &error);

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_LIB_FILEBYTES_H
