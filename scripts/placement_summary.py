"""Prints a placement report (--tandem-place=report=FILE) as tables.

Usage: placement_summary.py REPORT [BASELINE_REPORT ...]
The first report is shown op by op; every report, the first included, gets
one row in the comparison of strategies.
"""
import json
import sys


def megabytes(count):
    return f"{count / 2**20:.2f} MiB"


def time(us):
    return "-" if us is None else f"{us:.1f}"


def t0(report):
    return report["predicted_us"]["makespan"]


def main():
    reports = [json.load(open(path)) for path in sys.argv[1:]]
    first = reports[0]
    print(f"placement of @{first['function']} by strategy "
          f"'{first['strategy']}' on profile '{first['device_profile']}', "
          f"GPU budget {megabytes(first['gpu_memory_budget_bytes'])}")
    print()
    print(f"{'#':>3}  {'op':<20} {'location':<34} {'device':<6} "
          f"{'cpu us':>10} {'gpu us':>10}")
    for op in first["ops"]:
        pinned = " (pinned)" if op["pinned"] else ""
        loc = op["loc"] if len(op["loc"]) <= 34 else "..." + op["loc"][-31:]
        print(f"{op['id']:>3}  {op['name']:<20} {loc:<34} "
              f"{op['device']:<6} {time(op['cpu_us']):>10} "
              f"{time(op['gpu_us']):>10}{pinned}")
    print()
    # makespan: the four queues at once (what the schedule will take);
    # serial: every op and copy one at a time, split into its parts.
    print(f"{'strategy':<10} {'makespan us':>11} {'vs first':>8} "
          f"{'serial us':>10} {'cpu us':>10} {'gpu us':>10} {'copy us':>10} "
          f"{'h2d':>4} {'d2h':>4} {'peak GPU':>14}  fits")
    for report in reports:
        t = report["predicted_us"]
        c = report["transfers"]
        fits = report["peak_gpu_bytes"] <= report["gpu_memory_budget_bytes"]
        ratio = t["makespan"] / first["predicted_us"]["makespan"]
        print(f"{report['strategy']:<10} {t['makespan']:>11.1f} {ratio:>7.2f}x "
              f"{t['serial']:>10.1f} {t['cpu_compute']:>10.1f} "
              f"{t['gpu_compute']:>10.1f} {t['transfer']:>10.1f} "
              f"{c['h2d_count']:>4} {c['d2h_count']:>4} "
              f"{megabytes(report['peak_gpu_bytes']):>14}  "
              f"{'yes' if fits else 'NO'}")
    if "lower_bound_us" in first and first["lower_bound_us"] is not None:
        bound = first["lower_bound_us"]
        print(f"\n{first['strategy']}: makespan {t0(first):.1f} us, certified "
              f"lower bound {bound:.1f} us (gap {t0(first) / bound:.3f}x)")


if __name__ == "__main__":
    main()
