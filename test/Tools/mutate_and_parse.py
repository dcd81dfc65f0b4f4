"""Feeds mutated copies of valid IR to a tool and counts how each one ends.

With --tool-arg, the tool runs passes too (the placement pipeline), so the
passes see the odd-but-valid IR that mutation produces.

A variant must either parse and verify (exit 0) or be rejected with an
`error:` diagnostic and exit 1. Anything else (a signal, another exit status,
an exit 1 with no diagnostic) is a crash: the script prints the variant and
fails.
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time


def mutate(text, rng):
    lines = text.splitlines(keepends=True)
    kind = rng.randrange(7)
    if kind == 0:  # cut short anywhere
        return text[: rng.randrange(len(text))]
    if kind == 1:  # flip some bytes
        data = bytearray(text.encode())
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return data.decode("utf-8", errors="replace")
    if kind == 2:  # drop a line
        del lines[rng.randrange(len(lines))]
        return "".join(lines)
    if kind == 3:  # swap two lines
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return "".join(lines)
    if kind == 4:  # change a number, to a small or an extreme one
        numbers = list(re.finditer(r"-?\d+", text))
        if not numbers:
            return text
        m = rng.choice(numbers)
        new = str(rng.choice([0, 1, -1, 2, 3, 7, 1 << 20, -(1 << 40),
                              (1 << 31) - 1, 1 << 31, 1 << 62,
                              (1 << 63) - 1, -(1 << 63)]))
        return text[: m.start()] + new + text[m.end():]
    if kind == 5:  # change an element type
        types = list(re.finditer(r"\b(f32|f16|bf16|i64|i32|i1)\b", text))
        if not types:
            return text
        m = rng.choice(types)
        new = rng.choice(["f32", "f16", "bf16", "i64", "i32", "i1", "f64"])
        return text[: m.start()] + new + text[m.end():]
    # duplicate a line
    i = rng.randrange(len(lines))
    lines.insert(i, lines[i])
    return "".join(lines)


def run_tool(command):
    """Runs a command; a hang (over two minutes) comes back as a crash."""
    try:
        return subprocess.run(command, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True,
                              errors="replace", timeout=120)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(command, -1, "",
                                           "HANG: no exit after 120 s")


def classify(result):
    """'ok', 'rejected' (exit 1 with an error: message) or 'crashed' (a
    signal, another status, no message, or a sanitizer's report)."""
    if "Sanitizer" in result.stderr or "runtime error:" in result.stderr:
        return "crashed"
    if result.returncode == 0:
        return "ok"
    if result.returncode == 1 and "error:" in result.stderr:
        return "rejected"
    return "crashed"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--tool-arg", action="append", default=[],
                        help="an extra argument for the tool (repeatable)")
    parser.add_argument("--run", action="store_true",
                        help="run each binary the tool builds (tandem-compile) "
                             "on random inputs and weights, on sim")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=0,
                        help="run variants until this much time has passed "
                             "(then --count is ignored)")
    parser.add_argument("inputs", nargs="+")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    sources = [open(path).read() for path in args.inputs]
    counts = {"rejected": 0, "ok": 0, "crashed": 0, "ran": 0,
              "refused at run time": 0}
    deadline = time.monotonic() + args.seconds
    done = 0
    with tempfile.TemporaryDirectory() as work:
        variant = os.path.join(work, "variant.mlir")
        output = os.path.join(work, "out")
        while (time.monotonic() < deadline if args.seconds
               else done < args.count):
            done += 1
            text = mutate(rng.choice(sources), rng)
            with open(variant, "w") as f:
                f.write(text)
            if os.path.exists(output):
                os.remove(output)
            result = run_tool([args.tool, variant, "-o", output] +
                              args.tool_arg)
            outcome = classify(result)
            if outcome == "ok" and args.run:
                ran = run_tool(
                    [output, "--random-inputs", "1", "--random-weights", "1",
                     "--device-backend", "sim", "--output-dir",
                     os.path.join(work, "results")])
                ran_outcome = classify(ran)
                if ran_outcome == "crashed":
                    result = ran
                    outcome = "crashed"
                else:
                    counts["ran" if ran_outcome == "ok"
                           else "refused at run time"] += 1
            counts[outcome] += 1
            if outcome == "crashed":
                print(f"CRASH (exit {result.returncode}) on:\n{text}\n"
                      f"stderr:\n{result.stderr[-2000:]}", file=sys.stderr)
    line = (f"{done} variants: {counts['rejected']} rejected with a "
            f"diagnostic, {counts['ok']} accepted, {counts['crashed']} crashed")
    if args.run:
        line += (f"; of the accepted, {counts['ran']} ran and "
                 f"{counts['refused at run time']} were refused at run time")
    print(line)
    return 1 if counts["crashed"] else 0


if __name__ == "__main__":
    sys.exit(main())
