// RUN: tandem-opt %s --split-input-file --verify-diagnostics --convert-tandem-to-llvm

// The conversion takes placed, planned IR: without the placement pipeline's
// attributes it says which pass to run.

// expected-error @+1 {{@main is not placed and planned: run --tandem-placement-pipeline first}}
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = tandem.relu %x : tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// expected-error @+1 {{a model needs a function @main}}
module {
  // expected-note @+1 {{found @forward}}
  func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}
