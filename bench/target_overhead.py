#!/usr/bin/python3
"""bench/target_overhead.py [BUILD_DIR] [REGIONS] - what tracer costs on
target-dense offload code (issue 19). Not a test: it prints numbers.

Runs build/bench/target_dense (REGIONS target regions, default 100000, one
int mapped tofrom each) in four configurations, ROUNDS times (env, default
5), interleaved (every round runs each configuration once, in turn):

  untraced   no OMPT tool
  empty tool build/bench/target_noop_tool.so preloaded: the device and
             target callbacks tracer registers, each returning at once
  + thread   the same, with one more thread that only sleeps: what a
             second thread (tracer's journal thread) costs by itself,
             glibc leaving its single-threaded fast paths
  targets    libtracer.so, TRACER_OMPT=constructs,data_ops,kernels
  defaults   libtracer.so, default settings
  deferred   libtracer.so, TRACER_WRITE_AT_END=0: the journal only; the
             run does not wait for the OTF2 write (tracer recover does it
             later, at the cost the defaults row pays at exit)

Per run: the loop's time per region as the program measured it (the write at
exit is not in it), the whole process's wall time, and its peak RSS (wait4).
Prints, per configuration, the medians of the per-round ratios to the
untraced run (loop and whole run), to the empty tool and to the empty tool
with its sleeping thread (loop), the median
loop time per region, whole-run time and peak RSS. Every run's check value
must equal the untraced one.

LD_LIBRARY_PATH gets /usr/lib/llvm-19/lib (the offload_libdir) in front, in
every configuration, so that libomptarget finds libomp and target callbacks
reach the empty tool too (tracer connects them itself).
With TARGET_BENCH_KV=FILE the results are also written to FILE, one line
per configuration: "config=K loop_ns=X loop_vs_untraced=R loop_vs_noop=N
loop_vs_noop_thread=T whole_s=W whole_vs_untraced=V rss_mb=M" (for bench/run_benchmarks.sh).
Exit status: 0, or 1 when a run failed or its check value differed.
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
regions = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
rounds = int(os.environ.get("ROUNDS", "5"))
prog = os.path.join(build, "bench", "target_dense")
noop = os.path.join(build, "bench", "target_noop_tool.so")
lib = os.path.join(build, "src", "libtracer.so")
libdir = os.environ.get("OFFLOAD_LIBDIR", "/usr/lib/llvm-19/lib")
for f in (prog, noop, lib):
    if not os.path.exists(f):
        sys.exit("target_overhead: %s is missing; build first (ninja -C %s)" % (f, build))

CONFIGS = [
    ("untraced", "untraced", {}),
    ("noop", "empty OMPT tool", {"LD_PRELOAD": noop}),
    ("noop2", "empty OMPT tool + 1 sleeping thread", {"LD_PRELOAD": noop, "TARGET_NOOP_THREAD": "1"}),
    ("targets", "tracer, TRACER_OMPT=constructs,data_ops,kernels",
     {"LD_PRELOAD": lib, "TRACER_OMPT": "constructs,data_ops,kernels"}),
    ("defaults", "tracer, defaults", {"LD_PRELOAD": lib}),
    ("deferred", "tracer, defaults, TRACER_WRITE_AT_END=0",
     {"LD_PRELOAD": lib, "TRACER_WRITE_AT_END": "0"}),
]
# APEX (OMPT + OTF2) where it is built: APEX_EXEC names its apex_exec.
APEX_EXEC = os.environ.get("APEX_EXEC")
if APEX_EXEC:
    CONFIGS.append(("apex", "APEX, OMPT + OTF2 (apex_exec --apex:ompt --apex:otf2)", {"APEX": APEX_EXEC}))


def run(tmp, key, extra, i):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRACER_") and k != "LD_PRELOAD"}
    env["OMP_TARGET_OFFLOAD"] = "MANDATORY"
    env["LD_LIBRARY_PATH"] = libdir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env.update(extra)
    if "LD_PRELOAD" in extra and extra["LD_PRELOAD"] == lib:
        env["TRACER_OUTPUT"] = os.path.join(tmp, "%s.%d" % (key, i))
    out = os.path.join(tmp, "out")
    argv = [prog, str(regions)]
    if "APEX" in extra:
        argv = [extra["APEX"], "--apex:ompt", "--apex:otf2"] + argv
        env["APEX_OTF2_ARCHIVE_PATH"] = os.path.join(tmp, "apex.%d" % i)
    t0 = time.monotonic()
    with open(out, "wb") as f:
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.DEVNULL, env=env, cwd=tmp)
        _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    text = open(out).read()
    m = re.search(r"loop_ns_per_region=([\d.]+) check=(-?\d+)", text)
    ok = os.waitstatus_to_exitcode(status) == 0 and m
    shutil.rmtree(env.get("TRACER_OUTPUT", os.path.join(tmp, "none")), ignore_errors=True)
    shutil.rmtree(env.get("APEX_OTF2_ARCHIVE_PATH", os.path.join(tmp, "none")), ignore_errors=True)
    return ok, (float(m.group(1)) if m else 0.0), (int(m.group(2)) if m else None), wall, ru.ru_maxrss / 1024.0


def main():
    tmp = tempfile.mkdtemp(prefix="tracer-target-bench-")
    res = {k: [] for k, _, _ in CONFIGS}
    failed = 0
    try:
        with open("/proc/loadavg") as f:
            print("target_overhead: %d regions, %d rounds, load average %s" % (regions, rounds, " ".join(f.read().split()[:3])))
        for i in range(rounds):
            for key, _, extra in CONFIGS:
                ok, loop, check, wall, rss = run(tmp, key, extra, i)
                if not ok:
                    print("target_overhead: run %s %d failed" % (key, i), file=sys.stderr)
                    failed = 1
                res[key].append((loop, check, wall, rss))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base = res["untraced"]
    for key, _, _ in CONFIGS:
        for r, b in zip(res[key], base):
            if r[1] != b[1]:
                print("target_overhead: %s: check %s, untraced %s" % (key, r[1], b[1]), file=sys.stderr)
                failed = 1
    med = statistics.median
    kv = open(os.environ["TARGET_BENCH_KV"], "w") if os.environ.get("TARGET_BENCH_KV") else None
    print("| configuration | loop ns/region | loop / untraced | loop / empty tool | loop / empty tool + thread "
          "| whole run s | whole / untraced | peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|")
    for key, label, _ in CONFIGS:
        rs = res[key]
        loop_u = med(r[0] / b[0] for r, b in zip(rs, base) if b[0])
        loop_n = med(r[0] / n[0] for r, n in zip(rs, res["noop"]) if n[0])
        loop_t = med(r[0] / n[0] for r, n in zip(rs, res["noop2"]) if n[0])
        whole_u = med(r[2] / b[2] for r, b in zip(rs, base))
        print("| %s | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f |" % (
            label, med(r[0] for r in rs), loop_u, loop_n, loop_t, med(r[2] for r in rs), whole_u,
            med(r[3] for r in rs)))
        if kv:
            kv.write("config=%s loop_ns=%.0f loop_vs_untraced=%.2f loop_vs_noop=%.2f loop_vs_noop_thread=%.2f "
                     "whole_s=%.2f whole_vs_untraced=%.2f rss_mb=%.0f\n"
                     % (key, med(r[0] for r in rs), loop_u, loop_n, loop_t, med(r[2] for r in rs), whole_u,
                        med(r[3] for r in rs)))
    if kv:
        kv.close()
    sys.exit(failed)


if __name__ == "__main__":
    main()
