#!/usr/bin/env python3
"""The schedule benchmark (a program, not a test): what --tandem-schedule
predicts, side by side with its own lower bound, with the serial program and
with an accelerate-style baseline, and what the compiled program measures
when the sim backend paces every op to its prediction, in one run.

Table A  every model in test/Transforms/Inputs/models/ and
         examples/recommender.mlir on the h200 profile, at budgets from
         unlimited down to the tightest that still compiles: serial,
         makespan, lower bound, makespan/lower bound, serial/makespan,
         hidden copy time, cross-queue waits; for the rows far from their
         bound, the bound's own terms (makespan_bound_terms_us: chain, load, memory,
         placements).
Table B  a generated GPT-style decoder stack whose weights do not fit the
         budget (1/2, 1/4 of its weights plus its activations): the makespan
         against the unlimited one, and against an accelerate-style baseline
         (every op on the GPU, weights that fit first in program order
         resident, every other weight copied synchronously from pageable
         memory right before its op, all serial) computed from the report's
         own per-op numbers; then, unless --no-measure, each budget's
         executable (tandem-compile) run on the sim backend with
         --sim-timing=profile: measured makespan against predicted, and the
         measured --serial run against the concurrent one.

The predicted figures are the compiler's (the placement report written by
--tandem-placement-pipeline report=FILE); the measured ones come from the
executable's --profile-json on the sim backend (a CPU stand-in, each op held
to its predicted time x --sim-time-scale): nothing runs on a GPU. Checks
that must hold (lower bound <= makespan, makespan <= serial, the bound
against its terms, the schedule's intervals against the report's totals,
the arena under the budget, the executable's prediction against the report)
are printed where they fail, never hidden.

Usage: python3 bench/schedule/bench.py [--build DIR] [--quick]
       [--workdir DIR] [--strict] [--no-measure]
Exit status: 0 when every tool run succeeded (2 when a tool failed; with
--strict, 1 when a check failed).
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "..", ".."))
MODELS_DIR = os.path.join("test", "Transforms", "Inputs", "models")
MODELS = ["mlp-tower", "dlrm", "decoder", "gpt-block-b8", "gpt2", "resnet18",
          "mobilenet-v2", "transformer-encoder", "small-cnn",
          "examples/recommender"]
QUICK_MODELS = ["mlp-tower", "dlrm", "decoder", "gpt2", "resnet18",
                "examples/recommender"]
PROFILE = "h200"

# The h200 profile's links, as lib/Analysis/DeviceProfile.cpp sets them
# (setLink(p, 64 GB/s): pinned 10 us + 0.80 x 64 GB/s, pageable 15 us +
# 0.40 x 64 GB/s). No tool prints a builtin profile, so they are copied
# here; the pinned figures are checked against every weight's h2d_us in the
# reports (the run stops if they differ: the profile changed).
PINNED_H2D = (10.0, 0.80 * 64e9)     # (latency us, bytes/s)
PAGEABLE_H2D = (15.0, 0.40 * 64e9)
PAGEABLE_D2H = (15.0, 0.40 * 64e9)

# The measured runs of Table B: the first --sim-time-scale tried, the share
# of paced op runs allowed to overrun their slot before the scale is doubled
# (once), and the runs per executable.
SIM_SCALE = 2000
OVERRUN_LIMIT = 0.02
MEASURE_REPEAT = 2      # the concurrent run
SERIAL_REPEAT = 1       # the --serial run
MEASURED_TARGET = (0.9, 1.1)   # measured makespan / predicted

MIB = 1 << 20
GIB = 1 << 30


def widened_note(report):
    """', N copies widened beyond it' where the pass widened copies."""
    widened = report.get("schedule_widened_copies") or 0
    return f", {widened} copies widened beyond it" if widened else ""


def placements_term(terms):
    """The bound's placements term as printed: '-' where not computed."""
    us = terms.get("placements")
    return "-" if us is None else f"{us:.0f}"


class ToolFailure(Exception):
    pass


def die(message):
    sys.stdout.flush()
    print(f"\nbench/schedule: error: {message}", file=sys.stderr)
    sys.exit(2)


# --------------------------------------------------------------------------
# Running the tools
# --------------------------------------------------------------------------

