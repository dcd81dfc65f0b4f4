"""Compiles a model under each strategy with --report, runs the binary on
sim with --profile-json, and prints whether the report's arena and copy
counts are the binary's."""
import json
import os
import subprocess
import sys

compiler, model, work = sys.argv[1], sys.argv[2], sys.argv[3]
for strategy in ("greedy", "auto", "exact", "all-gpu", "all-cpu"):
    binary = os.path.join(work, strategy)
    report, profile = binary + ".report.json", binary + ".profile.json"
    subprocess.run([compiler, model, f"--strategy={strategy}",
                    "--device-profile=v100-32gb", "--gpu-memory=1MiB",
                    f"--report={report}", "-o", binary], check=True)
    subprocess.run([binary, "--random-inputs", "1", "--random-weights", "1",
                    "--device-backend", "sim", "--profile-json", profile],
                   check=True)
    planned, ran = json.load(open(report)), json.load(open(profile))
    copies = planned["transfers"]
    same = (copies["h2d_count"] == ran["copies"]["h2d_count"] and
            copies["d2h_count"] == ran["copies"]["d2h_count"] and
            copies["h2d_bytes"] == ran["copies"]["h2d_bytes"] and
            copies["d2h_bytes"] == ran["copies"]["d2h_bytes"])
    arena_ok = planned["gpu_arena_bytes"] == ran["gpu_arena_bytes"]
    print(f"{strategy}: report arena {planned['gpu_arena_bytes']} "
          f"{'=' if arena_ok else '!='} binary arena {ran['gpu_arena_bytes']}, "
          f"copies {'match' if same else 'differ: ' + str(copies) + ' vs ' + str(ran['copies'])}")
