//===- Reports.cpp - the run's profile and trace --------------------------===//
//
// What a run reports about itself: the --profile table on stdout, the same
// figures as JSON (--profile-json) and a Chrome/Perfetto trace (--trace),
// each file written whole or not at all.
//
//===----------------------------------------------------------------------===//

#include "RuntimeState.h"

#include "FileBytes.h"
#include "Queues.h"
#include "tandem/runtime/ModelImage.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

using namespace tandem::rt;
namespace img = tandem::image;

namespace {

/// The timings of a group of ops (one name, or one cost family, on one
/// device) beside what the compiler predicted for them.
struct GroupStats {
  int64_t ops = 0, calls = 0;
  double total = 0, min = 1e30, max = 0, predicted = 0;
  /// The total as if every call took the ops' steady time (their average
  /// without the first call, which pays for cold caches and pages).
  double steady = 0;
};

/// What the compiler's predicted times are multiplied by to compare with
/// this run: --sim-time-scale when the sim backend paces ops to them.
double predictionScale(const TandemRuntime &rt) {
  return rt.options.simTiming ? rt.options.simTimeScale : 1;
}

const char *deviceName(const OpRecord &record) {
  return record.device == img::kGpu ? "gpu" : "cpu";
}

/// The timings of the ops that ran, grouped by `groupOf(record)` and device,
/// keyed "group@device" (what --profile and --profile-json report).
template <typename GroupOf>
std::map<std::string, GroupStats> statsBy(const TandemRuntime &rt,
                                          GroupOf groupOf) {
  std::map<std::string, GroupStats> groups;
  double scale = predictionScale(rt);
  for (size_t index = 0; index < rt.opStats.size(); ++index) {
    const OpStats &op = rt.opStats[index];
    if (op.calls == 0)
      continue;
    const OpRecord &record = rt.image.ops[index];
    GroupStats &sum = groups[groupOf(record) + "@" + deviceName(record)];
    sum.ops += 1;
    sum.calls += op.calls;
    sum.total += op.total;
    sum.min = std::min(sum.min, op.min);
    sum.max = std::max(sum.max, op.max);
    sum.predicted += record.predictedSeconds * scale * double(op.calls);
    sum.steady += op.calls > 1 ? (op.total - op.first) / double(op.calls - 1) *
                                     double(op.calls)
                               : op.total;
  }
  return groups;
}

std::map<std::string, GroupStats> statsByName(const TandemRuntime &rt) {
  return statsBy(rt, [](const OpRecord &record) { return record.name; });
}

std::map<std::string, GroupStats> statsByFamily(const TandemRuntime &rt) {
  return statsBy(rt, [](const OpRecord &record) { return record.family; });
}

/// Whether the model carries the compiler's predicted times.
bool hasPredictions(const TandemRuntime &rt) {
  return rt.image.predictedSerialSeconds > 0;
}

/// The op time of every group together.
double totalOpSeconds(const std::map<std::string, GroupStats> &groups) {
  double total = 0;
  for (const auto &entry : groups)
    total += entry.second.total;
  return total;
}

/// A family whose measured time is off its prediction by more than this
/// (either way), while taking at least kNoticeableShare of the op time,
/// means the device profile does not describe this machine.
constexpr double kFamilyRatioLimit = 1.4, kNoticeableShare = 0.05;

/// Microseconds, to the nanosecond: the figures of the JSON reports.
double micros(double seconds) { return std::round(seconds * 1e9) / 1e3; }

/// JSON text of `value`: keys in the order written, invalid UTF-8 in a
/// name replaced rather than thrown about.
std::string dumpJson(const nlohmann::ordered_json &value, int indent = -1) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false,
                    nlohmann::ordered_json::error_handler_t::replace);
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

const char *const kQueueNames[img::kNumQueues] = {"cpu", "gpu", "h2d", "d2h"};

/// Whether the run's queues ran concurrently (on the sim backend's workers,
/// or on CUDA's streams).
bool concurrent(const TandemRuntime &rt) {
  return rt.queues || rt.cudaQueues;
}

/// Seconds each queue of the schedule was busy, over all runs.
std::vector<double> queueBusySeconds(const TandemRuntime &rt) {
  std::vector<double> busy(img::kNumQueues, 0.0);
  for (size_t index = 0; index < rt.opStats.size(); ++index)
    busy[rt.image.ops[index].queue] += rt.opStats[index].total;
  return busy;
}