class Compiler:
    def __init__(self, build, workdir, measure):
        self.opt = os.path.join(build, "bin", "tandem-opt")
        self.compile = os.path.join(build, "bin", "tandem-compile")
        for tool in [self.opt] + ([self.compile] if measure else []):
            if not os.access(tool, os.X_OK):
                die(f"no {os.path.basename(tool)} at {tool} (build the "
                    f"project, or pass --build DIR"
                    + (", or --no-measure" if tool == self.compile else "")
                    + ")")
        self.workdir = workdir
        # Runs and seconds per tool: tandem-opt, tandem-compile, and the
        # compiled executables.
        self.runs = {"tandem-opt": 0, "tandem-compile": 0, "executable": 0}
        self.seconds = dict.fromkeys(self.runs, 0.0)

    def _run(self, argv, output, kind="tandem-opt", timeout=300, cwd=ROOT):
        if os.path.exists(output):
            os.remove(output)
        start = time.perf_counter()
        try:
            done = subprocess.run(argv, capture_output=True, text=True,
                                  timeout=timeout, cwd=cwd)
        except subprocess.TimeoutExpired:
            raise ToolFailure(f"timed out after {timeout} s: {' '.join(argv)}")
        except OSError as error:
            raise ToolFailure(f"cannot run {argv[0]}: {error}")
        self.seconds[kind] += time.perf_counter() - start
        self.runs[kind] += 1
        return done

    def _fail(self, argv, done):
        tail = "\n".join(done.stderr.strip().splitlines()[:12])
        how = (f"killed by signal {-done.returncode}" if done.returncode < 0
               else f"exit status {done.returncode}")
        return ToolFailure(f"{os.path.basename(argv[0])} failed ({how}):\n"
                           f"  {' '.join(argv)}\n{tail}")

    @staticmethod
    def _over_budget(done):
        # The two ways the pipeline refuses a budget: --tandem-place finds no
        # placement that fits, or --tandem-plan-memory's arena is over it.
        err = done.stderr
        return done.returncode == 1 and (
            "no placement fits the GPU memory budget" in err
            or "over the budget of" in err)

    def _load(self, argv, report):
        try:
            with open(report) as f:
                data = json.load(f)
        except (OSError, ValueError) as error:
            raise ToolFailure(f"tandem-opt succeeded but its report {report} "
                              f"cannot be read ({error}):\n  {' '.join(argv)}")
        for key in ("predicted_us", "makespan_lower_bound_us",
                    "makespan_bound_terms_us", "schedule", "ops", "values"):
            if key not in data:
                raise ToolFailure(f"the report {report} has no '{key}' (is "
                                  f"--tandem-schedule in the pipeline?)")
        return data

    def place(self, model, budget=None, tag="r", strategy=None):
        """The placement pipeline's report, or None if `budget` is refused
        as too small. Any other failure raises ToolFailure."""
        report = os.path.join(self.workdir, f"{tag}.json")
        options = [f"device-profile={PROFILE}", f"report={report}"]
        if budget is not None:
            options.append(f"gpu-memory={int(budget)}")
        if strategy is not None:
            options.append(f"strategy={strategy}")
        argv = [self.opt, model,
                f"--tandem-placement-pipeline={' '.join(options)}",
                "-o", os.devnull]
        done = self._run(argv, report)
        if done.returncode != 0:
            if budget is not None and self._over_budget(done):
                return None
            raise self._fail(argv, done)
        return self._load(argv, report)

    def program_order_peak(self, model, tag):
        """The peak GPU bytes, in program order (--tandem-place's own report,
        before any schedule lengthens lives), of everything on the GPU: the
        weights plus the activations one op at a time needs."""
        report = os.path.join(self.workdir, f"{tag}.json")
        argv = [self.opt, model,
                f"--tandem-place=device-profile={PROFILE} strategy=all-gpu "
                f"report={report}", "-o", os.devnull]
        done = self._run(argv, report)
        if done.returncode != 0:
            raise self._fail(argv, done)
        with open(report) as f:
            return int(json.load(f)["peak_gpu_bytes"])

    def placed(self, model, budget, tag):
        """The IR after --tandem-place alone at `budget` (a file), for the
        what-ifs to schedule again without placing again."""
        out = os.path.join(self.workdir, f"{tag}.mlir")
        argv = [self.opt, model,
                f"--tandem-place=device-profile={PROFILE} "
                f"gpu-memory={int(budget)}", "-o", out]
        done = self._run(argv, out)
        if done.returncode != 0:
            raise self._fail(argv, done)
        return out

    def place_with_window(self, placed, budget, window, tag="w"):
        """What-if: the placement in `placed` (from placed(): --tandem-place
        keeps it, strategy 'given'), scheduled with a fixed window
        (--tandem-schedule window=N) and without --tandem-plan-memory, so the
        arena the window would need is reported even over the budget."""
        report = os.path.join(self.workdir, f"{tag}.json")
        argv = [self.opt, placed,
                f"--tandem-place=device-profile={PROFILE} "
                f"gpu-memory={int(budget)} report={report}",
                "--tandem-insert-transfers",
                f"--tandem-schedule=device-profile={PROFILE} report={report} "
                f"window={window}",
                "-o", os.devnull]
        done = self._run(argv, report)
        if done.returncode != 0:
            raise self._fail(argv, done)
        return self._load(argv, report)

    def build_executable(self, model, budget, tag):
        """tandem-compile's executable of `model` at `budget` (None: the
        profile's GPU memory). A refused budget is a failure here: the
        pipeline accepted it."""
        exe = os.path.join(self.workdir, tag)
        # Unfused: the program the placement pipeline's report (tandem-opt,
        # which does not fuse) describes, so that the executable's own
        # predictions can be checked against it.
        argv = [self.compile, model, "-o", exe, f"--device-profile={PROFILE}",
                "--fuse=false"]
        if budget is not None:
            argv.append(f"--gpu-memory={int(budget)}")
        done = self._run(argv, exe, "tandem-compile")
        if done.returncode != 0 or not os.access(exe, os.X_OK):
            if done.returncode == 0:
                raise ToolFailure(f"tandem-compile succeeded but wrote no "
                                  f"executable {exe}:\n  {' '.join(argv)}")
            raise self._fail(argv, done)
        return exe

    def run_paced(self, exe, scale, repeat, serial):
        """The executable's --profile-json after `repeat` runs on the sim
        backend, every op paced to its predicted time x `scale`; the queues
        concurrent, or one op at a time with `serial`."""
        profile = exe + ("-serial" if serial else "") + "-profile.json"
        argv = [exe, "--random-weights", "1", "--random-inputs", "1",
                "--device-backend", "sim", "--sim-timing=profile",
                f"--sim-time-scale={scale:g}", "--repeat", str(repeat),
                "--profile-json", profile] + (["--serial"] if serial else [])
        done = self._run(argv, profile, "executable", timeout=600,
                         cwd=self.workdir)
        if done.returncode != 0:
            raise self._fail(argv, done)
        try:
            with open(profile) as f:
                data = json.load(f)
            sched = data["schedule"]
            timing = sched["sim_timing"]
            missing = [k for k in ("concurrent", "makespan_us", "predicted_us")
                       if k not in sched]
            missing += [f"sim_timing.{k}" for k in ("paced_runs", "overruns")
                        if k not in timing]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ToolFailure(f"{os.path.basename(exe)} succeeded but its "
                              f"profile {profile} cannot be read or has no "
                              f"schedule.sim_timing ({error!r}):\n"
                              f"  {' '.join(argv)}")
        if missing or not sched["predicted_us"]:
            raise ToolFailure(f"the profile {profile} has no "
                              f"{', '.join(missing) or 'predicted time'}:\n"
                              f"  {' '.join(argv)}")
        return data


# --------------------------------------------------------------------------
# Reading a report
# --------------------------------------------------------------------------

def pred(report, key):
    return float(report["predicted_us"][key])


def op_by_id(report):
    return {op["id"]: op for op in report["ops"]}


def streamed_weights(report):
    """Weights read from the CPU and copied to the GPU for a GPU consumer."""
    ops = op_by_id(report)
    out = []
    for value in report["values"]:
        if not value["weight"] or value["producer"] < 0:
            continue
        producer = ops[value["producer"]]
        if producer["device"] != "cpu":
            continue
        if any(c >= 0 and ops[c]["device"] == "gpu"
               for c in value["consumers"]):
            out.append(value)
    return out


def resident_weight_bytes(report):
    ops = op_by_id(report)
    return sum(v["bytes"] for v in report["values"]
               if v["weight"] and v["producer"] >= 0
               and ops[v["producer"]]["device"] == "gpu")


