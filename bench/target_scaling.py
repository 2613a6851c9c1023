#!/usr/bin/python3
"""bench/target_scaling.py [BUILD_DIR] - what tracer's end of run costs on
target-dense offload code as the run grows, and on a tiny run (issue 19).
Not a test: it prints numbers.

1. Fixed cost: build/bench/target_dense with 20 target regions, untraced
   and under tracer (defaults), ROUNDS times interleaved (env, default 11):
   the medians of the whole process's wall time and their difference, the
   time a short traced program pays (start-up and the end-of-run write).
2. Length: the same program at LENGTHS regions (env, comma-separated,
   default 20000,200000; 2000000 takes about a minute more), untraced and
   under tracer with TRACER_MAX_MEMORY=16M, once each: whole wall time and
   peak RSS (wait4), and the bound issue 19 sets for the traced run's peak,
   untraced + TRACER_MAX_MEMORY + 64 MiB.

LD_LIBRARY_PATH gets /usr/lib/llvm-19/lib (OFFLOAD_LIBDIR) in front, so that
libomptarget finds libomp. Exit status: 0, or 1 when a run failed or a
traced run's check value differed from the untraced one.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
prog = os.path.join(build, "bench", "target_dense")
lib = os.path.join(build, "src", "libtracer.so")
libdir = os.environ.get("OFFLOAD_LIBDIR", "/usr/lib/llvm-19/lib")
rounds = int(os.environ.get("ROUNDS", "11"))
lengths = [int(x) for x in os.environ.get("LENGTHS", "20000,200000").split(",") if x]
MAX_MEMORY_MB = 16
for f in (prog, lib):
    if not os.path.exists(f):
        sys.exit("target_scaling: %s is missing; build first (ninja -C %s)" % (f, build))


def run(tmp, regions, traced, extra=None):
    """(ok, check, wall s, peak RSS MB) of one run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRACER_") and k != "LD_PRELOAD"}
    env["OMP_TARGET_OFFLOAD"] = "MANDATORY"
    env["LD_LIBRARY_PATH"] = libdir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    out_dir = os.path.join(tmp, "trace")
    if traced:
        env["LD_PRELOAD"] = lib
        env["TRACER_OUTPUT"] = out_dir
        env.update(extra or {})
    out = os.path.join(tmp, "out")
    t0 = time.monotonic()
    with open(out, "wb") as f:
        p = subprocess.Popen([prog, str(regions)], stdout=f, stderr=subprocess.DEVNULL, env=env)
        _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    m = re.search(r"check=(-?\d+)", open(out).read())
    ok = os.waitstatus_to_exitcode(status) == 0 and m and (not traced or os.path.exists(
        os.path.join(out_dir, "traces.otf2")))
    shutil.rmtree(out_dir, ignore_errors=True)
    return bool(ok), (m.group(1) if m else None), wall, ru.ru_maxrss / 1024.0


def main():
    tmp = tempfile.mkdtemp(prefix="tracer-target-scaling-")
    failed = 0
    try:
        with open("/proc/loadavg") as f:
            print("target_scaling: load average %s" % " ".join(f.read().split()[:3]))
        walls = {False: [], True: []}
        for _ in range(rounds):
            for traced in (False, True):
                ok, _, wall, _ = run(tmp, 20, traced)
                failed |= not ok
                walls[traced].append(wall)
        u, t = statistics.median(walls[False]), statistics.median(walls[True])
        print("fixed cost, 20 target regions, medians of %d rounds: untraced %.1f ms, tracer %.1f ms: "
              "+%.1f ms" % (rounds, u * 1e3, t * 1e3, (t - u) * 1e3))
        print("| regions | untraced s | tracer s | whole / untraced | untraced peak RSS MB | tracer peak RSS MB "
              "| bound MB (untraced + %dM + 64M) |" % MAX_MEMORY_MB)
        print("|---|---|---|---|---|---|---|")
        for n in lengths:
            ok_u, check_u, wall_u, rss_u = run(tmp, n, False)
            ok_t, check_t, wall_t, rss_t = run(tmp, n, True, {"TRACER_MAX_MEMORY": "%dM" % MAX_MEMORY_MB})
            if not ok_u or not ok_t or check_u != check_t:
                print("target_scaling: %d regions: run failed or check differs (%s, %s)" % (n, check_u, check_t),
                      file=sys.stderr)
                failed = 1
            bound = rss_u + MAX_MEMORY_MB + 64
            print("| %d | %.2f | %.2f | %.2f | %.0f | %.0f | %.0f (%s) |" % (
                n, wall_u, wall_t, wall_t / wall_u, rss_u, rss_t, bound, "within" if rss_t <= bound else "over"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
