"""Checks a placement report and prints what tests look at.

Recomputes the serial time from `ops` and `values` alone, as the report's
contract says anyone can, and fails unless it equals predicted_us.serial;
checks that predicted_us.total is the objective's value (the serial time or
the makespan; the makespan once the schedule is in), that every bound is
below what it bounds and that a proven optimum is the total.
Then prints one line per op ("op ID NAME DEVICE"), the transfers and whether
the peak fits the budget, for FileCheck.
"""
import json
import math
import sys

report = json.load(open(sys.argv[1]))
required = ["strategy", "objective", "device_profile",
            "gpu_memory_budget_bytes", "peak_gpu_bytes", "gpu_arena_bytes",
            "predicted_us", "optimal_us", "lower_bound_us",
            "serial_lower_bound_us", "makespan_lower_bound_us",
            "makespan_bound_terms_us", "transfers", "ops", "values"]
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

parts = report["predicted_us"]
serial = parts["serial"]
if not math.isclose(total, serial, rel_tol=1e-9, abs_tol=1e-9):
    sys.exit(f"recomputed serial time {total} != predicted_us.serial {serial}")
if not math.isclose(parts["cpu_compute"] + parts["gpu_compute"] +
                    parts["transfer"], serial, rel_tol=1e-9):
    sys.exit("predicted_us parts do not add up to the serial time")
predicted = parts["total"]
schedule = report.get("schedule")
objective_value = (parts["makespan"]
                   if report["objective"] == "makespan" or schedule is not None
                   else serial)
if not math.isclose(predicted, objective_value, rel_tol=1e-9, abs_tol=1e-9):
    sys.exit(f"predicted_us.total {predicted} is not the objective's value "
             f"{objective_value}")
if parts["makespan"] > serial * (1 + 1e-9) + 1e-9:
    sys.exit(f"makespan {parts['makespan']} exceeds the serial time {serial}")
if (h2d, d2h) != (report["transfers"]["h2d_count"],
                  report["transfers"]["d2h_count"]):
    sys.exit(f"transfer counts {h2d}, {d2h} disagree with the report")

# A proven lower bound never exceeds the time; a proven optimum is the time.
def below(bound, value, what):
    if bound is not None and bound > value * (1 + 1e-9) + 1e-9:
        sys.exit(f"{what} {bound} exceeds {value}")
# The bounds hold for placements within the budget (mincut and greedy may
# not be).
within = report["gpu_arena_bytes"] <= report["gpu_memory_budget_bytes"]
if within:
    below(report["lower_bound_us"], predicted, "lower_bound_us")
    below(report["serial_lower_bound_us"], serial, "serial_lower_bound_us")
    below(report["makespan_lower_bound_us"], parts["makespan"],
          "makespan_lower_bound_us")
terms = report["makespan_bound_terms_us"]
largest_term = max(terms["chain"], terms["load"], terms["memory"],
                   terms["placements"] or 0)
if not math.isclose(largest_term, report["makespan_lower_bound_us"],
                    rel_tol=1e-9):
    sys.exit("makespan_lower_bound_us is not the largest of its terms")
optimized = serial if report["objective"] == "serial" else parts["makespan"]
if report["optimal_us"] is not None and not math.isclose(
        report["optimal_us"], optimized, rel_tol=1e-9):
    sys.exit(f"optimal_us {report['optimal_us']} is not the objective's "
             f"value {optimized}")

# The schedule (--tandem-schedule adds it): its op times sum to the serial
# time; each queue runs one op at a time; the makespan is the last end,
# between the lower bound and the serial time.
if schedule is not None:
    summed = sum(item["end_us"] - item["start_us"] for item in schedule)
    if not math.isclose(summed, serial, rel_tol=1e-9, abs_tol=1e-6):
        sys.exit(f"schedule's op times sum to {summed}, not serial {serial}")
    makespan = max((item["end_us"] for item in schedule), default=0.0)
    if not math.isclose(makespan, parts["makespan"], rel_tol=1e-9, abs_tol=1e-6):
        sys.exit(f"schedule ends at {makespan}, not the makespan {parts['makespan']}")
    free = {}
    for item in schedule:
        if item["start_us"] < free.get(item["queue"], 0.0) - 1e-6:
            sys.exit(f"step {item['step']} starts before its queue is free")
        free[item["queue"]] = item["end_us"]
    bound = report["makespan_lower_bound_us"] if within else 0.0
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
