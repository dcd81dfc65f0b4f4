//===- TandemInterfaces.td - work and device contracts ----*- tablegen -*-===//
//
// The two contracts every op that placement sees implements. A rule about an
// op's cost or where it may run lives here (or in the op's implementation of
// these methods), never in a pass's switch over op names.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_TANDEM_IR_TANDEMINTERFACES_TD
#define TANDEM_DIALECT_TANDEM_IR_TANDEMINTERFACES_TD

include "mlir/IR/OpBase.td"

def Tandem_WorkEstimateOpInterface : OpInterface<"WorkEstimateOpInterface"> {
  let cppNamespace = "::mlir::tandem";
  let description = [{
    The work an op does, for the cost model: floating-point (or integer)
    operations, bytes read from memory and bytes written to memory, counted
    once per execution from the static operand and result types.

    Conventions, shared by every op:
    - FLOPs count one per arithmetic operation (a multiply-add is two).
      Transcendental functions count a fixed number per element, documented
      with the op, from the length of a typical polynomial evaluation.
    - Bytes read count each operand once (broadcast operands are assumed to
      stay in cache), except for ops that read only part of an operand
      (slices, gathers, embedding lookups), which count what they touch.
    - Bytes written count each result once.
    - An op that only relabels its input (a reshape) does no work.
  }];

  let methods = [
    InterfaceMethod<
      /*desc=*/"Returns the FLOPs and bytes moved by one execution of the op.",
      /*retTy=*/"::mlir::tandem::WorkEstimate",
      /*methodName=*/"estimateWork",
      /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::mlir::tandem::estimateElementwiseWork($_op.getOperation(),
                                                       /*flopsPerElement=*/1);
      }]
    >
  ];
}

def Tandem_DeviceSupportOpInterface : OpInterface<"DeviceSupportOpInterface"> {
  let cppNamespace = "::mlir::tandem";
  let description = [{
    Where an op can run, and which of its operands it reads on the host even
    when it runs on a GPU. A host operand is a shape- or offset-like value the
    host needs in order to launch the op (`dynamic_slice`'s offsets): if it is
    produced on a GPU it has to be copied back before the op can start, which
    is the trap placement must see.
  }];

  let methods = [
    InterfaceMethod<
      "Returns true if the op can run on a device of the given kind.",
      "bool", "canRunOn", (ins "::mlir::tandem::DeviceKind":$kind),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return true;"
    >,
    InterfaceMethod<
      "Returns true if the operand at `operandIndex` is read on the host.",
      "bool", "isHostOperand", (ins "unsigned":$operandIndex),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return false;"
    >
  ];
}

#endif // TANDEM_DIALECT_TANDEM_IR_TANDEMINTERFACES_TD
