// --tandem-schedule: queues, the waits each cross-queue read needs, and the
// window that bounds how far a copy runs ahead, checked through the memory
// plan it allows. The inputs are placed, with their transfers.
// These functions carry no budget (1 GiB to the planner here); the budget's
// choice of window is in tandem-schedule-budget.mlir.
// RUN: tandem-opt %s -split-input-file --tandem-schedule=window=-1 --tandem-plan-memory=gpu-memory=1GiB | FileCheck %s --check-prefix=PREFETCH
// RUN: tandem-opt %s -split-input-file --tandem-schedule=window=1 --tandem-plan-memory=gpu-memory=1GiB | FileCheck %s --check-prefix=INORDER
// RUN: tandem-opt %s -split-input-file --tandem-schedule --tandem-plan-memory | FileCheck %s --check-prefix=CHOSEN
// Scheduling its own output again gives the same IR.
// RUN: tandem-opt %s -split-input-file --tandem-schedule | tandem-opt -split-input-file --tandem-schedule > %t.twice
// RUN: tandem-opt %s -split-input-file --tandem-schedule | diff - %t.twice

// Two weights streamed to the GPU. Unbounded, the second weight's copy
// waits for nothing: it runs while the first matmul computes, so its buffer
// cannot take the first weight's bytes, which program order would allow.
// PREFETCH-LABEL: func.func @streamed
// PREFETCH-SAME: tandem.gpu_arena_bytes = 532480 : i64, tandem.scheduled
// PREFETCH: %[[W1:.*]] = tandem.transfer %{{.*}} : tensor<256x256xf32> to #tandem.device<gpu> {tandem.offset = 0 : i64, tandem.queue = #tandem.queue<h2d>}
// PREFETCH-NEXT: tandem.wait <gpu> for %[[W1]]
// PREFETCH-NEXT: %[[A:.*]] = tandem.matmul {{.*}}tandem.queue = #tandem.queue<gpu>
// PREFETCH-NEXT: tandem.weight "w2"
// PREFETCH-NEXT: %[[W2:.*]] = tandem.transfer %{{.*}} : tensor<256x256xf32> to #tandem.device<gpu> {tandem.offset = 262144 : i64, tandem.queue = #tandem.queue<h2d>}
// PREFETCH-NEXT: tandem.wait <gpu> for %[[W2]]
// PREFETCH-NEXT: %[[B:.*]] = tandem.matmul %[[A]], %[[W2]]
// PREFETCH-NEXT: tandem.wait <d2h> for %[[B]]
// PREFETCH-NEXT: tandem.transfer %[[B]] {{.*}} to #tandem.device<cpu> {tandem.offset = 0 : i64, tandem.queue = #tandem.queue<d2h>}

// A window of one keeps the GPU arena's queues in program order: the second
// copy waits for the first matmul, and takes the first weight's bytes.
// INORDER-LABEL: func.func @streamed
// INORDER-SAME: tandem.gpu_arena_bytes = 270336 : i64, tandem.scheduled
// INORDER: %[[A:.*]] = tandem.matmul {{.*}}tandem.queue = #tandem.queue<gpu>
// INORDER-NEXT: tandem.weight "w2"
// INORDER-NEXT: tandem.wait <h2d> for %[[A]]
// INORDER-NEXT: tandem.transfer %{{.*}} : tensor<256x256xf32> to #tandem.device<gpu> {tandem.offset = 0 : i64, tandem.queue = #tandem.queue<h2d>}

// Chosen: with no budget, the prefetch (shorter predicted makespan).
// CHOSEN-LABEL: func.func @streamed
// CHOSEN-SAME: tandem.gpu_arena_bytes = 532480 : i64
func.func @streamed(%x: tensor<4x256xf32>) -> tensor<4x256xf32> {
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

// -----

// The CPU and the GPU work at once: the CPU's relu waits for nothing; the
// GPU waits for its input's copy only; the CPU's add waits for the copy
// back, which implies the GPU's work. Each wait names the latest producer.
// PREFETCH-LABEL: func.func @two_branches
// PREFETCH: %[[XG:.*]] = tandem.transfer %arg0 {{.*}}tandem.queue = #tandem.queue<h2d>
// PREFETCH-NEXT: %[[C:.*]] = tandem.relu %arg1 {{.*}}tandem.queue = #tandem.queue<cpu>
// PREFETCH-NEXT: tandem.wait <gpu> for %[[XG]]
// PREFETCH-NEXT: %[[G:.*]] = tandem.exp %[[XG]] {{.*}}tandem.queue = #tandem.queue<gpu>
// PREFETCH-NEXT: tandem.wait <d2h> for %[[G]]
// PREFETCH-NEXT: %[[B:.*]] = tandem.transfer %[[G]] {{.*}}tandem.queue = #tandem.queue<d2h>
// PREFETCH-NEXT: tandem.wait <cpu> for %[[B]] :
// PREFETCH-NEXT: tandem.add %[[C]], %[[B]]
func.func @two_branches(%a: tensor<4096xf32>, %b: tensor<4096xf32>) -> tensor<4096xf32> {
  %xg = tandem.transfer %a : tensor<4096xf32> to #tandem.device<gpu>
  %c = tandem.relu %b {tandem.device = #tandem.device<cpu>} : tensor<4096xf32>
  %g = tandem.exp %xg {tandem.device = #tandem.device<gpu>} : tensor<4096xf32>
  %back = tandem.transfer %g : tensor<4096xf32> to #tandem.device<cpu>
  %sum = tandem.add %c, %back {tandem.device = #tandem.device<cpu>} : tensor<4096xf32>, tensor<4096xf32> -> tensor<4096xf32>
  return %sum : tensor<4096xf32>
}