/// Seconds the queues' work overlapped: their busy time beyond the wall
/// time (0 when ops run one at a time).
double overlapSeconds(const TandemRuntime &rt, double totalSeconds) {
  double busy = 0;
  for (double seconds : queueBusySeconds(rt))
    busy += seconds;
  return concurrent(rt) ? std::max(0.0, busy - totalSeconds) : 0.0;
}

/// The compiler's prediction of one run, in the run's own time (scaled by
/// --sim-time-scale when paced): the makespan when the queues ran
/// concurrently, the serial sum when the ops ran one at a time; 0 when the
/// model carries no prediction.
double predictedRunSeconds(const TandemRuntime &rt) {
  return predictionScale(rt) * (concurrent(rt)
                                    ? rt.image.predictedMakespanSeconds
                                    : rt.image.predictedSerialSeconds);
}

void printProfileJson(TandemRuntime &rt, double totalSeconds, FILE *f) {
  bool withPredictions = hasPredictions(rt);
  auto predictedJson = [&](double seconds) {
    return withPredictions ? nlohmann::ordered_json(micros(seconds))
                     : nlohmann::ordered_json(nullptr);
  };
  auto ratioJson = [&](double measured, double expected) {
    return withPredictions && expected > 0 ? nlohmann::ordered_json(measured / expected)
                                     : nlohmann::ordered_json(nullptr);
  };
  // One entry per group; the predicted figures are null without a profile.
  auto groupsJson = [&](const std::map<std::string, GroupStats> &groups,
                        const char *keyName) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto &[key, stats] : groups) {
      size_t at = key.rfind('@');
      list.push_back({{keyName, key.substr(0, at)},
                      {"device", key.substr(at + 1)},
                      {"ops", stats.ops},
                      {"calls", stats.calls},
                      {"total_us", micros(stats.total)},
                      {"min_us", micros(stats.min)},
                      {"max_us", micros(stats.max)},
                      {"avg_us", micros(stats.total / stats.calls)},
                      {"steady_us", micros(stats.steady)},
                      {"predicted_us", predictedJson(stats.predicted)},
                      {"measured_over_predicted",
                       ratioJson(stats.steady, stats.predicted)}});
    }
    return list;
  };
  nlohmann::ordered_json ops = groupsJson(statsByName(rt), "name");
  nlohmann::ordered_json families = groupsJson(statsByFamily(rt), "family");
  // Every op of the image, in order: what a calibration fits and a
  // validation compares op by op.
  nlohmann::ordered_json opRuns = nlohmann::ordered_json::array();
  for (size_t index = 0; index < rt.opStats.size(); ++index) {
    const OpStats &op = rt.opStats[index];
    const OpRecord &record = rt.image.ops[index];
    opRuns.push_back(
        {{"index", index},
         {"name", record.name},
         {"family", record.family},
         {"device", deviceName(record)},
         {"loc", record.loc},
         {"calls", op.calls},
         {"total_us", micros(op.total)},
         {"min_us", op.calls ? nlohmann::ordered_json(micros(op.min))
                             : nlohmann::ordered_json(nullptr)},
         {"first_us", op.calls ? nlohmann::ordered_json(micros(op.first))
                               : nlohmann::ordered_json(nullptr)},
         {"predicted_us",
          predictedJson(record.predictedSeconds * predictionScale(rt))}});
  }
  nlohmann::ordered_json copies = {{"h2d_count", rt.h2dCount},
                                   {"d2h_count", rt.d2hCount},
                                   {"h2d_bytes", rt.h2dBytes},
                                   {"d2h_bytes", rt.d2hBytes},
                                   {"sync_count", concurrent(rt) ? 0 : rt.h2dCount + rt.d2hCount},
                                   {"async_count", concurrent(rt) ? rt.h2dCount + rt.d2hCount : 0},
                                   {"total_us", micros(rt.copySeconds)}};
  nlohmann::ordered_json busy = nlohmann::ordered_json::object();
  std::vector<double> queueBusy = queueBusySeconds(rt);
  for (int queue = 0; queue < img::kNumQueues; ++queue)
    busy[kQueueNames[queue]] = micros(queueBusy[queue]);
  nlohmann::ordered_json schedule = {
      {"concurrent", concurrent(rt)},
      {"makespan_us", micros(totalSeconds / rt.options.repeat)},
      {"queue_busy_us", std::move(busy)},
      {"overlap_us", micros(overlapSeconds(rt, totalSeconds))},
      {"gpu_live_peak_bytes", rt.queues ? nlohmann::ordered_json(rt.gpuLivePeak)
                                        : nlohmann::ordered_json(nullptr)}};
  double predicted = predictedRunSeconds(rt);
  schedule["predicted_us"] = predicted > 0 ? nlohmann::ordered_json(micros(predicted))
                                           : nlohmann::ordered_json(nullptr);
  schedule["measured_over_predicted"] =
      predicted > 0
          ? nlohmann::ordered_json(totalSeconds / rt.options.repeat / predicted)
          : nlohmann::ordered_json(nullptr);
  schedule["sim_timing"] =
      rt.options.simTiming
          ? nlohmann::ordered_json{{"scale", rt.options.simTimeScale},
                                   {"paced_runs", rt.pacedRuns.load()},
                                   {"overruns", rt.pacedOverruns.load()}}
          : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json profile = {{"total_us", micros(totalSeconds)},
                                    {"runs", rt.options.repeat},
                                    {"load_us", micros(rt.loadSeconds)},
                                    {"at_load",
                                     rt.image.atLoad
                                         ? nlohmann::ordered_json{
                                               {"ops", rt.image.atLoad->ops.size()},
                                               {"weights", rt.image.atLoad->outputs.size()},
                                               {"us", micros(rt.atLoadSeconds)}}
                                         : nlohmann::ordered_json(nullptr)},
                                    {"gpu_arena_bytes", rt.image.gpuArena},
                                    {"gpu_budget_bytes", rt.budget},
                                    {"copies", std::move(copies)},
                                    {"schedule", std::move(schedule)},
                                    {"ops", std::move(ops)},
                                    {"families", std::move(families)},
                                    {"op_runs", std::move(opRuns)}};
  std::fprintf(f, "%s\n", dumpJson(profile, 2).c_str());
}

