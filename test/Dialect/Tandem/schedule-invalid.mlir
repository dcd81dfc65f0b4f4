// The schedule verifier's rejections: each names the op, the operand, the
// queues and the wait to add.
// RUN: tandem-opt %s -split-input-file -verify-diagnostics

func.func @missing_wait(%a: tensor<4xf32>) -> tensor<4xf32> attributes {tandem.scheduled} {
  %x = tandem.transfer %a : tensor<4xf32> to #tandem.device<gpu> {tandem.queue = #tandem.queue<h2d>}
  // expected-error @+1 {{on the gpu queue reads operand #0, which 'tandem.transfer' produces on the h2d queue, without waiting for it: add 'tandem.wait <gpu> for' that value (or a later one of its queue) before this op}}
  %g = tandem.exp %x {tandem.device = #tandem.device<gpu>, tandem.queue = #tandem.queue<gpu>} : tensor<4xf32>
  tandem.wait <d2h> for %g : tensor<4xf32>
  %back = tandem.transfer %g : tensor<4xf32> to #tandem.device<cpu> {tandem.queue = #tandem.queue<d2h>}
  return %back : tensor<4xf32>
}

// -----

// A wait on the wrong queue orders nothing for the reader.
func.func @wait_on_another_queue(%a: tensor<4xf32>) -> tensor<4xf32> attributes {tandem.scheduled} {
  %x = tandem.transfer %a : tensor<4xf32> to #tandem.device<gpu> {tandem.queue = #tandem.queue<h2d>}
  tandem.wait <d2h> for %x : tensor<4xf32>
  // expected-error @+1 {{on the gpu queue reads operand #0}}
  %g = tandem.exp %x {tandem.device = #tandem.device<gpu>, tandem.queue = #tandem.queue<gpu>} : tensor<4xf32>
  tandem.wait <d2h> for %g : tensor<4xf32>
  %back = tandem.transfer %g : tensor<4xf32> to #tandem.device<cpu> {tandem.queue = #tandem.queue<d2h>}
  return %back : tensor<4xf32>
}

// -----

// A wait placed after its reader is too late.
func.func @late_wait(%a: tensor<4xf32>) -> tensor<4xf32> attributes {tandem.scheduled} {
  %x = tandem.transfer %a : tensor<4xf32> to #tandem.device<gpu> {tandem.queue = #tandem.queue<h2d>}
  // expected-error @+1 {{without waiting for it}}
  %g = tandem.exp %x {tandem.device = #tandem.device<gpu>, tandem.queue = #tandem.queue<gpu>} : tensor<4xf32>
  tandem.wait <gpu> for %x : tensor<4xf32>
  tandem.wait <d2h> for %g : tensor<4xf32>
  %back = tandem.transfer %g : tensor<4xf32> to #tandem.device<cpu> {tandem.queue = #tandem.queue<d2h>}
  return %back : tensor<4xf32>
}

// -----

// A cycle: the copy engine would wait for the GPU op, which waits for the
// copy. A wait names a value defined above it, so the only way to write a
// cycle is a wait for a later op, which dominance refuses.
func.func @cycle(%a: tensor<4xf32>) -> tensor<4xf32> attributes {tandem.scheduled} {
  // expected-error @+1 {{operand #0 does not dominate this use}}
  tandem.wait <h2d> for %g : tensor<4xf32>
  %x = tandem.transfer %a : tensor<4xf32> to #tandem.device<gpu> {tandem.queue = #tandem.queue<h2d>}
  tandem.wait <gpu> for %x : tensor<4xf32>
  // expected-note @+1 {{operand defined here}}
  %g = tandem.exp %x {tandem.device = #tandem.device<gpu>, tandem.queue = #tandem.queue<gpu>} : tensor<4xf32>
  tandem.wait <d2h> for %g : tensor<4xf32>
  %back = tandem.transfer %g : tensor<4xf32> to #tandem.device<cpu> {tandem.queue = #tandem.queue<d2h>}
  return %back : tensor<4xf32>
}

// -----

func.func @queue_against_placement(%a: tensor<4xf32>) -> tensor<4xf32> attributes {tandem.scheduled} {
  // expected-error @+1 {{is on the gpu queue, but its placement puts it on the cpu queue}}
  %c = tandem.relu %a {tandem.device = #tandem.device<cpu>, tandem.queue = #tandem.queue<gpu>} : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

func.func @no_queue(%a: tensor<4xf32>) -> tensor<4xf32> attributes {tandem.scheduled} {
  // expected-error @+1 {{in a scheduled function, every op that runs needs a 'tandem.queue' and a placement (it has no queue)}}
  %c = tandem.relu %a {tandem.device = #tandem.device<cpu>} : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

func.func @weight_on_a_queue() -> tensor<4xf32> attributes {tandem.scheduled} {
  // expected-error @+1 {{'tandem.weight' runs on no queue (weights are uploaded or mapped at load, views are their source's bytes): it takes no 'tandem.queue'}}
  %w = tandem.weight "w" {tandem.device = #tandem.device<cpu>, tandem.queue = #tandem.queue<cpu>} : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

func.func @empty_wait(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tandem.wait' op waits for nothing: name at least one value}}
  "tandem.wait"() {queue = #tandem.queue<gpu>} : () -> ()
  return
}

// -----

func.func @unknown_queue(%a: tensor<4xf32>) {
  // expected-error @+1 {{unknown queue 'npu': expected cpu, gpu, h2d or d2h}}
  tandem.wait <npu> for %a : tensor<4xf32>
  return
}

// -----

func.func @queue_not_an_attribute(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tandem.queue' must be a #tandem.queue attribute, got 1 : i64}}
  %c = tandem.relu %a {tandem.queue = 1} : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// expected-error @+1 {{'tandem.scheduled' is a unit attribute, got 1 : i64}}
func.func @scheduled_not_unit(%a: tensor<4xf32>) -> tensor<4xf32> attributes {tandem.scheduled = 1} {
  return %a : tensor<4xf32>
}
