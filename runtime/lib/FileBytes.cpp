//===- FileBytes.cpp - whole-file reads and writes ------------------------===//

#include "FileBytes.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

bool tandem::rt::readFileBytes(const std::string &path,
                               std::vector<uint8_t> &bytes,
                               std::string &error) {
  FILE *file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  bytes.clear();
  uint8_t buffer[1 << 16];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    bytes.insert(bytes.end(), buffer, buffer + got);
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed) {
    error = "cannot read '" + path + "'";
    return false;
  }
  return true;
}

bool tandem::rt::writeFileBytes(const std::string &path,
                                const std::vector<uint8_t> &bytes,
                                std::string &error) {
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file) {
    error = "cannot create '" + path + "': " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  ok &= std::fclose(file) == 0;
  if (!ok)
    error = "cannot write '" + path + "': " + std::strerror(errno);
  return ok;
}
