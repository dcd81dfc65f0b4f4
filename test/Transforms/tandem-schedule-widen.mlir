// --tandem-schedule widens copies one at a time where the budget has room.
// On the test decoder at 64 MiB, one window for the whole program must be 1
// (the FFN's up-projection leaves no room beside it for the next weight),
// but several streamed weights can still be prefetched elsewhere: the
// schedule takes less time than the same placement kept at a window of 1,
// and its arena still fits the budget.
// RUN: tandem-opt %S/Inputs/models/decoder.mlir --tandem-placement-pipeline="device-profile=h200 gpu-memory=67032099 report=%t.json" -o %t.mlir
// RUN: tandem-opt %S/Inputs/models/decoder.mlir --tandem-placement-pipeline="device-profile=h200 gpu-memory=67032099 schedule-window=1 report=%t.one.json" -o /dev/null
// RUN: %python -c "import json,sys; r, o = (json.load(open(p)) for p in sys.argv[1:]); assert r['schedule_window'] == o['schedule_window'] == 1, (r['schedule_window'], o['schedule_window']); assert r['schedule_widened_copies'] >= 4 and o['schedule_widened_copies'] == 0, (r['schedule_widened_copies'], o['schedule_widened_copies']); assert r['predicted_us']['serial'] == o['predicted_us']['serial']; assert r['predicted_us']['makespan'] < 0.97 * o['predicted_us']['makespan'], (r['predicted_us'], o['predicted_us']); assert r['gpu_arena_bytes'] <= 67032099 and r['lower_bound_us'] <= r['predicted_us']['makespan'], r['gpu_arena_bytes']" %t.json %t.one.json
// RUN: %python %S/check_report.py %t.json | FileCheck %s
// The emitted program's memory plan is the one the schedule was widened for.
// RUN: FileCheck %s --check-prefix=IR < %t.mlir

// CHECK: objective recomputed: ok
// IR: tandem.gpu_arena_bytes = {{[0-9]+}} : i64
// IR: tandem.wait <h2d> for
