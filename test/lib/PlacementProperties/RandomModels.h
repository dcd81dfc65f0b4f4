//===- RandomModels.h - random tandem models as MLIR text -------*- C++ -*-===//
//
// Random DAGs written as tandem IR (generic form), for the placement
// property tests: GEMMs, elementwise and broadcasting ops, reductions,
// reshapes, transposes, concats, fills, `shape` and `dynamic_slice` with
// offsets computed on either device, duplicated ops that CSE merges, and
// pins. Every model parses and verifies.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TEST_PLACEMENTPROPERTIES_RANDOMMODELS_H
#define TANDEM_TEST_PLACEMENTPROPERTIES_RANDOMMODELS_H

#include <random>
#include <string>

namespace mlir::tandem {

/// A random model of about `numOps` tandem ops with its @main function.
std::string makeRandomModel(std::mt19937 &rng, int numOps);

} // namespace mlir::tandem

#endif // TANDEM_TEST_PLACEMENTPROPERTIES_RANDOMMODELS_H
