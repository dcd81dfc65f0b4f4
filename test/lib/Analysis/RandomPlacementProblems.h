//===- RandomPlacementProblems.h - random graphs for tests and benchmarks -*- C++ -*-===//

#ifndef TANDEM_ANALYSIS_RANDOMPLACEMENTPROBLEMS_H
#define TANDEM_ANALYSIS_RANDOMPLACEMENTPROBLEMS_H

#include "tandem/Analysis/PlacementProblem.h"

#include <random>

namespace mlir::tandem {

/// A random DAG of `numOps` single-result ops over two arguments, with
/// random costs and sizes, about 20% weights, 8% pins, 10% ops that cannot
/// run on the GPU, 10% host operands and some reshapes (ops whose result
/// aliases their only operand on the GPU). The budget is unlimited.
PlacementProblem makeRandomPlacementProblem(std::mt19937 &rng, int numOps);

/// A budget that binds: between the least GPU memory any placement needs and
/// what the unconstrained optimum uses.
int64_t makeBindingBudget(std::mt19937 &rng, const PlacementProblem &problem);

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_RANDOMPLACEMENTPROBLEMS_H
