//===- TandemInterfaces.td - work, device and runtime contracts -*- tablegen -*-===//
//
// The contracts every op that placement and code generation see implement.
// A rule about an op's cost, where it may run or how the runtime executes it
// lives here (or in the op's implementation of these methods), never in a
// pass's switch over op names.
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
      /*defaultImplementation=*/[{
        return kind != ::mlir::tandem::DeviceKind::GPU ||
               ::mlir::tandem::fitsGpuKernels($_op.getOperation());
      }]
    >,
    InterfaceMethod<
      "Returns true if the operand at `operandIndex` is read on the host.",
      "bool", "isHostOperand", (ins "unsigned":$operandIndex),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return false;"
    >,
    InterfaceMethod<
      [{Returns the scratch GPU memory the op's GPU kernel may use while it
        runs (a library's workspace), in bytes. Placement counts it against
        the budget at the op's own step, and --tandem-plan-memory gives it
        arena bytes there (`tandem.workspace_offset`).}],
      "int64_t", "getGpuWorkspaceBytes", (ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return 0;"
    >
  ];
}

def Tandem_RuntimeOpInterface : OpInterface<"RuntimeOpInterface"> {
  let cppNamespace = "::mlir::tandem";
  let description = [{
    How a compiled model's runtime executes the op: the kind it is run as
    and the attribute words that follow the kind in the model image. The
    kinds are listed once, in the runtime's `OpKinds.def`, with the layout
    of each kind's attribute words (`ImageAttrs.h`); an op names its kind in
    its definition (`Tandem_RunsAs<"Kind">` in TandemOps.td) and writes its
    attributes with the struct of that layout, so the compiler, the image
    reader and the kernels of every backend read one description.

    Ops without this interface are not executed: a weight is read where it
    was loaded, and a view (`ViewLikeOpInterface`, e.g. `tandem.reshape`)
    is its source's buffer.
  }];

  let methods = [
    InterfaceMethod<
      "Returns the kind (`::tandem::image::OpKind`) the runtime runs the op as.",
      "int64_t", "getRuntimeKind", (ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return ConcreteOp::kRuntimeKind;"
    >,
    InterfaceMethod<
      [{Appends the op's attribute words (the layout OpKinds.def gives its
        kind) to `words`; emits an error on the op and fails if the runtime
        cannot represent them.}],
      "::mlir::LogicalResult", "writeRuntimeAttrs",
      (ins "std::vector<int64_t> &":$words),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return ::mlir::success();"
    >
  ];
}

#endif // TANDEM_DIALECT_TANDEM_IR_TANDEMINTERFACES_TD
