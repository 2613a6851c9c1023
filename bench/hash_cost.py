#!/usr/bin/python3
"""bench/hash_cost.py [BUILD_DIR] - what content hashes (TRACER_HASH) cost
(issue 37). Not a test: it prints numbers.

1. Transfers of 1 KiB to 1 GiB (build/bench/hash_transfers: `target update
   to` and `update from` of one buffer, host offload), traced with
   TRACER_HASH=0 and with TRACER_HASH=1G, ROUNDS times (env, default 3),
   interleaved. Per size and direction: the median per-round ratio of the
   time per transfer, hashed / not hashed.
2. The target-dense benchmark (build/bench/target_dense, 100,000 regions of
   one int tofrom): loop and whole-run time, TRACER_HASH=0 vs 1G, the
   same way.
"""
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
rounds = int(os.environ.get("ROUNDS", "3"))
lib = os.path.join(build, "src", "libtracer.so")
xfer = os.path.join(build, "bench", "hash_transfers")
dense = os.path.join(build, "bench", "target_dense")
libdir = os.environ.get("OFFLOAD_LIBDIR", "/usr/lib/llvm-19/lib")
for f in (lib, xfer, dense):
    if not os.path.exists(f):
        sys.exit("hash_cost: %s is missing; build first (ninja -C %s)" % (f, build))

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
SIZES = [(KiB, 20000), (64 * KiB, 4000), (MiB, 400), (16 * MiB, 30), (256 * MiB, 4), (GiB, 2)]


def run(cmd, hash_on):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRACER_")}
    env.update({"LD_PRELOAD": lib, "TRACER_OUTPUT": "/tmp/hash-cost-%d" % os.getpid(),
                "TRACER_WRITE_AT_END": "0", "OMP_TARGET_OFFLOAD": "MANDATORY",
                "LD_LIBRARY_PATH": libdir})
    env["TRACER_HASH"] = "1G" if hash_on else "0"
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    wall = time.monotonic() - t0
    subprocess.run(["rm", "-rf", env["TRACER_OUTPUT"]], check=False)
    if p.returncode:
        sys.exit("hash_cost: %r failed: %s" % (cmd, p.stderr.decode(errors="replace")[-500:]))
    return p.stdout.decode(), wall


def num(key, text):
    return float(re.search(r"%s=([\d.]+)" % key, text).group(1))


def main():
    print("1. transfers, host offload: time per transfer, TRACER_HASH=1G / TRACER_HASH=0 "
          "(median of %d interleaved rounds)" % rounds)
    print("%10s %12s %12s %10s %12s %12s %10s" % ("bytes", "to ns", "to hashed", "ratio", "from ns",
                                                 "from hashed", "ratio"))
    for size, reps in SIZES:
        res = {False: [], True: []}
        for _ in range(rounds):
            for on in (False, True):
                out, _ = run([xfer, str(size), str(reps)], on)
                res[on].append((num("to_ns", out), num("from_ns", out)))
        r_to = statistics.median(b[0] / a[0] for a, b in zip(res[False], res[True]))
        r_from = statistics.median(b[1] / a[1] for a, b in zip(res[False], res[True]))
        med = lambda on, i: statistics.median(x[i] for x in res[on])  # noqa: E731
        print("%10d %12.0f %12.0f %10.3f %12.0f %12.0f %10.3f" % (size, med(False, 0), med(True, 0), r_to,
                                                                 med(False, 1), med(True, 1), r_from))
    print()
    print("2. target-dense (100,000 regions, one int tofrom): hashed / TRACER_HASH=0")
    loops, walls = [], []
    for _ in range(rounds + 2):
        got = {}
        for on in (False, True):
            out, wall = run([dense, "100000"], on)
            got[on] = (num("loop_ns_per_region", out), wall)
        loops.append(got[True][0] / got[False][0])
        walls.append(got[True][1] / got[False][1])
    print("loop %.3f  whole run (journal only, TRACER_WRITE_AT_END=0) %.3f" % (statistics.median(loops),
                                                                              statistics.median(walls)))


if __name__ == "__main__":
    main()
