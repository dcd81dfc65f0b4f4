//===- TandemAttrs.td - tandem attributes and enums -------*- tablegen -*-===//

#ifndef TANDEM_DIALECT_TANDEM_IR_TANDEMATTRS_TD
#define TANDEM_DIALECT_TANDEM_IR_TANDEMATTRS_TD

include "tandem/Dialect/Tandem/IR/TandemDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tandem_DeviceKind : I32EnumAttr<"DeviceKind", "kind of device", [
    I32EnumAttrCase<"CPU", 0, "cpu">,
    I32EnumAttrCase<"GPU", 1, "gpu">
  ]> {
  let cppNamespace = "::mlir::tandem";
  let genSpecializedAttr = 0;
}

def Tandem_DeviceAttr : AttrDef<Tandem_Dialect, "Device"> {
  let mnemonic = "device";
  let summary = "A device an op runs on: the host CPU or a GPU ordinal";
  let description = [{
    `#tandem.device<cpu>`, `#tandem.device<gpu>` (ordinal 0) or
    `#tandem.device<gpu, N>`. The CPU takes no ordinal; anything else is a
    parse error.
  }];
  let parameters = (ins
    EnumParameter<Tandem_DeviceKind>:$kind,
    DefaultValuedParameter<"int64_t", "0">:$ordinal
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    static DeviceAttr getCPU(::mlir::MLIRContext *context) {
      return get(context, DeviceKind::CPU, 0);
    }
    static DeviceAttr getGPU(::mlir::MLIRContext *context, int64_t ordinal = 0) {
      return get(context, DeviceKind::GPU, ordinal);
    }
    bool isCPU() const { return getKind() == DeviceKind::CPU; }
    bool isGPU() const { return getKind() == DeviceKind::GPU; }
  }];
}

def Tandem_QueueKind : I32EnumAttr<"QueueKind", "queue of a schedule", [
    I32EnumAttrCase<"CPU", 0, "cpu">,
    I32EnumAttrCase<"GPU", 1, "gpu">,
    I32EnumAttrCase<"H2D", 2, "h2d">,
    I32EnumAttrCase<"D2H", 3, "d2h">
  ]> {
  let cppNamespace = "::mlir::tandem";
  let genSpecializedAttr = 0;
}

def Tandem_QueueAttr : EnumAttr<Tandem_Dialect, Tandem_QueueKind, "queue"> {
  let summary = "A queue of a schedule: the CPU, the GPU's compute stream, or "
                "a copy engine";
  let description = [{
    `#tandem.queue<cpu>`, `#tandem.queue<gpu>`, `#tandem.queue<h2d>` (the
    host-to-device copy engine) or `#tandem.queue<d2h>` (device-to-host).
    Each queue runs its ops one at a time in block order; queues run
    concurrently, ordered only by `tandem.wait`.
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Tandem_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "comparison predicate", [
    I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
    I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
    I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>
  ]> {
  let cppNamespace = "::mlir::tandem";
  let genSpecializedAttr = 0;
}

def Tandem_ComparePredicateAttr
    : EnumAttr<Tandem_Dialect, Tandem_ComparePredicate, "predicate"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // TANDEM_DIALECT_TANDEM_IR_TANDEMATTRS_TD
