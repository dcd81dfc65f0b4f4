"""Checks a placement report and prints what tests look at.

Recomputes the objective from `ops` and `values` alone, as the report's
contract says anyone can, and fails unless it equals predicted_us.total.
Then prints one line per op ("op ID NAME DEVICE"), the transfers and whether
the peak fits the budget, for FileCheck.
"""
import json
import math
import sys

report = json.load(open(sys.argv[1]))
required = ["strategy", "device_profile", "gpu_memory_budget_bytes",
            "peak_gpu_bytes", "gpu_arena_bytes", "predicted_us", "optimal_us",
            "lower_bound_us", "transfers", "ops", "values"]
missing = [key for key in required if key not in report]
if missing:
    sys.exit(f"report lacks {missing}")

device = {op["id"]: op["device"] for op in report["ops"]}
total = 0.0
for op in report["ops"]:
    us = op["cpu_us"] if op["device"] == "cpu" else op["gpu_us"]
    if us is None:
        sys.exit(f"op {op['id']} is on a device it cannot run on")
    total += us
h2d = d2h = 0
for value in report["values"]:
    home = "cpu" if value["producer"] < 0 else device[value["producer"]]
    needed = {("cpu" if c == -1 else device[c]) for c in value["consumers"]}
    if value["host_operand_of"]:
        needed.add("cpu")
    for where in needed - {home}:
        total += value["h2d_us"] if where == "gpu" else value["d2h_us"]
        h2d += where == "gpu"
        # A weight is read from the host's weights file: never copied back.
        d2h += where == "cpu" and not value["weight"]

predicted = report["predicted_us"]["total"]
if not math.isclose(total, predicted, rel_tol=1e-9, abs_tol=1e-9):
    sys.exit(f"recomputed objective {total} != predicted_us.total {predicted}")
parts = report["predicted_us"]
if not math.isclose(parts["cpu_compute"] + parts["gpu_compute"] +
                    parts["transfer"], predicted, rel_tol=1e-9):
    sys.exit("predicted_us parts do not add up to the total")
if (h2d, d2h) != (report["transfers"]["h2d_count"],
                  report["transfers"]["d2h_count"]):
    sys.exit(f"transfer counts {h2d}, {d2h} disagree with the report")

# A proven lower bound never exceeds the time; a proven optimum is the time.
bound = report.get("lower_bound_us")
if bound is not None and bound > predicted * (1 + 1e-9) + 1e-9:
    sys.exit(f"lower_bound_us {bound} exceeds predicted_us.total {predicted}")
if report["optimal_us"] is not None and not math.isclose(
        report["optimal_us"], predicted, rel_tol=1e-9):
    sys.exit(f"optimal_us {report['optimal_us']} is not the total {predicted}")

# The schedule (--tandem-schedule adds it): its op times sum to the serial
# time, which is the placement's total; each queue runs one op at a time;
# the makespan is the last end, between the lower bound and the serial time.
schedule = report.get("schedule")
if schedule is not None:
    serial = sum(item["end_us"] - item["start_us"] for item in schedule)
    if not math.isclose(serial, parts["serial"], rel_tol=1e-9, abs_tol=1e-6):
        sys.exit(f"schedule's op times sum to {serial}, not serial {parts['serial']}")
    if not math.isclose(parts["serial"], predicted, rel_tol=1e-9, abs_tol=1e-6):
        sys.exit(f"serial {parts['serial']} is not the placement's total {predicted}")
    makespan = max((item["end_us"] for item in schedule), default=0.0)
    if not math.isclose(makespan, parts["makespan"], rel_tol=1e-9, abs_tol=1e-6):
        sys.exit(f"schedule ends at {makespan}, not the makespan {parts['makespan']}")
    free = {}
    for item in schedule:
        if item["start_us"] < free.get(item["queue"], 0.0) - 1e-6:
            sys.exit(f"step {item['step']} starts before its queue is free")
        free[item["queue"]] = item["end_us"]
    bound = report["makespan_lower_bound_us"]
    if not bound <= makespan * (1 + 1e-9) + 1e-9 <= parts["serial"] * (1 + 1e-9) + 2e-9:
        sys.exit(f"not lower bound {bound} <= makespan {makespan} <= serial "
                 f"{parts['serial']}")

print(f"strategy {report['strategy']} profile {report['device_profile']}")
print("objective recomputed: ok")
for op in report["ops"]:
    pinned = " pinned" if op["pinned"] else ""
    print(f"op {op['id']} {op['name']} {op['device']}{pinned}")
print(f"transfers h2d {h2d} d2h {d2h}")
fits = report["peak_gpu_bytes"] <= report["gpu_memory_budget_bytes"]
print(f"peak {'within' if fits else 'over'} budget")
print(f"optimal_us {'set' if report['optimal_us'] is not None else 'null'}")
if schedule is not None:
    print("schedule: ok")
