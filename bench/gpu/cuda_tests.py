#!/usr/bin/env python3
"""The CUDA tests on a GPU machine that has no LLVM (so no tandem-compile,
lit or FileCheck): the test scripts run unchanged there with a stand-in
compiler that hands back binaries compiled beforehand.

  prepare DIR  (where the tree is built): runs each CUDA test's script
               (test/E2E/op_suite.py, fused_numerics_check.py and
               fusion_check.py, each told "cuda") with this file as its
               compiler in record mode: each compile goes to the real
               tandem-compile, the binary is kept in DIR/cuda-tests/ under
               a key made of the model's text and the flags (not its
               paths), and the script gets a stand-in that runs it with
               the sim backend where the script asks for cuda. bench.py
               packs the kept binaries with the others.
  run DIR OUT  (on the GPU machine): runs the same scripts with the CUDA
               backend and this file as the compiler in replay mode; a
               compile whose key was not recorded fails with a message
               (so a script that changed since prepare shows up as failed,
               not as passed). Each script's output goes to
               OUT/cuda-tests.txt with its exit status, and a line per
               script says PASSED or FAILED. Then, where tandem-calibrate is
               on the PATH (it links LLVM and MLIR, so not on a machine
               without them), `tandem-calibrate --quick`, whose profile
               must show the GPU's rates.

TANDEM_CUDA_TESTS_ONLY=SUBSTRING runs the scripts whose names hold it.

As a compiler (argv: MODEL [FLAGS] -o BINARY), the mode and folder come from
TANDEM_CUDA_TESTS_MODE (record|replay) and TANDEM_CUDA_TESTS_DIR, and record
mode's compiler from TANDEM_COMPILE.
"""
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.abspath(__file__)
SCRIPTS = [  # (name, script, its arguments after the compiler and workdir)
    ("ops-cuda", "test/E2E/op_suite.py", ["", "{backend}"]),
    ("fused-numerics-cuda", "test/E2E/fused_numerics_check.py", ["{backend}"]),
    ("fusion-cuda", "test/E2E/fusion_check.py", ["{backend}"]),
]