def compute_on_cpu(report):
    """Ops with work that the placement put on the CPU."""
    return [op for op in report["ops"]
            if op["device"] == "cpu" and op["name"] != "tandem.weight"
            and (op["cpu_us"] or 0) > 0]


def check_report(report, budget):
    """The invariants a report must satisfy; a list of messages."""
    bad = []
    serial = pred(report, "serial")
    makespan = pred(report, "makespan")
    total = pred(report, "total")
    lb = float(report["makespan_lower_bound_us"])
    eps = 1e-6 * max(1.0, serial)
    if lb > makespan + eps:
        bad.append(f"lower bound {lb:.1f} > makespan {makespan:.1f}")
    terms = report["makespan_bound_terms_us"]
    if abs(max(terms["chain"], terms["load"], terms["memory"],
               terms["placements"] or 0) - lb) > eps:
        bad.append(f"lower bound {lb:.3f} != max(chain {terms['chain']:.3f}, "
                   f"load {terms['load']:.3f}, memory "
                   f"{terms['memory']:.3f}, placements "
                   f"{placements_term(terms)})")
    if "lower_bound_us" in report and abs(report["lower_bound_us"] - lb) > eps:
        bad.append(f"lower_bound_us {report['lower_bound_us']:.3f} != "
                   f"makespan_lower_bound_us {lb:.3f} after scheduling")
    slb = report.get("serial_lower_bound_us")
    if slb is not None and slb > serial + eps:
        bad.append(f"serial lower bound {slb:.1f} > serial {serial:.1f}")
    if makespan > serial + eps:
        waits = report.get("schedule_waits") or 0
        per = (f"; {waits} cross-queue waits, "
               f"{(makespan - serial) / waits:.2f} us of excess per wait"
               if waits else "")
        bad.append(f"makespan {makespan:.1f} > serial {serial:.1f} "
                   f"(+{makespan - serial:.1f} us{per})")
    if abs(total - makespan) > eps:
        bad.append(f"predicted total {total:.3f} != schedule makespan "
                   f"{makespan:.3f}")
    busy = report["predicted_us"].get("queue_busy", {})
    if busy and abs(sum(busy.values()) - serial) > eps:
        bad.append(f"queue busy sum {sum(busy.values()):.1f} != serial "
                   f"{serial:.1f}")
    items = report["schedule"]
    if items:
        last = max(i["end_us"] for i in items)
        if abs(last - makespan) > eps:
            bad.append(f"last schedule end {last:.1f} != makespan "
                       f"{makespan:.1f}")
        span = sum(i["end_us"] - i["start_us"] for i in items)
        if abs(span - serial) > eps:
            bad.append(f"schedule intervals sum {span:.1f} != serial "
                       f"{serial:.1f}")
        byq = {}
        for i in items:
            byq.setdefault(i["queue"], []).append(i)
        for q, lst in byq.items():
            lst.sort(key=lambda i: i["start_us"])
            for a, b in zip(lst, lst[1:]):
                if b["start_us"] < a["end_us"] - 1e-9:
                    bad.append(f"queue {q}: step {a['step']} and step "
                               f"{b['step']} overlap")
                    break
    copies = (busy.get("h2d", 0) + busy.get("d2h", 0)) if busy else None
    hidden = pred(report, "hidden_copy")
    if copies is not None and hidden > copies + eps:
        bad.append(f"hidden copy {hidden:.1f} > copy time {copies:.1f}")
    arena = report.get("gpu_arena_bytes", 0)
    if budget is not None and arena > budget:
        bad.append(f"GPU arena {arena} B over the budget {budget} B")
    return bad


def overlap(a0, a1, intervals):
    return sum(max(0.0, min(a1, b1) - max(a0, b0)) for b0, b1 in intervals)


def gpu_timeline(report):
    """GPU queue idle time before the makespan, and how much of that idle
    time has an H2D copy in flight (the GPU waiting for a copy)."""
    items = report["schedule"]
    gpu = sorted((i["start_us"], i["end_us"]) for i in items
                 if i["queue"] == "gpu")
    h2d = [(i["start_us"], i["end_us"]) for i in items if i["queue"] == "h2d"]
    makespan = pred(report, "makespan")
    idle, waiting, t = 0.0, 0.0, 0.0
    for s, e in gpu + [(makespan, makespan)]:
        if s > t:
            idle += s - t
            waiting += overlap(t, s, h2d)
        t = max(t, e)
    return idle, waiting


def prefetched_copies(report):
    """H2D copies that start while the GPU queue is still busy with an
    earlier op (issued ahead), out of all H2D copies."""
    items = report["schedule"]
    gpu = [(i["start_us"], i["end_us"]) for i in items if i["queue"] == "gpu"]
    h2d = [i for i in items if i["queue"] == "h2d"]
    ahead = sum(1 for c in h2d
                if any(s <= c["start_us"] < e for s, e in gpu))
    return ahead, len(h2d)


# --------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------

def fmt_bytes(n):
    if n is None:
        return "unlimited"
    if n >= GIB:
        return f"{n / GIB:.2f}GiB"
    if n >= MIB:
        return f"{n / MIB:.1f}MiB"
    if n >= 1024:
        return f"{n / 1024:.1f}KiB"
    return f"{int(n)}B"


def fmt_us(x):
    if x >= 1e6:
        return f"{x / 1e3:,.0f}ms"
    return f"{x:,.1f}"


def table(header, rows, align=None):
    widths = [max(len(str(r[i])) for r in [header] + rows)
              for i in range(len(header))]
    align = align or ["<"] + [">"] * (len(header) - 1)
    def line(r):
        return "  ".join(f"{str(c):{a}{w}}" for c, a, w in
                         zip(r, align, widths)).rstrip()
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


# --------------------------------------------------------------------------
# Table A
# --------------------------------------------------------------------------

