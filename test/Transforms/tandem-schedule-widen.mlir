// --tandem-schedule widens copies one at a time where the budget has room.
//
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
// RUN: %python -c "import json,re,sys; r = json.load(open(sys.argv[1])); m = re.findall(r'tandem.gpu_arena_bytes = (\d+) : i64', open(sys.argv[2]).read()); assert m == [str(r['gpu_arena_bytes'])], (m, r['gpu_arena_bytes'])" %t.json %t.mlir

// CHECK: objective recomputed: ok

// A hand-placed program: three streamed weights of 256 KiB under 600,000
// bytes. The third weight cannot be prefetched beside the 512 KiB
// activation %big, so the program's window is 1; the second can run beside
// the first matmul. Its copy waits for nothing; the third waits for the
// matmul that ends %big's life.
// RUN: tandem-opt %s --tandem-schedule --tandem-plan-memory | FileCheck %s --check-prefix=HAND
// A window of 1 fixed: the second copy waits for the first matmul.
// RUN: tandem-opt %s --tandem-schedule=window=1 | FileCheck %s --check-prefix=ONE
// `exact`'s optimum was proven with one window for the whole program: once
// copies are widened past it, the report's optimal_us no longer holds and is
// dropped. A report as --tandem-place leaves it (optimal_us: the makespan at
// a window of 1).
// RUN: echo '{"predicted_us": {"total": 90.98}, "makespan_lower_bound_us": 50, "optimal_us": 90.98}' > %t.hand.json
// RUN: tandem-opt %s --tandem-schedule=report=%t.hand.json -o /dev/null
// RUN: %python -c "import json,sys; r = json.load(open(sys.argv[1])); assert r['optimal_us'] is None and r['schedule_widened_copies'] >= 1 and r['predicted_us']['makespan'] < 90, r" %t.hand.json

// HAND-LABEL: func.func @widened
// HAND-SAME: tandem.gpu_arena_bytes = 548864 : i64
// HAND: tandem.weight "w1"
// HAND-NEXT: %[[W1:.*]] = tandem.transfer {{.*}}tandem.queue = #tandem.queue<h2d>
// HAND-NEXT: tandem.wait <gpu> for %[[W1]]
// HAND-NEXT: %[[A:.*]] = tandem.matmul
// HAND-NEXT: tandem.weight "w2"
// HAND-NEXT: tandem.transfer
// HAND: tandem.weight "row"
// HAND-NEXT: %[[S:.*]] = tandem.matmul
// HAND-NEXT: tandem.weight "w3"
// HAND-NEXT: tandem.wait <h2d> for %[[S]]
// ONE-LABEL: func.func @widened
// ONE: %[[A:.*]] = tandem.matmul
// ONE-NEXT: tandem.weight "w2"
// ONE-NEXT: tandem.wait <h2d> for %[[A]]
func.func @widened(%x: tensor<4x256xf32>) -> tensor<4x256xf32> attributes {tandem.gpu_memory_budget = 600000 : i64} {
  %xg = tandem.transfer %x : tensor<4x256xf32> to #tandem.device<gpu>
  %w1 = tandem.weight "w1" {tandem.device = #tandem.device<cpu>} : tensor<256x256xf32>
  %w1g = tandem.transfer %w1 : tensor<256x256xf32> to #tandem.device<gpu>
  %a = tandem.matmul %xg, %w1g {tandem.device = #tandem.device<gpu>} : (tensor<4x256xf32>, tensor<256x256xf32>) -> tensor<4x256xf32>
  %w2 = tandem.weight "w2" {tandem.device = #tandem.device<cpu>} : tensor<256x256xf32>
  %w2g = tandem.transfer %w2 : tensor<256x256xf32> to #tandem.device<gpu>
  %b = tandem.matmul %a, %w2g {tandem.device = #tandem.device<gpu>} : (tensor<4x256xf32>, tensor<256x256xf32>) -> tensor<4x256xf32>
  %col = tandem.weight "col" {tandem.device = #tandem.device<gpu>} : tensor<512x4xf32>
  %big = tandem.matmul %col, %b {tandem.device = #tandem.device<gpu>} : (tensor<512x4xf32>, tensor<4x256xf32>) -> tensor<512x256xf32>
  %row = tandem.weight "row" {tandem.device = #tandem.device<gpu>} : tensor<4x512xf32>
  %s = tandem.matmul %row, %big {tandem.device = #tandem.device<gpu>} : (tensor<4x512xf32>, tensor<512x256xf32>) -> tensor<4x256xf32>
  %w3 = tandem.weight "w3" {tandem.device = #tandem.device<cpu>} : tensor<256x256xf32>
  %w3g = tandem.transfer %w3 : tensor<256x256xf32> to #tandem.device<gpu>
  %c = tandem.matmul %s, %w3g {tandem.device = #tandem.device<gpu>} : (tensor<4x256xf32>, tensor<256x256xf32>) -> tensor<4x256xf32>
  %cc = tandem.transfer %c : tensor<4x256xf32> to #tandem.device<cpu>
  return %cc : tensor<4x256xf32>
}
