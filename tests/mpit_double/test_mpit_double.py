#!/usr/bin/python3
"""Self-test of the MPI_T event provider TEST DOUBLE (tests/mpit_double).

TEST DOUBLE: libmpit_double.so stands in for an MPI library that raises
MPI_T events; Debian's MPICH 4.0.2 has the interface but raises none (see
mpit_double.h for what the double implements and what not). This driver runs
mpit_double_selftest, an MPI_T tool, with the double LD_PRELOADed, directly
(a singleton) and under `mpiexec.mpich -n 2`, and compares what the tool
received (SELFTEST_RECV) with the double's ground truth (MPIT_DOUBLE_LOG):
every raise goes to exactly `delivered` callbacks with the same source, tick
and element values, in order; every drop reaches `handlers` dropped handlers
with its count. It also checks the scripted scenario (MPIT_DOUBLE_SCRIPT),
the clocks (source 0 ordered, wrapping at 2^40 microseconds; source 1
unordered nanoseconds, origin +5e12 ns), and that without the double, or
with MPIT_DOUBLE_EMPTY=1, the tool sees no sources and no event types.
"""
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import harness as h  # noqa: E402

PERIOD0 = 1 << 40
ORIGIN1 = 5000000000000
SCRIPT = ("@tinit;weird:1;"
          "@init;comm_created:4:0x1234;drop:ompi.mpi.communicator_created:3;unordered_burst:5;"
          "weird:2;released:2:100;"
          "@finalize;errhandler:5:9701:0x54000000:world")
# The same, with a wrap of source 0 between weird:2 and weird:3.
SCRIPT_WRAP = SCRIPT.replace("weird:2;", "wrap_in:3000;weird:2;sleep_us:8000;weird:3;")


def parse(line):
    kind, _, rest = line.partition(" ")
    return kind, dict(kv.split("=", 1) for kv in rest.split())


def preload():
    san = [p for p in re.split(r"[:\s]+", os.environ.get("TEST_SANITIZER_PRELOAD", "")) if p]
    return ":".join(san + [h.env_path("TEST_MPIT_DOUBLE_LIB")])


def run(c, label, tmp, mpiexec=None, with_double=True, extra=None, want_ranks=1):
    d = os.path.join(tmp, label)
    os.makedirs(d)
    env = h.base_env()
    env["MPIT_DOUBLE_LOG"] = os.path.join(d, "double.%p.log")
    env["SELFTEST_RECV"] = os.path.join(d, "recv.%p.log")
    env.pop("MPIT_DOUBLE_SCRIPT", None)
    if with_double:
        env["LD_PRELOAD"] = preload()
    env.update(extra or {})
    cmd = [h.env_path("TEST_BIN")]
    if mpiexec:
        cmd = [mpiexec, "-n", str(want_ranks)] + cmd
    p = subprocess.run(cmd, cwd=d, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120, universal_newlines=True)
    out = p.stdout + p.stderr
    if not c.check(p.returncode == 0, "%s: exit status %d\n%s" % (label, p.returncode, out[-3000:])):
        return None
    for m in h.SANITIZER_MARKERS:
        c.check(m not in out, "%s: sanitizer report\n%s" % (label, out[-3000:]))
    return d, out