def tightest_budget(compiler, path, hi, tag):
    """The smallest gpu-memory the pipeline accepts, by bisection on
    [0, hi]; `hi` must be accepted. Resolution: 64 bytes or 1/2048 of hi."""
    if compiler.place(path, 0, tag) is not None:
        return 0
    lo = 0
    step = max(64, hi // 2048)
    while hi - lo > step:
        mid = (lo + hi) // 2
        if compiler.place(path, mid, tag) is not None:
            hi = mid
        else:
            lo = mid
    return hi


def table_a(compiler, quick):
    models = QUICK_MODELS if quick else MODELS
    fractions = [0.5, 0.25] if quick else [0.5, 0.25, 0.125]
    print("=" * 78)
    print(f"Table A: makespan against serial and the lower bound "
          f"({PROFILE} profile, strategy auto, default objective)")
    print("=" * 78)
    print("budget: unlimited (the profile's GPU memory), fractions of the "
          "unlimited placement's peak_gpu_bytes, and the tightest gpu-memory "
          "the pipeline accepts (bisection).")
    print("gain = serial / makespan; mk/LB = makespan / "
          "makespan_lower_bound_us; hidden = copy time under compute; "
          "win = schedule window (- = unbounded).\n")
    header = ["model", "budget", "arena", "gpu ops", "serial us",
              "makespan us", "LB us", "mk/LB", "gain", "hidden us", "waits",
              "win", "checks"]
    rows, records, notes = [], [], []
    for name in models:
        path = (name + ".mlir" if name.startswith("examples/")
                else os.path.join(MODELS_DIR, name + ".mlir"))
        short = os.path.basename(name)
        tag = "a-" + short
        unl = compiler.place(path, None, tag)
        if unl is None:
            raise ToolFailure(f"{path}: refused at the default budget")
        peak = unl["peak_gpu_bytes"]
        budgets = [(None, "unlimited", unl)]
        if peak == 0:
            notes.append(f"{short}: the unlimited placement uses no GPU "
                         f"memory (everything on the CPU), so it has no "
                         f"smaller budgets to try")
        else:
            hi = max(unl["gpu_arena_bytes"], peak)
            if compiler.place(path, hi, tag) is None:
                raise ToolFailure(f"{path}: refused at its own unlimited "
                                  f"arena, {hi} bytes")
            tight = tightest_budget(compiler, path, hi, tag)
            for frac in fractions:
                b = int(peak * frac)
                if b < tight:
                    notes.append(f"{short}: {frac:g} x peak = {fmt_bytes(b)} "
                                 f"is below the tightest budget "
                                 f"{fmt_bytes(tight)}; skipped")
                    continue
                if b == tight:
                    continue
                budgets.append((b, f"{frac:g}x peak", None))
            budgets.append((tight, "tightest", None))
        for budget, label, report in budgets:
            if report is None:
                report = compiler.place(path, budget, tag)
                if report is None:
                    raise ToolFailure(f"{path}: gpu-memory={budget} was "
                                      f"accepted before and refused now")
            serial = pred(report, "serial")
            mk = pred(report, "makespan")
            lb = float(report["makespan_lower_bound_us"])
            bad = check_report(report, budget)
            gpu_ops = sum(1 for op in report["ops"] if op["device"] == "gpu"
                          and op["name"] != "tandem.weight")
            n_ops = sum(1 for op in report["ops"]
                        if op["name"] != "tandem.weight")
            win = report.get("schedule_window")
            rec = dict(model=short, label=label, budget=budget, report=report,
                       serial=serial, mk=mk, lb=lb, bad=bad)
            records.append(rec)
            bl = ("unlimited" if budget is None
                  else f"{fmt_bytes(budget)} {label}" if label != "tightest"
                  else f"{fmt_bytes(budget)} tight")
            rows.append([short, bl, fmt_bytes(report["gpu_arena_bytes"]),
                         f"{gpu_ops}/{n_ops}", fmt_us(serial), fmt_us(mk),
                         fmt_us(lb), f"{mk / lb:.3f}" if lb > 0 else "-",
                         f"{serial / mk:.3f}" if mk > 0 else "-",
                         fmt_us(pred(report, "hidden_copy")),
                         report.get("schedule_waits", "-"),
                         "-" if win is None else win,
                         "ok" if not bad else f"FAIL({len(bad)})"])
        # The unlimited lower bound holds for every budget's schedule too.
        unl_lb = float(unl["makespan_lower_bound_us"])
        for rec in records:
            if rec["model"] == short and rec["mk"] < unl_lb - 1e-6:
                rec["bad"].append(f"makespan {rec['mk']:.1f} below the "
                                  f"unlimited lower bound {unl_lb:.1f}")
    table(header, rows)
    objectives = sorted({str(r["report"].get("objective")) for r in records})
    print(f"\nplacement objective (the reports' 'objective'): "
          f"{', '.join(objectives)}")
    tight = [r for r in records if r["label"] == "tightest"]
    if tight and all(r["budget"] == 0 for r in tight):
        notes.append("the tightest budget is 0 B for every model: with no op "
                     "pinned to the GPU or GPU-only, the all-CPU placement "
                     "always fits, so the pipeline never refuses a budget")
    unl_mk = {r["model"]: r["mk"] for r in records if r["budget"] is None}
    for r in records:
        if r["budget"] is not None and r["mk"] < unl_mk[r["model"]] * 0.995:
            notes.append(f"{r['model']} at {r['label']} "
                         f"({fmt_bytes(r['budget'])}) predicts a shorter "
                         f"makespan ({r['mk']:.1f} us) than unlimited "
                         f"({unl_mk[r['model']]:.1f} us), though its "
                         f"placement fits the unlimited memory too: the "
                         f"unlimited search missed it")
    for n in notes:
        print(f"note: {n}")

    ratios = [(r["mk"] / r["lb"], r) for r in records if r["lb"] > 0]
    worst, wrec = max(ratios, key=lambda x: x[0])
    gains = [r["serial"] / r["mk"] for r in records if r["mk"] > 0]
    print(f"\nworst makespan/lower bound: {worst:.3f} "
          f"({wrec['model']}, {wrec['label']})")
    print(f"geometric-mean gain (serial/makespan) over {len(gains)} rows: "
          f"{geomean(gains):.3f}")
    gpu_rows = [r for r in records
                if any(op["device"] == "gpu" for op in r["report"]["ops"])]
    mixed = [r["serial"] / r["mk"] for r in gpu_rows
             if any(op["device"] == "cpu" and (op["cpu_us"] or 0) > 0
                    for op in r["report"]["ops"])
             or pred(r["report"], "hidden_copy") > 0]
    below = [r for r in records if r["serial"] / r["mk"] < 1 - 1e-9]
    print(f"rows with gain < 1 (makespan above the serial sum): "
          f"{len(below)} of {len(records)}")
    if mixed:
        print(f"geometric-mean gain over the {len(mixed)} rows where "
              f"something can overlap (CPU work beside the GPU, or hidden "
              f"copies): {geomean(mixed):.3f}")

    # Checks that failed.
    failed = [r for r in records if r["bad"]]
    if failed:
        print("\nCHECKS THAT FAILED:")
        for r in failed:
            for b in r["bad"]:
                print(f"  {r['model']} ({r['label']}): {b}")
    # Why mk/LB is high: the lower bound's terms, recomputed.
    high = [r for _, r in sorted(ratios, key=lambda x: -x[0])
            if r["mk"] / r["lb"] > 1.10]
    if high:
        print("\nrows with makespan/lower bound > 1.10, and the bound's terms "
              "as the report gives them (makespan_bound_terms_us; LB = "
              "max(chain, load, memory, placements)): chain = the longest "
              "path from "
              "the inputs to the results, each op on the device that "
              "finishes it first, copies paid where the path changes device; "
              "load = the LP relaxation of CPU/GPU/H2D busy time with weight "
              "residency under the budget; memory = the same relaxation with "
              "GPU bytes integrated over time within budget x makespan, "
              "one dependency path, and each op kept off a device where no "
              "schedule running it there finishes in time (only up to 4096 "
              "ops: 0 elsewhere); "
              "placements = the least bound of "
              "any placement that can fit (only where at most 20 ops are "
              "free: '-' elsewhere); then each queue's busy time in this "
              "schedule:")
        for r in high[:12]:
            rep = r["report"]
            terms = rep["makespan_bound_terms_us"]
            busy = rep["predicted_us"]["queue_busy"]
            print(f"  {r['model']:<20} {r['label']:<11} mk/LB "
                  f"{r['mk'] / r['lb']:.2f}: LB {r['lb']:.0f} = max(chain "
                  f"{terms['chain']:.0f}, load {terms['load']:.0f}, memory "
                  f"{terms['memory']:.0f}, placements {placements_term(terms)}); busy "
                  f"cpu {busy['cpu']:.0f} gpu {busy['gpu']:.0f} h2d "
                  f"{busy['h2d']:.0f} d2h {busy['d2h']:.0f}; weights "
                  f"streamed: {len(streamed_weights(rep))}")
        if len(high) > 12:
            print(f"  ... and {len(high) - 12} more")
    return records


# --------------------------------------------------------------------------
# Table B: a GPT-style decoder stack under a budget
# --------------------------------------------------------------------------

def decoder_mlir(layers, d, batch, seq):
    """A pre-norm decoder on f32: per layer, layer norm, q/k/v/proj linear
    projections around a single-head attention (matmul, scale, softmax,
    matmul; no mask), a residual add, layer norm, an MLP (d -> 4d, gelu,
    4d -> d) and a residual add; a final layer norm. Tokens are rows:
    x is (batch*seq) x d. Every op is named after its layer (loc)."""
    T = batch * seq

    def ty(*shape):
        return "tensor<" + "x".join(map(str, shape)) + "xf32>"

    lines = [f"// generated by bench/schedule/bench.py: {layers} layers, "
             f"d={d}, batch={batch}, seq={seq}",
             f"func.func @main(%x: {ty(T, d)}) -> {ty(T, d)} {{"]
    count = [0]

    def op(name, args, attrs, argtys, resty, loc):
        count[0] += 1
        r = f"%v{count[0]}"
        a = f" {{{attrs}}}" if attrs else ""
        lines.append(f'  {r} = "tandem.{name}"({", ".join(args)}){a} : '
                     f'({", ".join(argtys)}) -> {resty} loc("{loc}")')
        return r

    def weight(name, *shape):
        return op("weight", [], f'name = "{name}"', [], ty(*shape), name)

    def norm(x, p):
        g = weight(p + ".weight", d)
        b = weight(p + ".bias", d)
        return op("layer_norm", [x, g, b],
                  "axis = 1 : i64, epsilon = 1.0e-05 : f32",
                  [ty(T, d), ty(d), ty(d)], ty(T, d), p)

    def linear(x, p, n_in, n_out):
        w = weight(p + ".weight", n_out, n_in)
        b = weight(p + ".bias", n_out)
        return op("linear", [x, w, b], "",
                  [ty(T, n_in), ty(n_out, n_in), ty(n_out)], ty(T, n_out), p)

    x = "%x"
    scale = 1.0 / math.sqrt(d)
    for i in range(layers):
        L = f"layers.{i}"
        A = L + ".attn"
        h = norm(x, L + ".norm1")
        q = linear(h, L + ".q", d, d)
        k = linear(h, L + ".k", d, d)
        v = linear(h, L + ".v", d, d)
        q3 = op("reshape", [q], "", [ty(T, d)], ty(batch, seq, d), A)
        k3 = op("reshape", [k], "", [ty(T, d)], ty(batch, seq, d), A)
        v3 = op("reshape", [v], "", [ty(T, d)], ty(batch, seq, d), A)
        kt = op("transpose", [k3], "perm = array<i64: 0, 2, 1>",
                [ty(batch, seq, d)], ty(batch, d, seq), A)
        s = op("matmul", [q3, kt], "", [ty(batch, seq, d), ty(batch, d, seq)],
               ty(batch, seq, seq), A)
        c = op("fill", [], f"value = {scale:.9e} : f32", [], "tensor<f32>", A)
        s = op("mul", [s, c], "", [ty(batch, seq, seq), "tensor<f32>"],
               ty(batch, seq, seq), A)
        p = op("softmax", [s], "axis = -1 : i64", [ty(batch, seq, seq)],
               ty(batch, seq, seq), A)
        a = op("matmul", [p, v3], "", [ty(batch, seq, seq), ty(batch, seq, d)],
               ty(batch, seq, d), A)
        a = op("reshape", [a], "", [ty(batch, seq, d)], ty(T, d), A)
        o = linear(a, L + ".proj", d, d)
        x = op("add", [x, o], "", [ty(T, d), ty(T, d)], ty(T, d), L + ".res1")
        h = norm(x, L + ".norm2")
        u = linear(h, L + ".up", d, 4 * d)
        g = op("gelu", [u], "", [ty(T, 4 * d)], ty(T, 4 * d), L + ".gelu")
        m = linear(g, L + ".down", 4 * d, d)
        x = op("add", [x, m], "", [ty(T, d), ty(T, d)], ty(T, d), L + ".res2")
    y = norm(x, "norm")
    lines.append(f"  func.return {y} : {ty(T, d)}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def layer_of(loc):
    if loc.startswith("layers."):
        return int(loc.split(".")[1])
    return None


def per_layer(report, layers):
    """Each layer's GPU compute (sum of gpu_us) and the pinned H2D time of
    its weights (sum of h2d_us, one copy per tensor)."""
    ops = op_by_id(report)
    compute = [0.0] * layers
    copy = [0.0] * layers
    wbytes = [0] * layers
    for op in report["ops"]:
        i = layer_of(op["loc"])
        if i is not None and op["name"] != "tandem.weight":
            compute[i] += op["gpu_us"] or 0.0
    for v in report["values"]:
        if v["weight"] and v["producer"] >= 0:
            i = layer_of(ops[v["producer"]]["loc"])
            if i is not None:
                copy[i] += v["h2d_us"]
                wbytes[i] += v["bytes"]
    return compute, copy, wbytes


def check_pinned_link(report):
    """The report's weight copy times against PINNED_H2D."""
    lat, bw = PINNED_H2D
    for v in report["values"]:
        if v["weight"] and v["bytes"] > 0:
            expect = lat + v["bytes"] / bw * 1e6
            if abs(v["h2d_us"] - expect) > 1e-6 * expect + 1e-9:
                die(f"the {PROFILE} profile's pinned H2D link is not "
                    f"{lat} us + {bw / 1e9:.1f} GB/s any more (a weight of "
                    f"{v['bytes']} B is priced {v['h2d_us']:.3f} us, expected "
                    f"{expect:.3f}): update the link constants at the top "
                    f"of bench/schedule/bench.py from "
                    f"lib/Analysis/DeviceProfile.cpp")


def accelerate_baseline(report, resident_capacity):
    """Every op on the GPU at its gpu_us; weights resident in program order
    while their bytes fit `resident_capacity` (None: all); once one does
    not, it and every later weight are copied synchronously from pageable
    memory right before each op that reads it; the input copied in and the
    result out (pageable); all serial. Returns (us, streamed weights,
    streamed bytes, ops without a GPU time)."""
    ops = op_by_id(report)
    weights = sorted((v for v in report["values"]
                      if v["weight"] and v["producer"] >= 0),
                     key=lambda v: v["producer"])
    resident, used, full = set(), 0, False
    for v in weights:
        if not full and (resident_capacity is None
                         or used + v["bytes"] <= resident_capacity):
            resident.add(v["id"])
            used += v["bytes"]
        else:
            full = True
    streamed = [v for v in weights if v["id"] not in resident]
    total, no_gpu = 0.0, 0
    for op in report["ops"]:
        if op["gpu_us"] is None:
            total += op["cpu_us"] or 0.0
            no_gpu += 1
        else:
            total += op["gpu_us"]
    lat, bw = PAGEABLE_H2D
    for v in streamed:
        uses = sum(1 for c in v["consumers"] if c >= 0)
        total += max(uses, 1) * (lat + v["bytes"] / bw * 1e6)
    for v in report["values"]:
        if v["producer"] < 0:
            total += lat + v["bytes"] / bw * 1e6
        if -1 in v["consumers"]:
            dlat, dbw = PAGEABLE_D2H
            total += dlat + v["bytes"] / dbw * 1e6
    return total, len(streamed), sum(v["bytes"] for v in streamed), no_gpu


def table_b(compiler, quick, measure):
    layers, d, seq = 8, 384, 512
    print()
    print("=" * 78)
    print("Table B: a GPT-style decoder stack whose weights do not fit "
          f"({PROFILE} profile)")
    print("=" * 78)
    # The smallest batch at which every layer's GPU compute takes at least
    # as long as copying its weights on the pinned link. The per-op and
    # per-value times do not depend on the placement, so the probe places
    # with the quick greedy strategy; the chosen batch is placed again with
    # the default one (auto).
    chosen = None
    tried = []
    for batch in [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 24, 32]:
        path = os.path.join(compiler.workdir, f"decoder-b{batch}.mlir")
        with open(path, "w") as f:
            f.write(decoder_mlir(layers, d, batch, seq))
        rep = compiler.place(path, None, f"b-probe{batch}", "greedy")
        check_pinned_link(rep)
        compute, copy, wbytes = per_layer(rep, layers)
        ratio = min(c / p for c, p in zip(compute, copy))
        tried.append((batch, ratio))
        if ratio >= 1.0:
            rep = compiler.place(path, None, "b-unlimited")
            chosen = (batch, path, rep, compute, copy, wbytes)
            break
    probe = ", ".join(f"batch {b}: {r:.2f}" for b, r in tried)
    print(f"layer GPU compute / pinned copy of its weights (smallest layer): "
          f"{probe}")
    if chosen is None:
        print("no batch up to 32 makes a layer's compute cover its weight "
              "copy; Table B skipped")
        return None, []
    batch, path, unl, compute, copy, wbytes = chosen
    total_w = sum(v["bytes"] for v in unl["values"] if v["weight"])
    # The activations one op at a time needs (program order): a prefetching
    # schedule keeps more alive, which is what the budget is to bound.
    peak = compiler.program_order_peak(path, "b-all-gpu")
    act = peak - total_w
    print(f"model: {layers} layers, d={d}, batch {batch} x seq {seq} = "
          f"{batch * seq} tokens, f32; {fmt_bytes(wbytes[0])} of weights per "
          f"layer ({fmt_bytes(total_w)} in all)")
    print(f"per layer: GPU compute {compute[0]:.0f} us, its weights over "
          f"pinned H2D {copy[0]:.0f} us ({PINNED_H2D[0]:g} us + "
          f"{PINNED_H2D[1] / 1e9:.1f} GB/s per tensor); pageable "
          f"{PAGEABLE_H2D[0]:g} us + {PAGEABLE_H2D[1] / 1e9:.1f} GB/s")
    print(f"everything on the GPU, one op at a time: peak {fmt_bytes(peak)} "
          f"= weights {fmt_bytes(total_w)} + activations {fmt_bytes(act)}")
    print(f"budgets: 1/2 and 1/4 of the weights + {fmt_bytes(act)} of "
          f"activations\n")
    print("baseline (accelerate-style, from the report's per-op numbers): "
          "every op on the GPU (gpu_us); weights resident in program order "
          "while they fit budget - activations; from the first that does not, "
          "every weight copied synchronously from pageable memory right "
          "before its op; input and result copied pageable; all serial.\n")

    cases = [("unlimited", None), ("1/2 weights", 0.5), ("1/4 weights", 0.25)]
    results = []
    for label, frac in cases:
        budget = None if frac is None else int(frac * total_w + act)
        rep = unl if frac is None else compiler.place(path, budget,
                                                      f"b-{frac}")
        if rep is None:
            print(f"{label}: gpu-memory={budget} refused by the pipeline")
            results.append((label, frac, budget, None))
            continue
        results.append((label, frac, budget, rep))

    header = ["budget", "arena", "makespan us", "/unlimited", "(<=1.25)",
              "baseline us", "base/tandem", "(target)", "streamed",
              "base streams", "resident w", "cpu ops", "win", "hidden us",
              "checks"]
    rows = []
    base_mk = pred(unl, "makespan")
    findings = []
    for label, frac, budget, rep in results:
        if rep is None:
            rows.append([label, "refused"] + [""] * (len(header) - 2))
            continue
        mk = pred(rep, "makespan")
        cap = None if budget is None else budget - act
        base, nstream_b, bstream_b, no_gpu = accelerate_baseline(rep, cap)
        streamed = streamed_weights(rep)
        cpu = compute_on_cpu(rep)
        bad = check_report(rep, budget)
        target = {None: None, 0.5: 1.5, 0.25: 2.0}[frac]
        ratio = mk / base_mk
        speed = base / mk
        win = rep.get("schedule_window")
        rows.append([
            label if budget is None else f"{label} {fmt_bytes(budget)}",
            fmt_bytes(rep["gpu_arena_bytes"]), fmt_us(mk), f"{ratio:.3f}",
            "" if frac is None else ("met" if ratio <= 1.25 else "MISSED"),
            fmt_us(base), f"{speed:.2f}x",
            "" if target is None else
            (f">={target:g}x met" if speed >= target else
             f">={target:g}x MISSED"),
            f"{len(streamed)} ({fmt_bytes(sum(v['bytes'] for v in streamed))})",
            f"{nstream_b} ({fmt_bytes(bstream_b)})",
            fmt_bytes(resident_weight_bytes(rep)),
            f"{len(cpu)}", "-" if win is None else win,
            fmt_us(pred(rep, "hidden_copy")),
            "ok" if not bad else f"FAIL({len(bad)})"])
        findings.append((label, frac, budget, rep, bad, cpu, no_gpu))
    table(header, rows)
    for label, frac, budget, rep, bad, cpu, no_gpu in findings:
        if frac is not None:
            base = accelerate_baseline(rep, budget - act)[0]
            print(f"{label}: if every copy were hidden (makespan = unlimited "
                  f"{base_mk:.0f} us), base/tandem would be "
                  f"{base / base_mk:.2f}x")
    print("\nstreamed = weights the placement keeps on the CPU and copies to "
          "the GPU (CPU weight + transfer); base streams = what the baseline "
          "copies; cpu ops = ops with work that the placement runs on the "
          "CPU.")

    print("\nwhat the schedules do:")
    for label, frac, budget, rep, bad, cpu, no_gpu in findings:
        idle, waiting = gpu_timeline(rep)
        ahead, n_h2d = prefetched_copies(rep)
        busy = rep["predicted_us"]["queue_busy"]
        mk = pred(rep, "makespan")
        print(f"  {label}: makespan {mk:.0f} us; GPU busy {busy['gpu']:.0f} "
              f"us, idle {idle:.0f} us ({waiting:.0f} us of it with an H2D "
              f"copy in flight); H2D busy {busy['h2d']:.0f} us, hidden "
              f"{pred(rep, 'hidden_copy'):.0f} us; {ahead} of {n_h2d} H2D "
              f"copies start while the GPU is still computing; window "
              f"{rep.get('schedule_window') or 'unbounded'}"
              f"{widened_note(rep)}; lower bound "
              f"{rep['makespan_lower_bound_us']:.0f} us (chain "
              f"{rep['makespan_bound_terms_us']['chain']:.0f}, load "
              f"{rep['makespan_bound_terms_us']['load']:.0f}, memory "
              f"{rep['makespan_bound_terms_us']['memory']:.0f})")
        if cpu:
            cpu_layers = sorted({layer_of(op["loc"]) for op in cpu
                                 if layer_of(op["loc"]) is not None})
            names = sorted({op["name"] for op in cpu})
            print(f"    the placement runs {len(cpu)} ops on the CPU instead "
                  f"of streaming ({', '.join(names)}; layers "
                  f"{cpu_layers or '-'})")
        if no_gpu:
            print(f"    {no_gpu} ops have no GPU time: the baseline counts "
                  f"their CPU time")
        for b in bad:
            print(f"    CHECK FAILED: {b}")
        if budget is not None and rep.get("schedule_window") is not None:
            # What a wider window would have needed: the same placement,
            # scheduled with a fixed window, without the memory plan.
            whatif = []
            placed = compiler.placed(path, budget, f"b-{frac}-placed")
            for w in ([2, 8] if quick else [2, 4, 8]):
                r = compiler.place_with_window(placed, budget, w,
                                               f"b-{frac}-w{w}")
                fits = "fits" if r["gpu_arena_bytes"] <= budget else "over"
                whatif.append(f"window {w}: makespan "
                              f"{pred(r, 'makespan'):.0f} us, arena "
                              f"{fmt_bytes(r['gpu_arena_bytes'])} ({fits})")
            print(f"    what-if (same placement, fixed window, arena vs "
                  f"budget {fmt_bytes(budget)}): " + "; ".join(whatif))
    measured_bad = []
    if measure:
        measured_bad = measure_decoder(compiler, path, findings, quick)
    return results, measured_bad


def overrun_share(profile):
    timing = profile["schedule"]["sim_timing"]
    return timing["overruns"], timing["paced_runs"]


def measure_decoder(compiler, path, findings, quick):
    """Each budget's executable (tandem-compile at that budget), run on the
    sim backend with every op paced to its predicted time x S: the measured
    makespan against the predicted one, and the --serial run against the
    concurrent one. S starts at SIM_SCALE; when more than OVERRUN_LIMIT of
    the paced op runs overran their slot it is doubled (once in all) and the
    run repeated; later rows keep it. Returns the failed checks."""
    rows = [f for f in findings if not quick or f[1] == 0.25]
    lo, hi = MEASURED_TARGET
    print(f"\nmeasured: each budget's executable (tandem-compile "
          f"--device-profile={PROFILE} --gpu-memory=budget --fuse=false) on the sim backend "
          f"with --sim-timing=profile: every op held to its predicted time x "
          f"S, the queues concurrent on threads (--repeat {MEASURE_REPEAT}), "
          f"then the same executable with --serial (--repeat "
          f"{SERIAL_REPEAT}). Times are per run, divided by S. S starts at "
          f"{SIM_SCALE:g} and is doubled once if more than "
          f"{OVERRUN_LIMIT:.0%} of the paced op runs overrun their slot (the "
          f"CPU stand-in slower than the prediction x S)."
          + (" --quick: the 1/4 row only." if quick else "") + "\n")
    scale, doubled = SIM_SCALE, False
    header = ["budget", "S", "overruns", "measured us", "predicted us",
              "meas/pred", f"({lo:g}..{hi:g})", "serial us", "serial m/p",
              "overruns", "gain measured", "gain predicted", "checks"]
    table_rows, bad_all, notes = [], [], []
    for label, frac, budget, rep, *_ in rows:
        tag = "b-exe-unlimited" if frac is None else f"b-exe-{frac:g}"
        exe = compiler.build_executable(path, budget, tag)
        while True:
            conc = compiler.run_paced(exe, scale, MEASURE_REPEAT, False)
            over, paced = overrun_share(conc)
            if paced and over / paced > OVERRUN_LIMIT and not doubled:
                notes.append(f"{label}: {over} of {paced} paced op runs "
                             f"overran at S={scale:g} "
                             f"({over / paced:.1%} > {OVERRUN_LIMIT:.0%}): S "
                             f"doubled to {2 * scale:g} and rerun")
                scale, doubled = 2 * scale, True
                continue
            break
        ser = compiler.run_paced(exe, scale, SERIAL_REPEAT, True)
        c, sr = conc["schedule"], ser["schedule"]
        mk, serial = pred(rep, "makespan"), pred(rep, "serial")
        bad = []
        # The executable must carry the prediction the table shows, and the
        # two runs must be what was asked for.
        for what, got, want in [("makespan", c["predicted_us"] / scale, mk),
                                ("serial", sr["predicted_us"] / scale,
                                 serial)]:
            if abs(got - want) > 1e-5 * max(1.0, want):
                bad.append(f"the executable predicts a {what} of {got:.1f} "
                           f"us per run, the report {want:.1f} us")
        if not c["concurrent"]:
            bad.append("the concurrent run reports concurrent = false")
        if sr["concurrent"]:
            bad.append("the --serial run reports concurrent = true")
        ratio = c["makespan_us"] / c["predicted_us"]
        s_over, s_paced = overrun_share(ser)
        if paced and over / paced > OVERRUN_LIMIT:
            notes.append(f"{label}: still {over} of {paced} paced op runs "
                         f"overran at S={scale:g} ({over / paced:.1%}, "
                         f"after the one doubling): each overrun lengthens "
                         f"the measured makespan beyond the prediction")
        table_rows.append([
            label if budget is None else f"{label} {fmt_bytes(budget)}",
            f"{scale:g}",
            f"{over}/{paced}",
            fmt_us(c["makespan_us"] / scale), fmt_us(c["predicted_us"] / scale),
            f"{ratio:.3f}", "met" if lo <= ratio <= hi else "MISSED",
            fmt_us(sr["makespan_us"] / scale),
            f"{sr['makespan_us'] / sr['predicted_us']:.3f}",
            f"{s_over}/{s_paced}",
            f"{sr['makespan_us'] / c['makespan_us']:.2f}x",
            f"{serial / mk:.2f}x",
            "ok" if not bad else f"FAIL({len(bad)})"])
        bad_all += [f"{label} (measured): {b}" for b in bad]
    table(header, table_rows)
    print("\noverruns = paced op runs slower than their slot / all paced "
          "op runs (the concurrent run, then the serial run); measured us, "
          "predicted us = the profile's schedule.makespan_us and "
          "predicted_us (per run) divided by S; serial us, serial m/p = the "
          "--serial run and its measured / predicted; gain measured = serial "
          "run / concurrent run; gain predicted = the report's serial / "
          "makespan.")
    for n in notes:
        print(f"note: {n}")
    for b in bad_all:
        print(f"CHECK FAILED: {b}")
    return bad_all


def main():
    parser = argparse.ArgumentParser(
        description="Schedule benchmark: makespan vs serial, lower bound and "
                    "an accelerate-style baseline, from placement reports; "
                    "measured makespan vs predicted on the sim backend.")
    parser.add_argument("--build", default="/work/main/build",
                        help="build directory with bin/tandem-opt and "
                             "bin/tandem-compile (default: %(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help="fewer models, budgets and measured runs")
    parser.add_argument("--workdir",
                        help="keep the generated models, reports, "
                             "executables and profiles here (default: a "
                             "temporary directory, removed)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 if a check failed")
    parser.add_argument("--no-measure", action="store_true",
                        help="skip Table B's measured runs (tandem-compile "
                             "and the paced sim runs)")
    args = parser.parse_args()

    if args.workdir:
        os.makedirs(args.workdir, exist_ok=True)
        workdir, cleanup = os.path.abspath(args.workdir), False
    else:
        workdir, cleanup = tempfile.mkdtemp(prefix="tandem-bench-schedule-"), True
    start = time.perf_counter()
    try:
        compiler = Compiler(os.path.abspath(args.build), workdir,
                            not args.no_measure)
        records = table_a(compiler, args.quick)
        results, measured_bad = table_b(compiler, args.quick,
                                        not args.no_measure)
    except ToolFailure as failure:
        die(str(failure))
    finally:
        if cleanup:
            shutil.rmtree(workdir, ignore_errors=True)
    spent = ", ".join(f"{compiler.runs[k]} {k} runs "
                      f"({compiler.seconds[k]:.1f} s)"
                      for k in compiler.runs if compiler.runs[k])
    print(f"\n{spent}; {time.perf_counter() - start:.1f} s in all")
    failed = measured_bad or any(r["bad"] for r in records) or any(
        rep is not None and check_report(rep, budget)
        for _, _, budget, rep in (results or []))
    if failed:
        print("some checks failed (listed above)")
        if args.strict:
            sys.exit(1)


if __name__ == "__main__":
    main()
