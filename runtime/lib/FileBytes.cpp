//===- FileBytes.cpp - the runtime's file reads and writes ----------------===//

#include "FileBytes.h"

#include "tandem/runtime/OutputPaths.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
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

bool tandem::rt::isWrittenInPlace(const std::string &path) {
  if (path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0)
    return true;
  struct stat info;
  return stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode) &&
         !S_ISDIR(info.st_mode);
}

std::string tandem::rt::resolveSymlink(const std::string &path) {
  struct stat info;
  if (lstat(path.c_str(), &info) != 0 || !S_ISLNK(info.st_mode))
    return path;
  char *real = realpath(path.c_str(), nullptr);
  if (!real)
    return path;
  std::string resolved = real;
  std::free(real);
  return resolved;
}

bool tandem::rt::checkOutputPath(const std::string &path,
                                 std::string &error) {
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    error = "cannot write '" + path + "': it is a directory";
    return false;
  }
  if (isWrittenInPlace(path))
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

std::string StagedWrites::stage(const std::string &given, Target target,
                                std::string &error) {
  if (!checkOutputPath(given, error))
    return "";
  if (isWrittenInPlace(given)) {
    if (target == Target::StreamAllowed)
      return given;
    error = "cannot write '" + given + "': it is not a regular file";
    return "";
  }
  std::string path = resolveSymlink(given);
  // A short name of its own beside the output (the rename stays on one file
  // system; a name near the length limit still works).
  size_t slash = path.rfind('/');
  std::string folder =
      slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string temp = folder + ".tandem-partial-" + std::to_string(getpid()) +
                     "-" + std::to_string(staged.size());
  staged.emplace_back(temp, path);
  registerForSignals(temp);
  return temp;
}

bool StagedWrites::commit(std::string &error) {
  for (auto &[temp, path] : staged) {
    if (std::rename(temp.c_str(), path.c_str()) != 0) {
      error = "cannot write '" + path + "': " + std::strerror(errno);
      return false;
    }
    unregisterForSignals(temp);
  }
  staged.clear();
  return true;
}

StagedWrites::~StagedWrites() {
  for (auto &[temp, path] : staged) {
    std::remove(temp.c_str());
    unregisterForSignals(temp);
  }
}

//===----------------------------------------------------------------------===//
// Removing staged files when the run is interrupted
//===----------------------------------------------------------------------===//

namespace {
/// The staged files not yet renamed, for the signal handler: a fixed table
/// of paths, since a handler may neither allocate nor lock.
constexpr int kMaxStaged = 64;
constexpr size_t kMaxPath = 4096;
char stagedPaths[kMaxStaged][kMaxPath];
volatile sig_atomic_t stagedUsed[kMaxStaged];
struct sigaction previous[2];
constexpr int kSignals[2] = {SIGINT, SIGTERM};

void removeStagedAndReraise(int signal) {
  for (int i = 0; i < kMaxStaged; ++i)
    if (stagedUsed[i])
      unlink(stagedPaths[i]);
  for (int k = 0; k < 2; ++k)
    if (kSignals[k] == signal)
      sigaction(signal, &previous[k], nullptr);
  raise(signal);
}

void installHandlers() {
  static bool installed = false;
  if (installed)
    return;
  installed = true;
  struct sigaction action = {};
  action.sa_handler = removeStagedAndReraise;
  sigemptyset(&action.sa_mask);
  for (int k = 0; k < 2; ++k) {
    sigaction(kSignals[k], nullptr, &previous[k]);
    // An ignored signal (a background job's SIGINT) stays ignored.
    if (previous[k].sa_handler != SIG_IGN)
      sigaction(kSignals[k], &action, nullptr);
  }
}
} // namespace

void StagedWrites::registerForSignals(const std::string &temp) {
  if (temp.size() >= kMaxPath)
    return;
  installHandlers();
  for (int i = 0; i < kMaxStaged; ++i)
    if (!stagedUsed[i]) {
      std::memcpy(stagedPaths[i], temp.c_str(), temp.size() + 1);
      stagedUsed[i] = 1;
      return;
    }
}

void StagedWrites::unregisterForSignals(const std::string &temp) {
  for (int i = 0; i < kMaxStaged; ++i)
    if (stagedUsed[i] && temp == stagedPaths[i]) {
      stagedUsed[i] = 0;
      return;
    }
}
