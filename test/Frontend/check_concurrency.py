"""Compiled models under concurrency and churn:

  - one CompiledModel called from several Python threads gives PyTorch's
    answer on every call (calls to one model run one at a time);
  - several models loaded at once each give their own answers, also when
    called from several threads at once;
  - models compiled into the same workdir, one after the other or from two
    threads at once, each run their own code (each compile gets its own
    library path);
  - loading and closing a model many times (the same library again and
    again, and a smaller number of full compile -> call -> close cycles)
    leaves the thread count, the open file descriptors and the resident
    memory where they were.

Prints one line per check; exits 1 when one fails.

    check_concurrency.py SCRATCH_FOLDER [--loads N] [--compiles N]
"""
import argparse
import os
import sys
import threading

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import tandem  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("scratch")
parser.add_argument("--threads", type=int, default=4)
parser.add_argument("--calls", type=int, default=40, help="per thread")
parser.add_argument("--loads", type=int, default=100)
parser.add_argument("--compiles", type=int, default=6)
parser.add_argument("--rss-slack-mib", type=float, default=24.0)
options = parser.parse_args()
scratch = os.path.abspath(options.scratch)
os.makedirs(scratch, exist_ok=True)
torch.manual_seed(0)
torch.set_num_threads(1)  # the references; keeps PyTorch's pool out of the counts
failures = []


def check(what, ok, detail=""):
    print(f"{what}: {'ok' if ok else 'FAILED'}{(' (' + detail + ')') if detail else ''}")
    if not ok:
        failures.append(what)


def close_to(got, want) -> bool:
    return got.shape == want.shape and torch.allclose(got, want, rtol=1e-5, atol=1e-5)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))

    def forward(self, x):
        return self.layers(x)


