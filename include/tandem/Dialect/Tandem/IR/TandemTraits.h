//===- TandemTraits.h - op traits of the tandem dialect ---------*- C++ -*-===//

#ifndef TANDEM_DIALECT_TANDEM_IR_TANDEMTRAITS_H
#define TANDEM_DIALECT_TANDEM_IR_TANDEMTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::tandem {

/// The kinds the runtime executes ops as, numbered as the model image's
/// `::tandem::image::OpKind` (both come from the runtime's OpKinds.def).
enum class RuntimeKind : int64_t {
#define TANDEM_OP_KIND(Name, Family, Attrs) Name,
#include "tandem/runtime/OpKinds.def"
};

} // namespace mlir::tandem

namespace mlir::tandem::OpTrait {

namespace impl {
LogicalResult verifyBroadcastsOperands(Operation *op);
LogicalResult verifyAddressableTensors(Operation *op);
} // namespace impl

/// The operands' shapes broadcast together (NumPy rules) to exactly the
/// result's shape.
template <typename ConcreteType>
class BroadcastsOperands
    : public ::mlir::OpTrait::TraitBase<ConcreteType, BroadcastsOperands> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return impl::verifyBroadcastsOperands(op);
  }
};

/// Every operand and result takes at most kMaxTensorBytes.
template <typename ConcreteType>
class AddressableTensors
    : public ::mlir::OpTrait::TraitBase<ConcreteType, AddressableTensors> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return impl::verifyAddressableTensors(op);
  }
};

/// The op runs as runtime kind `Kind`; read through
/// RuntimeOpInterface::getRuntimeKind.
template <RuntimeKind Kind> struct RunsAs {
  template <typename ConcreteType>
  class Impl : public ::mlir::OpTrait::TraitBase<ConcreteType, Impl> {
  public:
    static constexpr int64_t kRuntimeKind = int64_t(Kind);
  };
};

} // namespace mlir::tandem::OpTrait

#endif // TANDEM_DIALECT_TANDEM_IR_TANDEMTRAITS_H
