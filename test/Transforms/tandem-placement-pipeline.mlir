// The pipeline: place (which folds, merges duplicates and moves each weight
// to its first reader before it prices), insert transfers, schedule the
// queues, plan memory; tandem-opt --help lists it.
// RUN: tandem-opt %s --tandem-placement-pipeline="device-profile=h200 gpu-memory=1GiB" | FileCheck %s
// RUN: tandem-opt --help | FileCheck %s --check-prefix=HELP
// HELP-DAG: --tandem-placement-pipeline
// HELP-DAG: --tandem-insert-transfers
// HELP-DAG: --tandem-place
// HELP-DAG: --tandem-plan-memory
// HELP-DAG: --tandem-schedule
// HELP-DAG: --tandem-view-placement

// CHECK-LABEL: func.func @main
// CHECK-SAME: tandem.cpu_arena_bytes = {{[0-9]+}} : i64, tandem.gpu_arena_bytes = {{[0-9]+}} : i64, tandem.gpu_memory_budget = 1073741824 : i64, tandem.scheduled
// CHECK: %[[X:.*]] = tandem.transfer %arg0 {{.*}} to #tandem.device<gpu> {tandem.offset = {{[0-9]+}} : i64, tandem.queue = #tandem.queue<h2d>}
// A resident weight runs on no queue: it was uploaded at load.
// CHECK: tandem.weight "w" {tandem.device = #tandem.device<gpu>, tandem.offset = {{[0-9]+}} : i64}
// CHECK-NEXT: tandem.wait <gpu> for %[[X]]
// CHECK-NEXT: %[[Y:.*]] = tandem.matmul {{.*}}tandem.device = #tandem.device<gpu>, tandem.offset = {{[0-9]+}} : i64, tandem.queue = #tandem.queue<gpu>}
// CHECK-NEXT: tandem.wait <d2h> for %[[Y]]
// CHECK-NEXT: tandem.transfer %[[Y]] {{.*}} to #tandem.device<cpu> {tandem.offset = {{[0-9]+}} : i64, tandem.queue = #tandem.queue<d2h>}
// The shape folded to a constant before placement, now next to its reader.
// CHECK: arith.constant {tandem.device = #tandem.device<cpu>, tandem.offset = {{[0-9]+}} : i64, tandem.queue = #tandem.queue<cpu>} dense<1024> : tensor<2xi64>
// CHECK-NEXT: return
func.func @main(%x: tensor<1024x1024xf32>) -> (tensor<1024x1024xf32>, tensor<2xi64>) {
  %w = tandem.weight "w" : tensor<1024x1024xf32>
  %y = tandem.matmul %x, %w : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %s = tandem.shape %y : tensor<1024x1024xf32> -> tensor<2xi64>
  return %y, %s : tensor<1024x1024xf32>, tensor<2xi64>
}
