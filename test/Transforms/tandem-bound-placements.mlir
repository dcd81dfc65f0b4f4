// The makespan bound's placements term (lib/Analysis/MakespanBound.cpp): a
// tower of four 1024x1024 linears at batch 256 (4 MiB of weights, 1 MiB of
// activations each) under a 9 MiB budget. The chain term lets every layer
// run on the GPU with its weights resident, 149 us; but beside one resident
// weight there is no room to stream another (4 + 4 + 1 + 1 MiB), and two
// resident weights leave no room for a layer's activations, so every
// placement that can fit runs most layers on the CPU. The placements term,
// the least of each such placement's own bound, is more than twice the
// chain term; it is 2.6 times with the rule that a weight's copy cannot run
// beside an op whose own buffers leave no room for it (the copy then waits
// for the op, on the path to the weight's reader).
// RUN: tandem-opt %S/Inputs/models/mlp-tower.mlir --tandem-placement-pipeline="device-profile=h200 gpu-memory=9437184 report=%t.json" -o /dev/null
// RUN: %python %S/check_report.py %t.json | FileCheck %s
// RUN: %python -c "import json,sys; r = json.load(open(sys.argv[1])); t = r['makespan_bound_terms_us']; assert t['placements'] is not None and t['placements'] > 2.5 * t['chain'] and t['placements'] > t['load'], t; assert r['lower_bound_us'] == t['placements'] <= r['predicted_us']['makespan'], r" %t.json
// With the memory to keep every weight resident, the bound is the makespan:
// the placement is optimal under every schedule.
// RUN: tandem-opt %S/Inputs/models/mlp-tower.mlir --tandem-placement-pipeline="device-profile=h200 report=%t.free.json" -o /dev/null
// RUN: %python -c "import json,sys; r = json.load(open(sys.argv[1])); m = r['predicted_us']['makespan']; assert abs(r['lower_bound_us'] - m) <= 1e-9 * m, r" %t.free.json

// CHECK: schedule: ok
