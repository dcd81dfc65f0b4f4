// --tandem-schedule under a GPU budget: the widest window whose arena fits
// is chosen, and a fixed window the budget cannot hold is a warning naming
// the bytes and the window that fits (still scheduled, so the arena it
// would need can be looked at), then --tandem-plan-memory's error.
// RUN: tandem-opt %s --tandem-schedule --tandem-plan-memory | FileCheck %s
// RUN: tandem-opt %s --tandem-schedule=window=-1 -verify-diagnostics -o /dev/null
// RUN: not tandem-opt %s --tandem-schedule=window=-1 --tandem-plan-memory -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAN
// RUN: tandem-opt %s --tandem-schedule=window=1 --tandem-plan-memory | FileCheck %s

// Two streamed weights of 256 KiB under 300,000 bytes: prefetching the
// second while the first matmul runs needs 532,480 bytes; a window of 1
// (the copy waits for the first matmul and takes its weight's bytes) fits.
// CHECK-LABEL: func.func @streamed_under_budget
// CHECK-SAME: tandem.gpu_arena_bytes = 270336 : i64
// CHECK: tandem.wait <h2d> for
// PLAN: warning: the schedule window -1 (unbounded) needs a GPU arena of 532480 bytes, over the budget of 300000 bytes
// PLAN: error: the GPU arena needs 532480 bytes, over the budget of 300000 bytes
// expected-warning @+1 {{the schedule window -1 (unbounded) needs a GPU arena of 532480 bytes, over the budget of 300000 bytes (a wider window keeps more copies in flight); the widest window that fits is 1}}
func.func @streamed_under_budget(%x: tensor<4x256xf32>) -> tensor<4x256xf32> attributes {tandem.gpu_memory_budget = 300000 : i64} {
  %xg = tandem.transfer %x : tensor<4x256xf32> to #tandem.device<gpu>
  %w1 = tandem.weight "w1" {tandem.device = #tandem.device<cpu>} : tensor<256x256xf32>
  %w1g = tandem.transfer %w1 : tensor<256x256xf32> to #tandem.device<gpu>
  %a = tandem.matmul %xg, %w1g {tandem.device = #tandem.device<gpu>} : (tensor<4x256xf32>, tensor<256x256xf32>) -> tensor<4x256xf32>
  %w2 = tandem.weight "w2" {tandem.device = #tandem.device<cpu>} : tensor<256x256xf32>
  %w2g = tandem.transfer %w2 : tensor<256x256xf32> to #tandem.device<gpu>
  %b = tandem.matmul %a, %w2g {tandem.device = #tandem.device<gpu>} : (tensor<4x256xf32>, tensor<256x256xf32>) -> tensor<4x256xf32>
  %bc = tandem.transfer %b : tensor<4x256xf32> to #tandem.device<cpu>
  return %bc : tensor<4x256xf32>
}
