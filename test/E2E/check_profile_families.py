"""Checks a --profile-json's op families against its op runs and the
placement report: every op run names a family, each family's figures are
the sums of its ops' (calls, time, steady time, predicted time x calls),
its ratio is of the steady time (each op's average without its first
call, times its calls) over the predicted one, and the predicted times per
op sum to the report's predicted serial time.

Usage: check_profile_families.py PROFILE.json REPORT.json"""
import json
import math
import sys

profile = json.load(open(sys.argv[1]))
report = json.load(open(sys.argv[2]))
runs = profile["op_runs"]
sums = {}
for run in runs:
    assert run["family"], run
    entry = sums.setdefault((run["family"], run["device"]), [0, 0, 0.0, 0.0, 0.0])
    entry[0] += 1
    entry[1] += run["calls"]
    entry[2] += run["total_us"]
    entry[3] += run["predicted_us"] * run["calls"]
    calls = run["calls"]
    entry[4] += ((run["total_us"] - run["first_us"]) / (calls - 1) * calls
                 if calls > 1 else run["total_us"])
families = {(f["family"], f["device"]): f for f in profile["families"]}
assert set(families) == set(sums), (families.keys(), sums.keys())
for key, (ops, calls, total, predicted, steady) in sums.items():
    family = families[key]
    assert family["ops"] == ops and family["calls"] == calls, (family, ops, calls)
    assert math.isclose(family["total_us"], total, rel_tol=1e-6, abs_tol=0.01), (family, total)
    assert math.isclose(family["predicted_us"], predicted, rel_tol=1e-6, abs_tol=0.01), \
        (family, predicted)
    # Rounded to the nanosecond each, an op's first and total times give its
    # steady time within a nanosecond per call.
    assert math.isclose(family["steady_us"], steady, rel_tol=1e-6,
                        abs_tol=0.002 * calls), (family, steady)
    # The ratio is of the unrounded times; the times are written to the
    # nanosecond, so a short family's ratio from them differs by up to the
    # relative size of half a nanosecond in each.
    ratio = family["steady_us"] / family["predicted_us"]
    slack = (0.0005 / max(family["steady_us"], 0.001) +
             0.0005 / family["predicted_us"])
    assert math.isclose(family["measured_over_predicted"], ratio,
                        rel_tol=1e-6 + slack), (family, ratio)
per_run = sum(run["predicted_us"] for run in runs)
assert math.isclose(per_run, report["predicted_us"]["serial"], rel_tol=1e-4, abs_tol=0.01), \
    (per_run, report["predicted_us"])
print(f"{len(runs)} op runs, families {' '.join(sorted(f for f, _ in sums))}: "
      "sums agree with the ops and the report")
