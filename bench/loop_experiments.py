#!/usr/bin/python3
"""bench/loop_experiments.py [BUILD_DIR] [REGIONS] - why libomptarget runs
slower under tracer (issue 33, goal 4): the target-dense loop
(bench/target_dense, REGIONS regions, default 100000) under configurations
that each remove one suspect, interleaved over ROUNDS rounds (env, default
5). Not a test: it prints numbers.

  empty          the empty OMPT tool (bench/target_noop_tool.so)
  tracer         tracer, TRACER_WRITE_AT_END=0 (the loop only; no write at exit)
  no-reuse       tracer with a pool no chunk is taken from twice
                 (TRACER_MAX_MEMORY = TRACER_BUFFER_SIZE = 512M): the
                 journal thread never read the lines the program writes into
  one-core       tracer, the whole process on CPU 0 (taskset): the journal
                 thread on the program's core (no line moves between cores;
                 the core is shared)
  empty-one-core the empty tool on CPU 0 (one-core's baseline)
  no-membarrier  tracer with membarrier(2) refused (tests' no_membarrier):
                 the recording threads fence themselves, no IPI is sent

Also counted, once, with strace -f (when installed): the journal thread's
wake-ups (futex calls) and membarrier calls during a tracer run.
Prints per configuration the median loop ns/region and the median of the
per-round ratio to the empty tool (one-core: to empty-one-core).
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
regions = sys.argv[2] if len(sys.argv) > 2 else "100000"
rounds = int(os.environ.get("ROUNDS", "5"))
prog = os.path.join(build, "bench", "target_dense")
noop = os.path.join(build, "bench", "target_noop_tool.so")
lib = os.path.join(build, "src", "libtracer.so")
nomb = os.path.join(build, "tests", "no_membarrier")
libdir = os.environ.get("OFFLOAD_LIBDIR", "/usr/lib/llvm-19/lib")

CONFIGS = [
    ("empty", [], {"LD_PRELOAD": noop}),
    ("tracer", [], {"LD_PRELOAD": lib}),
    ("no-reuse", [], {"LD_PRELOAD": lib, "TRACER_MAX_MEMORY": "512M", "TRACER_BUFFER_SIZE": "512M"}),
    ("one-core", ["taskset", "-c", "0"], {"LD_PRELOAD": lib}),
    ("empty-one-core", ["taskset", "-c", "0"], {"LD_PRELOAD": noop}),
]
if os.path.exists(nomb):
    CONFIGS.append(("no-membarrier", [nomb], {"LD_PRELOAD": lib}))
BASE = {"one-core": "empty-one-core"}


def env_for(extra, tmp, key, i):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRACER_") and k != "LD_PRELOAD"}
    env["OMP_TARGET_OFFLOAD"] = "MANDATORY"
    env["LD_LIBRARY_PATH"] = libdir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env["TRACER_WRITE_AT_END"] = "0"
    env["TRACER_OUTPUT"] = os.path.join(tmp, "%s.%d" % (key, i))
    env.update(extra)
    return env


def run(tmp, key, prefix, extra, i):
    env = env_for(extra, tmp, key, i)
    p = subprocess.run(prefix + [prog, regions], env=env, capture_output=True, text=True)
    shutil.rmtree(env["TRACER_OUTPUT"], ignore_errors=True)
    m = re.search(r"loop_ns_per_region=([\d.]+)", p.stdout)
    if p.returncode or not m:
        sys.exit("loop_experiments: %s failed: %s" % (key, p.stderr.strip()[-300:]))
    return float(m.group(1))


def syscalls(tmp):
    """Per thread: futex and membarrier calls of a tracer run (strace -f)."""
    if not shutil.which("strace"):
        return "strace not installed"
    out = os.path.join(tmp, "strace")
    env = env_for({"LD_PRELOAD": lib}, tmp, "strace", 0)
    subprocess.run(["strace", "-f", "-e", "trace=futex,membarrier", "-o", out, prog, regions], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    per = {}
    for line in open(out):
        f = line.split()
        if len(f) > 1 and f[1].startswith(("futex", "membarrier")):
            per.setdefault(f[0], {}).setdefault(f[1].split("(")[0], 0)
            per[f[0]][f[1].split("(")[0]] += 1
    shutil.rmtree(env["TRACER_OUTPUT"], ignore_errors=True)
    return "; ".join("thread %s: %s" % (t, ", ".join("%d %s" % (n, c) for c, n in sorted(v.items())))
                     for t, v in sorted(per.items()))


def main():
    for f in (prog, noop, lib):
        if not os.path.exists(f):
            sys.exit("loop_experiments: %s is missing; build first" % f)
    tmp = tempfile.mkdtemp(prefix="tracer-loop-exp-")
    res = {k: [] for k, _, _ in CONFIGS}
    try:
        for i in range(rounds):
            for key, prefix, extra in CONFIGS:
                res[key].append(run(tmp, key, prefix, extra, i))
        calls = syscalls(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = statistics.median
    print("loop_experiments: %s regions, %d interleaved rounds" % (regions, rounds))
    print("| configuration | loop ns/region | / its empty tool |")
    print("|---|---|---|")
    for key, _, _ in CONFIGS:
        base = res[BASE.get(key, "empty")]
        print("| %s | %.0f | %.2f |" % (key, med(res[key]), med(r / b for r, b in zip(res[key], base))))
    print("syscalls during a tracer run (strace -f): %s" % calls)


if __name__ == "__main__":
    main()
