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
