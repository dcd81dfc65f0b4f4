// Every strategy on the recommender of user story 1 (10M x 150 table,
// MLP tower, batch 4096) on a V100 with a 4 GiB budget. The report's
// objective is recomputed from its ops and values by check_report.py.

// auto: the lookup on the CPU (the table does not fit), the GEMMs on the GPU.
// RUN: tandem-opt %tandem_src_root/examples/recommender.mlir --tandem-place="device-profile=v100-32gb gpu-memory=4GiB report=%t.auto.json" -o /dev/null
// RUN: %python %S/check_report.py %t.auto.json | FileCheck %s --check-prefix=AUTO
// AUTO: strategy auto profile v100-32gb
// AUTO: objective recomputed: ok
// AUTO: op 0 tandem.weight cpu
// AUTO-NEXT: op 1 tandem.embedding cpu
// AUTO: op 10 tandem.linear gpu
// AUTO: op 14 tandem.linear gpu
// AUTO: peak within budget
// AUTO: optimal_us null

// mincut ignores the budget and says so.
// RUN: tandem-opt %tandem_src_root/examples/recommender.mlir --tandem-place="device-profile=v100-32gb gpu-memory=256MiB strategy=mincut report=%t.mincut.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MINCUT-WARN
// MINCUT-WARN: warning: strategy 'mincut' uses {{[0-9]+}} bytes of GPU memory, over the budget of 268435456 bytes
// RUN: %python %S/check_report.py %t.mincut.json | FileCheck %s --check-prefix=MINCUT
// MINCUT: peak over budget

// greedy is accelerate's infer_auto_device_map: the table comes first and
// does not fit, so everything after it is offloaded to the CPU.
// RUN: tandem-opt %tandem_src_root/examples/recommender.mlir --tandem-place="device-profile=v100-32gb gpu-memory=4GiB strategy=greedy report=%t.greedy.json" -o /dev/null
// RUN: %python %S/check_report.py %t.greedy.json | FileCheck %s --check-prefix=GREEDY
// GREEDY: op 10 tandem.linear cpu
// GREEDY: op 14 tandem.linear cpu
// GREEDY: transfers h2d 0 d2h 0

// all-cpu places everything on the CPU, with no transfer.
// RUN: tandem-opt %tandem_src_root/examples/recommender.mlir --tandem-place="device-profile=v100-32gb strategy=all-cpu report=%t.cpu.json" -o /dev/null
// RUN: %python %S/check_report.py %t.cpu.json | FileCheck %s --check-prefix=ALLCPU
// ALLCPU-NOT: gpu
// ALLCPU: transfers h2d 0 d2h 0

// all-gpu fits in 32 GiB but not in 4 GiB.
// RUN: tandem-opt %tandem_src_root/examples/recommender.mlir --tandem-place="device-profile=v100-32gb strategy=all-gpu report=%t.gpu.json" -o /dev/null
// RUN: %python %S/check_report.py %t.gpu.json | FileCheck %s --check-prefix=ALLGPU
// ALLGPU: op 1 tandem.embedding gpu
// ALLGPU: transfers h2d 2 d2h 1
// RUN: not tandem-opt %tandem_src_root/examples/recommender.mlir --tandem-place="device-profile=v100-32gb gpu-memory=4GiB strategy=all-gpu" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALLGPU-OVER
// ALLGPU-OVER: error: cannot place @main: strategy 'all-gpu' needs {{[0-9]+}} bytes of GPU memory, over the budget of 4294967296 bytes

// exact proves the optimum and agrees with auto here.
// RUN: tandem-opt %tandem_src_root/examples/recommender.mlir --tandem-place="device-profile=v100-32gb gpu-memory=4GiB strategy=exact report=%t.exact.json" -o /dev/null
// RUN: %python %S/check_report.py %t.exact.json | FileCheck %s --check-prefix=EXACT
// EXACT: strategy exact
// EXACT: op 1 tandem.embedding cpu
// EXACT: optimal_us set
// RUN: %python -c "import json,sys; a=json.load(open(sys.argv[1])); e=json.load(open(sys.argv[2])); assert abs(a['predicted_us']['total'] - e['optimal_us']) <= 1e-6 * e['optimal_us'], (a['predicted_us'], e['optimal_us'])" %t.auto.json %t.exact.json