def compare(c, label, d, ranks, wrap):
    """Ground truth against what the tool received, per process."""
    logs = sorted(glob.glob(os.path.join(d, "double.*.log")))
    c.equal(len(logs), ranks, "%s: double logs" % label)
    seen_ranks = set()
    for log in logs:
        pid = log.split(".")[-2]
        what = "%s pid %s" % (label, pid)
        recv_path = os.path.join(d, "recv.%s.log" % pid)
        if not c.check(os.path.exists(recv_path), "%s: no SELFTEST_RECV file" % what):
            continue
        truth = [parse(l) for l in open(log).read().splitlines() if l]
        got = [parse(l) for l in open(recv_path).read().splitlines() if l]
        raises = [f for k, f in truth if k == "raise"]
        drops = [f for k, f in truth if k == "drop"]
        for f in raises + drops:
            c.equal(f["pid"], pid, "%s: pid field" % what)

        # Every raise reached `delivered` callbacks, in order, unchanged.
        want_recv = []
        for f in raises:
            want_recv += [(f["name"], f["source"], f["tick"], f["values"])] * int(f["delivered"])
        got_recv = [(f["name"], f["source"], f["tick"], f["values"]) for k, f in got if k == "recv"]
        if got_recv != want_recv:
            i = next((i for i, (a, b) in enumerate(zip(got_recv, want_recv)) if a != b),
                     min(len(got_recv), len(want_recv)))
            c.check(False, "%s: instances received differ from the ground truth at #%d (of %d received, "
                    "%d raised for it): got %r, want %r" % (what, i, len(got_recv), len(want_recv),
                                                            got_recv[i:i + 1], want_recv[i:i + 1]))
        want_drop = collections.Counter()
        for f in drops:
            want_drop[(f["name"], f["source"], f["count"])] += int(f["handlers"])
        got_drop = collections.Counter((f["name"], f["source"], f["count"]) for k, f in got if k == "dropped")
        c.equal(got_drop, want_drop, "%s: drops received" % what)

        # The scripted scenario, and what the self-test did.
        by = collections.defaultdict(list)
        for f in raises:
            by[f["name"]].append(f)
        first = raises[0] if raises else {}
        c.check(first.get("name") == "double.weird" and first.get("delivered") == "0"
                and first.get("values", "").startswith("1,"),
                "%s: @tinit weird raised with nobody registered: %r" % (what, first))
        init = by["ompi.mpi.initialization"]
        fini = by["ompi.mpi.finalization"]
        if c.equal(len(init), 1, "%s: initialization events" % what) and \
                c.equal(len(fini), 1, "%s: finalization events" % what):
            model, level, rank, size, iid = init[0]["values"].split(",")
            c.equal((model, size), ("1", str(ranks)), "%s: initialization model/size" % what)
            seen_ranks.add(int(rank))
            c.equal(fini[0]["values"], ",".join([model, rank, iid]), "%s: finalization values" % what)
            c.equal(raises[-1]["name"], "ompi.mpi.finalization", "%s: last raise" % what)
            created = [f["values"] for f in by["ompi.mpi.communicator_created"]]
            c.check("4,4660" in created, "%s: scripted comm_created 4:0x1234: %r" % (what, created))
            c.check(sum(1 for v in created if v.startswith(size + ",")) >= 1,
                    "%s: no communicator_created of size %s (MPI_Comm_dup): %r" % (what, size, created))
        named = [(f["values"], f["delivered"]) for f in by["ompi.mpi.communicator_name_set"]]
        c.equal([n[1] for n in named], ["1", "1", "0"], "%s: name_set deliveries (world, dup, self)" % what)
        if named:
            c.equal(named[0][0], str(0x44000000), "%s: name_set handle of MPI_COMM_WORLD" % what)
        c.equal([(f["name"], f["count"], f["handlers"], f["reason"]) for f in drops if f["reason"] == "script"],
                [("ompi.mpi.communicator_created", "3", "1", "script"),
                 ("ompi.mpi.communicator_freed", "3", "1", "script")], "%s: scripted drops" % what)
        rel = by["ompi.mca.memory.patcher.released"]
        c.equal([f["values"] for f in rel],
                ["%d,%d" % (i, 4096 * i) for i in range(1, 6)] + ["2,100", "3,12288"],
                "%s: memory-release events" % what)
        burst = [int(f["tick"]) for f in rel[:5]]
        c.check(burst != sorted(burst), "%s: the unordered burst is in order: %r" % (what, burst))
        c.equal(sum(1 for f in drops if f["reason"] == "nocb"), len(rel),
                "%s: one dropped-only notification per memory-release event" % what)
        eh = by["ompi.mpi.errhandler_invoked"]
        c.equal([f["values"] for f in eh], ["5,9701,1409286144,1140850688"] * 2, "%s: errhandler_invoked" % what)
        weird = by["double.weird"]
        c.check(all(re.fullmatch(r"-?\d+,-5,2147418112,1099511627776,x[0-9a-f]{16}", f["values"]) for f in weird),
                "%s: double.weird values %r" % (what, [f["values"] for f in weird]))

        # Clocks: source 1 is monotonic ns + 5e12; source 0 is ordered
        # microseconds modulo 2^40, wrapping only where the script says.
        for f in raises:
            if f["source"] == "1":
                c.equal(int(f["tick"]) - int(f["mono_ns"]), ORIGIN1, "%s: source-1 origin" % what)
        ticks0 = [int(f["tick"]) for f in raises if f["source"] == "0"]
        c.check(all(0 <= t < PERIOD0 for t in ticks0), "%s: source-0 tick out of range" % what)
        backs = [(a, b) for a, b in zip(ticks0, ticks0[1:]) if b < a]
        if wrap:
            c.check(len(backs) == 1 and backs[0][0] > PERIOD0 - 10**6 and backs[0][1] < 10**6,
                    "%s: want exactly one wrap of source 0, got %r" % (what, backs))
        else:
            c.equal(backs, [], "%s: source 0 went back" % what)
    if ranks > 1:
        c.equal(seen_ranks, set(range(ranks)), "%s: ranks in initialization events" % label)


def main():
    c = h.Checker("mpit_double")
    tmp = tempfile.mkdtemp(prefix="tracer-test-mpit-double-")
    r = run(c, "direct", tmp, extra={"MPIT_DOUBLE_SCRIPT": SCRIPT_WRAP})
    if r:
        compare(c, "direct", r[0], 1, wrap=True)
    r = run(c, "bogus", tmp, extra={"MPIT_DOUBLE_SCRIPT": SCRIPT, "MPIT_DOUBLE_WEIRD_TYPE": "bogus"})
    if r:
        compare(c, "bogus", r[0], 1, wrap=False)
    mpiexec = os.environ.get("TEST_MPIEXEC")
    if mpiexec:
        # LD_PRELOAD inherited by mpiexec itself and both ranks.
        r = run(c, "mpiexec", tmp, mpiexec=mpiexec, want_ranks=2, extra={"MPIT_DOUBLE_SCRIPT": SCRIPT})
        if r:
            compare(c, "mpiexec", r[0], 2, wrap=False)
    else:
        c.note("mpiexec.mpich not found: the 2-rank run is skipped")
    r = run(c, "plain", tmp, with_double=False)
    if r:
        c.check("no events offered (no double)" in r[1], "plain: %s" % r[1])
    r = run(c, "empty", tmp, extra={"MPIT_DOUBLE_EMPTY": "1", "MPIT_DOUBLE_SCRIPT": SCRIPT})
    if r:
        c.check("no events offered (MPIT_DOUBLE_EMPTY)" in r[1], "empty: %s" % r[1])
        logs = glob.glob(os.path.join(r[0], "double.*.log"))
        c.check(all(os.path.getsize(p) == 0 for p in logs), "empty: the double raised something")
    c.finish()


if __name__ == "__main__":
    main()
