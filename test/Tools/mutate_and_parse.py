"""Feeds mutated copies of valid IR to a tool and counts how each one ends.

With --tool-arg, the tool runs passes too (the placement pipeline), so the
passes see the odd-but-valid IR that mutation produces.

A variant must either parse and verify (exit 0) or be rejected with an
`error:` diagnostic and exit 1. Anything else (a signal, another exit status,
an exit 1 with no diagnostic) is a crash: the script prints the variant and
fails.
"""
import argparse
import random
import re
import subprocess
import sys
import tempfile


def mutate(text, rng):
    lines = text.splitlines(keepends=True)
    kind = rng.randrange(6)
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
    if kind == 4:  # change a number
        numbers = list(re.finditer(r"-?\d+", text))
        m = rng.choice(numbers)
        new = str(rng.choice([0, 1, -1, 2, 3, 7, 1 << 20, -(1 << 40)]))
        return text[: m.start()] + new + text[m.end():]
    # duplicate a line
    i = rng.randrange(len(lines))
    lines.insert(i, lines[i])
    return "".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--tool-arg", action="append", default=[],
                        help="an extra argument for the tool (repeatable)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("inputs", nargs="+")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    sources = [open(path).read() for path in args.inputs]
    rejected = accepted = crashed = 0
    with tempfile.NamedTemporaryFile("w", suffix=".mlir") as variant:
        for _ in range(args.count):
            text = mutate(rng.choice(sources), rng)
            variant.seek(0)
            variant.truncate()
            variant.write(text)
            variant.flush()
            result = subprocess.run(
                [args.tool, variant.name, "-o", "/dev/null"] + args.tool_arg,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                errors="replace")
            if result.returncode == 0:
                accepted += 1
            elif result.returncode == 1 and "error:" in result.stderr:
                rejected += 1
            else:
                crashed += 1
                print(f"CRASH (exit {result.returncode}) on:\n{text}\n"
                      f"stderr:\n{result.stderr[-2000:]}", file=sys.stderr)
    print(f"{args.count} variants: {rejected} rejected with a diagnostic, "
          f"{accepted} accepted, {crashed} crashed")
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
