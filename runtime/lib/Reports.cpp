//===- Reports.cpp - the run's profile and trace --------------------------===//
//
// What a run reports about itself: the --profile table on stdout, the same
// figures as JSON (--profile-json) and a Chrome/Perfetto trace (--trace),
// each file written whole or not at all.
//
//===----------------------------------------------------------------------===//

#include "RuntimeState.h"

#include "FileBytes.h"
#include "tandem/runtime/ModelImage.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

using namespace tandem::rt;
namespace img = tandem::image;

namespace {

/// The timings summed over the ops of one name on one device, keyed
/// "name@device" (what --profile and --profile-json report).
std::map<std::string, OpStats> statsByName(const TandemRuntime &rt) {
  std::map<std::string, OpStats> byName;
  for (size_t index = 0; index < rt.opStats.size(); ++index) {
    const OpStats &op = rt.opStats[index];
    if (op.calls == 0)
      continue;
    const OpRecord &record = rt.image.ops[index];
    OpStats &sum = byName[record.name + "@" +
                          (record.device == img::kGpu ? "gpu" : "cpu")];
    sum.calls += op.calls;
    sum.total += op.total;
    sum.min = std::min(sum.min, op.min);
    sum.max = std::max(sum.max, op.max);
  }
  return byName;
}

/// A JSON string literal.
std::string quote(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\u%04x", c);
      out += escape;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

/// A text report (--profile-json, --trace) written whole or not at all:
/// `write` prints it, and a write error (a full disk) is fatal and leaves
/// any earlier file in place.
template <typename F>
void writeReport(const std::string &flag, const std::string &path, F write) {
  std::string error;
  {
    StagedWrites files; // removes its file unless committed
    std::string temp =
        files.stage(path, StagedWrites::Target::StreamAllowed, error);
    FILE *f = temp.empty() ? nullptr : std::fopen(temp.c_str(), "w");
    if (!temp.empty() && !f)
      error = "cannot write '" + path + "': " + std::strerror(errno);
    if (f) {
      write(f);
      errno = 0;
      bool ok = !std::ferror(f) && std::fflush(f) == 0;
      int cause = errno;
      ok &= std::fclose(f) == 0;
      if (!ok)
        error = "cannot write '" + path + "': " +
                std::strerror(cause ? cause : errno ? errno : EIO);
      else
        files.commit(error);
    }
  }
  if (!error.empty())
    fatal(flag + ": " + error);
}

void printProfileJson(TandemRuntime &rt, double totalSeconds, FILE *f) {
  std::fprintf(f,
               "{\n  \"total_us\": %.3f,\n  \"runs\": %lld,\n  \"load_us\": %.3f,\n"
               "  \"gpu_arena_bytes\": %lld,\n  \"gpu_budget_bytes\": %lld,\n"
               "  \"copies\": {\"h2d_count\": %lld, \"d2h_count\": %lld, "
               "\"h2d_bytes\": %lld, \"d2h_bytes\": %lld, \"sync_count\": %lld, "
               "\"async_count\": 0, \"total_us\": %.3f},\n  \"ops\": [",
               totalSeconds * 1e6, (long long)rt.options.repeat,
               rt.loadSeconds * 1e6, (long long)rt.image.gpuArena,
               (long long)rt.budget, (long long)rt.h2dCount,
               (long long)rt.d2hCount, (long long)rt.h2dBytes,
               (long long)rt.d2hBytes, (long long)(rt.h2dCount + rt.d2hCount),
               rt.copySeconds * 1e6);
  bool first = true;
  for (const auto &[key, stats] : statsByName(rt)) {
    size_t at = key.rfind('@');
    std::fprintf(f,
                 "%s\n    {\"name\": %s, \"device\": \"%s\", \"calls\": %lld, "
                 "\"total_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f, "
                 "\"avg_us\": %.3f}",
                 first ? "" : ",", quote(key.substr(0, at)).c_str(),
                 key.substr(at + 1).c_str(), (long long)stats.calls,
                 stats.total * 1e6, stats.min * 1e6, stats.max * 1e6,
                 stats.total * 1e6 / stats.calls);
    first = false;
  }
  std::fprintf(f, "\n  ]\n}\n");
}

/// A Chrome/Perfetto trace: one complete event per op execution, one track
/// per device.
void printTrace(TandemRuntime &rt, FILE *f) {
  std::fprintf(f, "{\"traceEvents\": [\n");
  std::fprintf(f, "  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, "
                  "\"tid\": 0, \"args\": {\"name\": \"cpu\"}},\n");
  std::fprintf(f, "  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, "
                  "\"tid\": 1, \"args\": {\"name\": \"gpu (sim)\"}}");
  for (const auto &event : rt.trace)
    std::fprintf(f,
                 ",\n  {\"name\": %s, \"ph\": \"X\", \"pid\": 0, \"tid\": %lld, "
                 "\"ts\": %.3f, \"dur\": %.3f}",
                 quote(event.name).c_str(), (long long)event.device,
                 event.start * 1e6, event.seconds * 1e6);
  std::fprintf(f, "\n]}\n");
}

} // namespace

void tandem::rt::writeProfileJson(TandemRuntime &rt, double totalSeconds) {
  writeReport("--profile-json", rt.options.profileJson,
              [&](FILE *f) { printProfileJson(rt, totalSeconds, f); });
}

void tandem::rt::writeTrace(TandemRuntime &rt) {
  writeReport("--trace", rt.options.trace,
              [&](FILE *f) { printTrace(rt, f); });
}

void tandem::rt::printProfile(TandemRuntime &rt, double totalSeconds) {
  int64_t runs = rt.options.repeat;
  std::printf("\n-------------------------  Tandem profile  "
              "-------------------------\n");
  std::printf("total: %.3f ms for %lld run(s), %.3f ms per run; load "
              "(weights, arenas) %.3f ms\n",
              totalSeconds * 1e3, (long long)runs, totalSeconds * 1e3 / runs,
              rt.loadSeconds * 1e3);
  std::printf("copies: h2d %lld (%lld bytes), d2h %lld (%lld bytes), %.3f ms; "
              "sync %lld, async 0\n",
              (long long)rt.h2dCount, (long long)rt.h2dBytes,
              (long long)rt.d2hCount, (long long)rt.d2hBytes,
              rt.copySeconds * 1e3, (long long)(rt.h2dCount + rt.d2hCount));
  std::printf("%-28s %-6s %7s %11s %11s %11s %11s\n", "op", "device", "calls",
              "total ms", "min ms", "max ms", "avg ms");
  for (const auto &[key, stats] : statsByName(rt)) {
    size_t at = key.rfind('@');
    std::printf("%-28s %-6s %7lld %11.4f %11.4f %11.4f %11.4f\n",
                key.substr(0, at).c_str(), key.substr(at + 1).c_str(),
                (long long)stats.calls, stats.total * 1e3, stats.min * 1e3,
                stats.max * 1e3, stats.total * 1e3 / stats.calls);
  }
}