class Softmax(nn.Module):
    """Big enough (512 x 1024) that the runtime's CPU kernels use its worker
    pool, so that loading and closing it starts and stops threads."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.rand(1024) + 0.5)

    def forward(self, x):
        return torch.softmax(x * self.scale, dim=-1)


def eager(module, x):
    with torch.no_grad():
        return module(x)


def compile_sim(module, x, **kwargs):
    return tandem.compile(module, (x,), backend="sim", device_profile="host", **kwargs)


shared = os.path.join(scratch, "shared")
small = torch.randn(8, 16)
big = torch.randn(512, 1024)
mlp, linear_a, linear_b, softmax = Mlp().eval(), nn.Linear(16, 8).eval(), \
    nn.Linear(16, 8).eval(), Softmax().eval()

# -- the same workdir: each compile its own library ------------------------------
models = {"mlp": (mlp, small), "linear a": (linear_a, small),
          "linear b": (linear_b, small), "softmax": (softmax, big)}
compiled = {}
for name, (module, x) in models.items():
    try:
        compiled[name] = compile_sim(module, x, workdir=shared)
    except Exception as error:  # noqa: BLE001
        check(f"same workdir: compiling {name}", False, f"{type(error).__name__}: {error}")
        # Carry on with a folder of its own, for the checks below.
        compiled[name] = compile_sim(module, x, workdir=os.path.join(scratch, name))
libraries = {run.library_path for run in compiled.values()}
check(f"same workdir: {len(compiled)} compiles, {len(libraries)} library paths",
      len(libraries) == len(compiled))
for name, run in compiled.items():
    module, x = models[name]
    check(f"same workdir: {name} gives its own answer", close_to(run(x), eager(module, x)))

# -- one model, several threads --------------------------------------------------


def hammer(calls_of, threads):
    """Runs calls_of(k) (a list of (run, module, input)) in thread k; returns
    (calls, wrong, errors)."""
    tally = {"calls": 0, "wrong": 0, "errors": []}
    lock = threading.Lock()
    start = threading.Barrier(threads)

    def body(k):
        work = calls_of(k)
        start.wait()
        for run, module, x in work:
            try:
                right = close_to(run(x), eager(module, x))
            except Exception as error:  # noqa: BLE001
                with lock:
                    tally["errors"].append(f"{type(error).__name__}: {error}")
                continue
            with lock:
                tally["calls"] += 1
                tally["wrong"] += not right

    workers = [threading.Thread(target=body, args=(k,)) for k in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return tally["calls"], tally["wrong"], tally["errors"]


def inputs_like(x, count, seed):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(x.shape, generator=generator) for _ in range(count)]


for name in ("mlp", "softmax"):
    module, x = models[name]
    run = compiled[name]
    calls = options.calls if name == "mlp" else max(4, options.calls // 4)
    done, wrong, errors = hammer(
        lambda k: [(run, module, t) for t in inputs_like(x, calls, 100 + k)],
        options.threads)
    check(f"one model, {options.threads} threads: {name}: {done} calls, {wrong} wrong, "
          f"{len(errors)} errors", done == options.threads * calls and not wrong
          and not errors, "; ".join(errors[:2]))

# -- several models at once, from several threads --------------------------------
names = sorted(compiled)


def mixed(k):
    work = []
    for i, x in enumerate(inputs_like(small, options.calls, 200 + k)):
        name = names[(i + k) % len(names)]
        module, example = models[name]
        work.append((compiled[name], module, x if example is small else
                     torch.randn(example.shape)))
    return work


done, wrong, errors = hammer(mixed, options.threads)
check(f"{len(names)} models at once, {options.threads} threads: {done} calls, {wrong} "
      f"wrong, {len(errors)} errors", done == options.threads * options.calls
      and not wrong and not errors, "; ".join(errors[:2]))

# -- two compiles into one workdir at once -----------------------------------------
results = {}


def compile_and_check(name):
    module, x = models[name]
    try:
        run = compile_sim(module, x, workdir=shared)
        results[name] = close_to(run(x), eager(module, x))
        run.close()
    except Exception as error:  # noqa: BLE001
        results[name] = f"{type(error).__name__}: {error}"


workers = [threading.Thread(target=compile_and_check, args=(name,))
           for name in ("linear a", "linear b")]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join()
check("two compiles into one workdir at once: each its own answer",
      all(value is True for value in results.values()), str(results))

# -- close() while another thread calls --------------------------------------------
module, x = models["mlp"]
closing = compile_sim(module, x, workdir=shared)
outcomes = {"right": 0, "wrong": 0, "closed": 0, "other": []}
started = threading.Event()


def call_until_closed():
    want_here = eager(module, x)
    while True:
        try:
            got = closing(x)
        except tandem.RuntimeFailure as error:
            if str(error) == "the model was closed":
                outcomes["closed"] += 1
            else:
                outcomes["other"].append(str(error))
            return
        except Exception as error:  # noqa: BLE001
            outcomes["other"].append(f"{type(error).__name__}: {error}")
            return
        outcomes["right" if close_to(got, want_here) else "wrong"] += 1
        if outcomes["right"] >= 5:
            started.set()


caller = threading.Thread(target=call_until_closed)
caller.start()
started.wait(30)
closing.close()
caller.join()
check("close() while another thread calls: right answers, then 'the model was "
      "closed'", outcomes["closed"] == 1 and not outcomes["wrong"]
      and not outcomes["other"], str(outcomes))

# What the cycles load again and again: the softmax's library.
loaded = compiled["softmax"]
spec = dict(library_path=loaded.library_path, weights_path=loaded.weights_path,
            mlir_path=loaded.mlir_path, input_types=loaded.input_types,
            output_types=loaded.output_types, report=loaded.report, backend="sim")
want = eager(softmax, big)
for run in compiled.values():
    run.close()
compiled.clear()

# -- churn: threads, descriptors and memory stay flat ------------------------------


def threads():
    return len(os.listdir("/proc/self/task"))


def descriptors():
    return len(os.listdir("/proc/self/fd"))


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def mapped(path):
    with open("/proc/self/maps") as f:
        return sum(1 for line in f if path in line)


def load_call_close():
    run = tandem.CompiledModel(**spec)
    right = close_to(run(big), want)
    run.close()
    return right


for _ in range(10):  # warm up: allocator pools, lazily loaded libraries
    load_call_close()
before = (threads(), descriptors(), rss_mib())
wrong = sum(not load_call_close() for _ in range(options.loads))
after = (threads(), descriptors(), rss_mib())
check(f"{options.loads} load -> call -> close cycles of one library: {wrong} wrong",
      wrong == 0)
check(f"  threads {before[0]} -> {after[0]}", after[0] <= before[0])
check(f"  file descriptors {before[1]} -> {after[1]}", after[1] <= before[1])
grew = after[2] - before[2]
check(f"  resident memory grew {grew:.0f} MiB (at most {options.rss_slack_mib:.0f})",
      grew <= options.rss_slack_mib, f"{before[2]:.0f} -> {after[2]:.0f} MiB")
check(f"  library mapped after close: {mapped(spec['library_path'])}",
      mapped(spec["library_path"]) == 0)


def compile_call_close(k):
    torch.manual_seed(k)
    module = Softmax().eval()
    run = compile_sim(module, big)  # its own temporary folder
    right = close_to(run(big), eager(module, big))
    folder = os.path.dirname(run.library_path)
    run.close()
    return right and not os.path.exists(folder)


compile_call_close(-1)
before = (threads(), descriptors(), rss_mib())
wrong = sum(not compile_call_close(k) for k in range(options.compiles))
after = (threads(), descriptors(), rss_mib())
check(f"{options.compiles} compile -> call -> close cycles: {wrong} wrong or left "
      "files", wrong == 0)
check(f"  threads {before[0]} -> {after[0]}", after[0] <= before[0])
check(f"  file descriptors {before[1]} -> {after[1]}", after[1] <= before[1])
grew = after[2] - before[2]
check(f"  resident memory grew {grew:.0f} MiB (at most {options.rss_slack_mib:.0f})",
      grew <= options.rss_slack_mib, f"{before[2]:.0f} -> {after[2]:.0f} MiB")
with open("/proc/self/maps") as maps:
    left = sum(1 for line in maps if "/tandem-" in line and "model.so" in line)
check(f"  libraries of the cycles still mapped: {left}", left == 0)

print(f"summary: {len(failures)} failed" + (": " + "; ".join(failures) if failures else ""))
sys.exit(1 if failures else 0)