def key_of(argv):
    """The recorded binary's name: the model's text and every flag but the
    model's path and the output's."""
    model, flags, skip = None, [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "-o":
            skip = True
        elif arg.endswith(".mlir") and model is None:
            model = arg
        else:
            flags.append(arg)
    digest = hashlib.sha256()
    with open(model, "rb") as f:
        digest.update(f.read())
    digest.update("\0".join(flags).encode())
    return digest.hexdigest()[:32], model


def compile_(argv):
    mode = os.environ["TANDEM_CUDA_TESTS_MODE"]
    folder = os.path.join(os.environ["TANDEM_CUDA_TESTS_DIR"], "cuda-tests")
    output = argv[argv.index("-o") + 1]
    key, model = key_of(argv)
    kept = os.path.join(folder, key)
    if mode == "record":
        compiled = subprocess.run([os.environ["TANDEM_COMPILE"]] + argv)
        if compiled.returncode != 0:
            return compiled.returncode
        os.makedirs(folder, exist_ok=True)
        shutil.move(output, kept)
    elif not os.path.exists(kept):
        print(f"cuda_tests: {model} with flags {argv} was not compiled by "
              f"`cuda_tests.py prepare` (the test changed since?)", file=sys.stderr)
        return 1
    if mode == "record" or os.environ.get("TANDEM_CUDA_TESTS_ON_SIM"):
        # The script's runs ask for the CUDA backend; here they get the sim
        # backend instead, so its whole flow (and its checks, which the sim
        # passes exactly) is exercised where there is no GPU.
        with open(output, "w") as f:
            f.write('#!/bin/sh\nfor a; do shift; [ "$a" = cuda ] && a=sim; '
                    f'set -- "$@" "$a"; done\nexec {shlex.quote(kept)} "$@"\n')
    else:
        shutil.copy(kept, output)
    os.chmod(output, 0o755)
    return 0


def scripts():
    """The tests' scripts; at smoke sizes (TANDEM_GPU_BENCH_SMOKE, which
    checks this file itself) the op suite's layer_norm cases only."""
    if os.environ.get("TANDEM_GPU_BENCH_SMOKE"):
        return [("ops-cuda", "test/E2E/op_suite.py", ["layer_norm", "{backend}"])]
    only = os.environ.get("TANDEM_CUDA_TESTS_ONLY", "")  # a name's substring
    return [entry for entry in SCRIPTS if only in entry[0]]


def run_scripts(folder, work, backend, mode, log, on_sim=False):
    env = dict(os.environ, TANDEM_CUDA_TESTS_MODE=mode, TANDEM_CUDA_TESTS_DIR=folder,
               PYTHONPATH=os.path.join(ROOT, "python"))
    if on_sim:
        env["TANDEM_CUDA_TESTS_ON_SIM"] = "1"
    # fusion_check.py assembles PTX where this names ptxas: CI does that;
    # through the stand-in compiler there would be no PTX to assemble.
    env.pop("TANDEM_PTXAS", None)
    results = {}
    for name, script, extra in scripts():
        started = time.perf_counter()
        workdir = os.path.join(work, name)
        shutil.rmtree(workdir, ignore_errors=True)
        command = [sys.executable, os.path.join(ROOT, script), HERE, workdir] + \
            [arg.format(backend=backend) for arg in extra]
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        verdict = "PASSED" if done.returncode == 0 else "FAILED"
        results[name] = {"passed": done.returncode == 0, "seconds": round(seconds, 1),
                         "summary": done.stdout.strip().splitlines()[-1:]}
        if log:
            log.write(f"==== {name}: {verdict} (exit {done.returncode}, {seconds:.0f} s)\n"
                      f"{done.stdout}{done.stderr}\n")
            log.flush()
        print(f"{name}: {verdict} in {seconds:.0f} s "
              f"{results[name]['summary']}", flush=True)
    return results


def prepare(folder):
    os.environ.setdefault("TANDEM_COMPILE",
                          os.path.join(ROOT, "build", "bin", "tandem-compile"))
    shutil.rmtree(os.path.join(folder, "cuda-tests"), ignore_errors=True)
    results = run_scripts(folder, os.path.join(folder, "cuda-tests-work"), "cuda",
                          "record", None)
    shutil.rmtree(os.path.join(folder, "cuda-tests-work"), ignore_errors=True)
    failed = [name for name, r in results.items() if not r["passed"]]
    if failed:
        sys.exit(f"cuda_tests: {', '.join(failed)} failed on the sim backend here")


def run_calibrate(calibrate, log):
    """tandem-calibrate-gpu.test's check: the profile shows the GPU's rates."""
    profile = "/tmp/tandem-calibrate-gpu.json"
    started = time.perf_counter()
    done = subprocess.run([calibrate, "--quick", "-o", profile],
                          capture_output=True, text=True)
    passed, detail = False, done.stderr.strip()[-2000:]
    if done.returncode == 0:
        with open(profile) as f:
            measured = json.load(f)
        gpu = measured.get("gpu") or {}
        h2d = measured.get("links", {}).get("h2d", {}).get("pinned", {})
        passed = gpu.get("peak_flops", {}).get("f32", 0) > 1e12 and \
            h2d.get("bandwidth", 0) > 1e9
        detail = json.dumps({"gpu": gpu, "links": measured.get("links")})[:4000]
    verdict = "PASSED" if passed else "FAILED"
    log.write(f"==== tandem-calibrate-gpu: {verdict} (exit {done.returncode}, "
              f"{time.perf_counter() - started:.0f} s)\n{done.stdout}{detail}\n")
    print(f"tandem-calibrate-gpu: {verdict}", flush=True)
    return {"passed": passed}


def run(folder, out, on_sim=False):
    """ON_SIM (no GPU here): the binaries run on the sim backend, which says
    only that the prepared folder and the scripts work."""
    with open(os.path.join(out, "cuda-tests.txt"), "w") as log:
        if on_sim:
            note = "no CUDA GPU here: the CUDA tests' binaries run on the sim backend"
            log.write(note + "\n")
            print(note, flush=True)
        work = os.path.join(tempfile.gettempdir(), "tandem-cuda-tests")
        results = run_scripts(folder, work, "cuda", "replay", log, on_sim)
        # tandem-calibrate-gpu.test needs tandem-calibrate, which links LLVM and
        # MLIR (too large to carry): on a machine without them it is not run.
        calibrate = shutil.which("tandem-calibrate")
        if calibrate:
            results["tandem-calibrate-gpu"] = run_calibrate(calibrate, log)
        else:
            log.write("==== tandem-calibrate-gpu: not run (no tandem-calibrate here)\n")
            print("tandem-calibrate-gpu: not run (no tandem-calibrate here)", flush=True)
    with open(os.path.join(out, "cuda-tests.json"), "w") as f:
        json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "prepare":
        prepare(sys.argv[2])
    elif len(sys.argv) >= 2 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], on_sim=os.environ.get("TANDEM_CUDA_TESTS_ON_SIM") == "1")
    else:
        sys.exit(compile_(sys.argv[1:]))
