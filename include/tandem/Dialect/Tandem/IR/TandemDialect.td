//===- TandemDialect.td - The tandem dialect ---------------*- tablegen -*-===//
//
// The dialect definition; the op base classes live in TandemOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_TANDEM_IR_TANDEMDIALECT_TD
#define TANDEM_DIALECT_TANDEM_IR_TANDEMDIALECT_TD

include "mlir/IR/OpBase.td"

def Tandem_Dialect : Dialect {
  let name = "tandem";
  let cppNamespace = "::mlir::tandem";
  let summary = "Tensor ops placed on CPU and GPU under a memory budget";
  let description = [{
    The `tandem` dialect describes a model as a function `@main` over ranked,
    statically shaped builtin tensors. Every op carries two contracts used by
    placement: a work estimate (FLOPs, bytes read, bytes written) and device
    support (which devices can run it, which operands it reads on the host).

    Two discardable attributes are understood on any op:
    `tandem.device = #tandem.device<...>`, where the op runs (written by
    `--tandem-place`), and `tandem.pin = #tandem.device<...>`, the user's fixed
    choice. Both are verified: the value must be a `#tandem.device` and the op
    must be able to run there.
  }];

  // `tandem.shape` folds to an `arith.constant`.
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  // Inherent attributes live in the attribute dictionary, so the generic form
  // is `"tandem.softmax"(%x) {axis = 1 : i64}` exactly as the IR contract and
  // the Python exporter write it.
  let usePropertiesForAttributes = 0;

  let extraClassDeclaration = [{
    /// Names of the discardable attributes this dialect understands.
    static constexpr ::llvm::StringLiteral kDeviceAttrName = "tandem.device";
    static constexpr ::llvm::StringLiteral kPinAttrName = "tandem.pin";
  }];
}

#endif // TANDEM_DIALECT_TANDEM_IR_TANDEMDIALECT_TD
