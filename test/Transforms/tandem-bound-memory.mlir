// The makespan bound's memory term (lib/Analysis/MakespanBound.cpp): the test
// decoder (8 layers, 268 MiB at its unlimited peak) under a quarter of that
// peak. The chain term runs every layer on the GPU with its weights there
// for free; the load term streams the weights beyond the budget over the
// link while the GPU computes. Neither sees that the bytes on the GPU,
// integrated over the run, stay within the budget times the makespan: a
// resident weight holds its bytes for the whole run, a streamed one while it
// is copied and while its readers run, and each layer's activations while it
// runs. With one dependency path (the layers run one after another) in the
// same relaxation and the ops' spans (below), the memory term is 15% above
// the chain term.
// RUN: tandem-opt %S/Inputs/models/decoder.mlir --tandem-placement-pipeline="device-profile=h200 gpu-memory=70375456 report=%t.json" -o /dev/null
// RUN: %python %S/check_report.py %t.json | FileCheck %s
// RUN: %python -c "import json,sys; r = json.load(open(sys.argv[1])); t = r['makespan_bound_terms_us']; assert t['memory'] > 1.1 * max(t['chain'], t['load']), t; assert r['lower_bound_us'] == t['memory'] <= r['predicted_us']['makespan'], r" %t.json
// Where the budget does not bind, the memory rows add nothing; the term is
// what the ops' spans give: each op is kept off a device where its earliest
// start, its time and the least that must follow it exceed the makespan (a
// layer's products on the CPU), and the ops so left on the GPU run there one
// at a time, after the first can start and before the least that follows
// the last: above the chain term (one path), and still below the makespan.
// RUN: tandem-opt %S/Inputs/models/decoder.mlir --tandem-placement-pipeline="device-profile=h200 report=%t.free.json" -o /dev/null
// RUN: %python -c "import json,sys; r = json.load(open(sys.argv[1])); t = r['makespan_bound_terms_us']; assert 1.02 * max(t['chain'], t['load']) < t['memory'] == r['lower_bound_us'] <= r['predicted_us']['makespan'], r" %t.free.json

// CHECK: schedule: ok
