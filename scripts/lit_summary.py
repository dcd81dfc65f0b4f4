"""Turns lit's closing summary into 'N skipped' and 'N passed, N failed'.

Reads a lit log (lit -s output); exits 1 if any test failed or if the log
holds no summary at all (lit did not run).
"""
import re
import sys

PASSED = {"Passed", "Passed With Retry", "Expectedly Failed"}
FAILED = {"Failed", "Unresolved", "Timed Out", "Unexpectedly Passed"}
SKIPPED = {"Unsupported", "Skipped"}

counts = {}
for line in open(sys.argv[1], errors="replace"):
    match = re.match(r"^\s+([A-Za-z ]+?)\s*:\s*(\d+)\s+\(", line)
    if match:
        counts[match.group(1)] = int(match.group(2))

passed = sum(counts.get(key, 0) for key in PASSED)
failed = sum(counts.get(key, 0) for key in FAILED)
skipped = sum(counts.get(key, 0) for key in SKIPPED)
if not counts:
    failed = max(failed, 1)
    print("lit printed no summary", file=sys.stderr)
# The last line is exactly "N passed, N failed", the form CI reads.
print(f"{skipped} skipped (unsupported on this machine)")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
