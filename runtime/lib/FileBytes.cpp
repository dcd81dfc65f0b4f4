//===- FileBytes.cpp - the runtime's file reads and writes ----------------===//

#include "FileBytes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

using namespace tandem::rt;

int tandem::rt::openRegularFile(const std::string &path, std::string &error) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer before it is
  // refused. (It changes nothing for a regular file.)
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return -1;
  }
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    error = "'" + path + "' is not a regular file";
    ::close(fd);
    return -1;
  }
  return fd;
}

bool tandem::rt::readFileBytes(const std::string &path,
                               std::vector<uint8_t> &bytes,
                               std::string &error) {
  int fd = openRegularFile(path, error);
  if (fd < 0)
    return false;
  bytes.clear();
  uint8_t buffer[1 << 16];
  while (true) {
    ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      error = "cannot read '" + path + "': " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (got == 0)
      break;
    bytes.insert(bytes.end(), buffer, buffer + got);
  }
  ::close(fd);
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
  ok &= std::fflush(file) == 0;
  int cause = errno;
  ok &= std::fclose(file) == 0;
  if (!ok)
    error = "cannot write '" + path + "': " +
            std::strerror(cause ? cause : errno);
  return ok;
}

static bool isStream(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode) &&
         !S_ISDIR(info.st_mode);
}

bool tandem::rt::checkOutputPath(const std::string &path,
                                 std::string &error) {
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    error = "cannot write '" + path + "': it is a directory";
    return false;
  }
  if (isStream(path))
    return true;
  size_t slash = path.rfind('/');
  std::string folder = slash == std::string::npos ? "." : path.substr(0, slash);
  if (folder.empty())
    folder = "/";
  if (stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    error = "cannot write '" + path + "': no folder '" + folder + "'";
    return false;
  }
  return true;
}

std::string StagedWrites::stage(const std::string &path, std::string &error) {
  if (!checkOutputPath(path, error))
    return "";
  if (isStream(path))
    return path;
  std::string temp = path + ".partial-" + std::to_string(getpid()) + "-" +
                     std::to_string(staged.size());
  staged.emplace_back(temp, path);
  return temp;
}

bool StagedWrites::commit(std::string &error) {
  for (auto &[temp, path] : staged)
    if (std::rename(temp.c_str(), path.c_str()) != 0) {
      error = "cannot write '" + path + "': " + std::strerror(errno);
      return false;
    }
  staged.clear();
  return true;
}

StagedWrites::~StagedWrites() {
  for (auto &[temp, path] : staged)
    std::remove(temp.c_str());
}
