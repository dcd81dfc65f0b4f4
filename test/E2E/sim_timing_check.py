"""Checks paced runs (--sim-timing=profile) against the compiler's report.

Usage: sim_timing_check.py REPORT PACED_PROFILE SERIAL_PROFILE SCALE

The paced concurrent run's per-run makespan is at least the report's
predicted makespan times the scale, and the paced serial run's at least the
serial time times the scale (pacing holds each op to at least its slot, and
the queues keep their order and waits); the image's predictions, as the
profile reports them, are the report's.
"""
import json
import math
import sys

report = json.load(open(sys.argv[1]))
paced = json.load(open(sys.argv[2]))
serial = json.load(open(sys.argv[3]))
scale = float(sys.argv[4])
predicted = report["predicted_us"]
failures = 0


def check(name, profile, key, what):
    global failures
    schedule = profile["schedule"]
    expected = predicted[key] * scale
    measured = schedule["makespan_us"]
    # The image records each time to the nanosecond.
    if not math.isclose(schedule["predicted_us"], expected, rel_tol=1e-3,
                        abs_tol=scale * 1e-3 * 50):
        print(f"{name}: the profile predicts {schedule['predicted_us']} us, "
              f"the report {expected} us")
        failures += 1
        return False
    if schedule["sim_timing"] is None or schedule["sim_timing"]["scale"] != scale:
        print(f"{name}: not paced at x{scale}: {schedule['sim_timing']}")
        failures += 1
        return False
    if measured < expected * 0.995:
        print(f"{name}: measured {measured} us per run, below the paced "
              f"prediction {expected} us")
        failures += 1
        return False
    print(f"{name}: predicted {what} {predicted[key]:.3f} us x {scale:g}, "
          f"measured at least that")
    return True


ok = check("concurrent", paced, "makespan", "makespan")
ok &= check("serial", serial, "serial", "serial time")
if not paced["schedule"]["concurrent"] or serial["schedule"]["concurrent"]:
    print("the paced run was not concurrent, or the serial one was")
    failures += 1
elif ok:
    print("the image's predictions are the report's")
sys.exit(1 if failures else 0)
