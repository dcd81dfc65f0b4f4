#!/usr/bin/env python3
"""Prints the schedule --tandem-schedule added to a placement report: the
predicted serial time and makespan, the lower bound, each queue's busy time,
and the ops as lanes of a text timeline (one row per queue).

usage: schedule_summary.py REPORT.json [WIDTH]
"""
import json
import sys

QUEUES = ("cpu", "gpu", "h2d", "d2h")


def main():
    report = json.load(open(sys.argv[1]))
    width = int(sys.argv[2]) if len(sys.argv) > 2 else 72
    schedule = report.get("schedule")
    if schedule is None:
        sys.exit(f"{sys.argv[1]}: no schedule (run --tandem-placement-pipeline "
                 "with report=FILE)")
    predicted = report["predicted_us"]
    serial, makespan = predicted["serial"], predicted["makespan"]
    bound = report["makespan_lower_bound_us"]
    window = report["schedule_window"]
    widened = report.get("schedule_widened_copies", 0)
    print(f"serial {serial:.1f} us (one op at a time), makespan {makespan:.1f} us "
          f"(queues at once): {serial / makespan if makespan else 1:.2f}x; "
          f"lower bound {bound:.1f} us (makespan {makespan / bound if bound else 1:.2f}x it)")
    busy = predicted["queue_busy"]
    print("busy: " + ", ".join(f"{q} {busy[q]:.1f} us" for q in QUEUES) +
          f"; copy time hidden under compute {predicted['hidden_copy']:.1f} us; "
          f"{report['schedule_waits']} waits; window "
          f"{'unbounded' if window is None else window}" +
          (f" ({widened} copies prefetched further)" if widened else ""))
    if makespan <= 0:
        return
    scale = width / makespan
    for queue in QUEUES:
        lane = [" "] * width
        for item in schedule:
            if item["queue"] != queue:
                continue
            first = min(width - 1, int(item["start_us"] * scale))
            last = max(first, min(width - 1, int(item["end_us"] * scale) - 1))
            mark = item["name"].split(".")[-1][0]
            for k in range(first, last + 1):
                lane[k] = mark
        print(f"  {queue:<4}|{''.join(lane)}|")
    print(f"       0{'':{width - len(f'{makespan:.0f} us') - 1}}{makespan:.0f} us")
    print("  (each op drawn with its name's first letter: l = linear, e = embedding, t = transfer ...)")


if __name__ == "__main__":
    main()