/// A Chrome/Perfetto trace: one complete event per op execution, one track
/// per device (per queue when the queues run concurrently); an event a
/// line, written as it goes (traces get long).
void printTrace(TandemRuntime &rt, FILE *f) {
  auto track = [](int64_t tid, const char *name) {
    return nlohmann::ordered_json{{"name", "thread_name"},
                                  {"ph", "M"},
                                  {"pid", 0},
                                  {"tid", tid},
                                  {"args", {{"name", name}}}};
  };
  std::fprintf(f, "{\"traceEvents\": [\n  %s,\n  %s",
               dumpJson(track(0, "cpu")).c_str(),
               dumpJson(track(1, rt.useCuda ? "gpu (cuda)" : "gpu (sim)")).c_str());
  if (concurrent(rt))
    std::fprintf(f, ",\n  %s,\n  %s",
                 dumpJson(track(img::kH2DQueue, "h2d copies")).c_str(),
                 dumpJson(track(img::kD2HQueue, "d2h copies")).c_str());
  for (const auto &event : rt.trace) {
    nlohmann::ordered_json complete = {{"name", event.name},
                                       {"ph", "X"},
                                       {"pid", 0},
                                       {"tid", concurrent(rt) ? event.queue : event.device},
                                       {"ts", micros(event.start)},
                                       {"dur", micros(event.seconds)}};
    std::fprintf(f, ",\n  %s", dumpJson(complete).c_str());
  }
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
  if (const tandem::rt::Image *atLoad = rt.image.atLoad.get())
    std::printf("folded at load: %zu op(s) on weights computed once, "
                "%zu weight(s), %.3f ms of the load\n",
                atLoad->ops.size(), atLoad->outputs.size(),
                rt.atLoadSeconds * 1e3);
  int64_t copies = rt.h2dCount + rt.d2hCount;
  std::printf("copies: h2d %lld (%lld bytes), d2h %lld (%lld bytes), %.3f ms; "
              "sync %lld, async %lld\n",
              (long long)rt.h2dCount, (long long)rt.h2dBytes,
              (long long)rt.d2hCount, (long long)rt.d2hBytes,
              rt.copySeconds * 1e3, (long long)(concurrent(rt) ? 0 : copies),
              (long long)(concurrent(rt) ? copies : 0));
  if (concurrent(rt)) {
    std::vector<double> busy = queueBusySeconds(rt);
    std::printf("queues (concurrent): busy cpu %.3f ms, gpu %.3f ms, h2d "
                "%.3f ms, d2h %.3f ms; overlap %.3f ms",
                busy[0] * 1e3, busy[1] * 1e3, busy[2] * 1e3, busy[3] * 1e3,
                overlapSeconds(rt, totalSeconds) * 1e3);
    // The sim backend's race detector tracks the live bytes.
    if (rt.queues)
      std::printf("; GPU arena live peak %lld bytes",
                  (long long)rt.gpuLivePeak);
    std::printf("\n");
  }
  if (double predicted = predictedRunSeconds(rt); predicted > 0)
    std::printf("predicted: %.3f ms per run (the %s of the compiler's cost "
                "model%s); measured / predicted %.3f\n",
                predicted * 1e3, concurrent(rt) ? "makespan" : "serial time",
                rt.options.simTiming ? ", times the --sim-time-scale" : "",
                totalSeconds / runs / predicted);
  if (rt.cudaQueues)
    std::printf("%s\n", describeCudaGraphs(*rt.cudaQueues).c_str());
  if (rt.options.simTiming)
    std::printf("sim timing: every op paced to its predicted time x %g; %lld "
                "of %lld op runs overran it%s\n",
                rt.options.simTimeScale, (long long)rt.pacedOverruns.load(),
                (long long)rt.pacedRuns.load(),
                rt.pacedOverruns ? " (the CPU stand-in was slower than the "
                                   "profile: raise --sim-time-scale)"
                                 : "");
  bool predicted = hasPredictions(rt);
  std::printf("%-28s %-6s %7s %11s %11s %11s %11s", "op", "device", "calls",
              "total ms", "min ms", "max ms", "avg ms");
  std::printf(predicted ? " %11s %9s\n" : "\n", "predicted", "meas/pred");
  for (const auto &[key, stats] : statsByName(rt)) {
    size_t at = key.rfind('@');
    std::printf("%-28s %-6s %7lld %11.4f %11.4f %11.4f %11.4f",
                key.substr(0, at).c_str(), key.substr(at + 1).c_str(),
                (long long)stats.calls, stats.total * 1e3, stats.min * 1e3,
                stats.max * 1e3, stats.total * 1e3 / stats.calls);
    if (predicted)
      std::printf(" %11.4f %9.2f", stats.predicted * 1e3,
                  stats.predicted > 0 ? stats.steady / stats.predicted : 0.0);
    std::printf("\n");
  }
  if (!predicted)
    return;
  // The same by the cost model's op families: where the profile describes
  // this machine and where it does not.
  std::map<std::string, GroupStats> families = statsByFamily(rt);
  double opSeconds = totalOpSeconds(families);
  std::printf("%-28s %-6s %7s %11s %11s %11s %9s\n", "op family", "device",
              "ops", "share", "total ms", "predicted", "meas/pred");
  std::vector<std::string> offFamilies;
  for (const auto &[key, stats] : families) {
    size_t at = key.rfind('@');
    double share = opSeconds > 0 ? stats.total / opSeconds : 0;
    // Steady times: a first call pays once for what no run repeats (cold
    // caches and pages, a BLAS loading its kernels), which the cost model
    // does not price per run.
    double steadyRatio = stats.predicted > 0 ? stats.steady / stats.predicted : 0;
    std::printf("%-28s %-6s %7lld %10.1f%% %11.4f %11.4f %9.2f\n",
                key.substr(0, at).c_str(), key.substr(at + 1).c_str(),
                (long long)stats.ops, share * 100, stats.total * 1e3,
                stats.predicted * 1e3, steadyRatio);
    // Only for a device that really ran the ops: the sim backend's GPU is
    // the CPU standing in for it.
    bool standIn = key.substr(at + 1) == "gpu" && !rt.useCuda;
    if (share >= kNoticeableShare && stats.predicted > 0 && !standIn &&
        (steadyRatio > kFamilyRatioLimit || steadyRatio < 1 / kFamilyRatioLimit))
      offFamilies.push_back(key);
  }
  // One run has no steady time to judge by.
  if (!offFamilies.empty() && !rt.options.simTiming && runs > 1) {
    std::string names;
    for (const std::string &key : offFamilies)
      names += (names.empty() ? "" : ", ") + key;
    std::printf("note: the device profile mispredicts %s by more than %.1fx "
                "(steady times, first calls left out): if it was not "
                "measured on this machine, measure one with tandem-calibrate "
                "-o profile.json and compile with --device-profile=profile.json\n",
                names.c_str(), kFamilyRatioLimit);
  }
}
