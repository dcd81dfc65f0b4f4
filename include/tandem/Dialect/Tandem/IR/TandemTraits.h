//===- TandemTraits.h - op traits of the tandem dialect ---------*- C++ -*-===//

#ifndef TANDEM_DIALECT_TANDEM_IR_TANDEMTRAITS_H
#define TANDEM_DIALECT_TANDEM_IR_TANDEMTRAITS_H

#include "mlir/IR/OpDefinition.h"

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

} // namespace mlir::tandem::OpTrait

#endif // TANDEM_DIALECT_TANDEM_IR_TANDEMTRAITS_H
