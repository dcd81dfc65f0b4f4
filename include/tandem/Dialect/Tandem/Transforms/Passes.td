//===- Passes.td - tandem passes ---------------------------*- tablegen -*-===//

#ifndef TANDEM_DIALECT_TANDEM_TRANSFORMS_PASSES_TD
#define TANDEM_DIALECT_TANDEM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PrintWork : Pass<"tandem-print-work", "::mlir::ModuleOp"> {
  let summary = "Print each op's work estimate and the devices that can run it";
  let description = [{
    For every function, prints one row per op that implements the work and
    device contracts: its index in program order, name, source location,
    FLOPs, bytes read, bytes written, the bytes its results occupy (for a
    weight, its resident memory), the devices that can run it and the
    operands it reads on the host; then the totals. The IR is unchanged.

    This is what the cost model sees before any placement decision.
  }];
  let dependentDialects = [];
}

#endif // TANDEM_DIALECT_TANDEM_TRANSFORMS_PASSES_TD
