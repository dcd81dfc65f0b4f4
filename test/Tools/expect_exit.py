"""Runs a command and fails unless it exits with the given status.

Usage: expect_exit.py STATUS COMMAND [ARGS...]
A crash (death by a signal) is reported as such and always fails.
"""
import subprocess
import sys

expected = int(sys.argv[1])
result = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL)
if result.returncode < 0:
    sys.exit(f"{sys.argv[2]} was killed by signal {-result.returncode}")
if result.returncode != expected:
    sys.exit(f"{sys.argv[2]} exited with {result.returncode}, "
             f"expected {expected}")
