#!/usr/bin/python3
"""The real MPI_T event producer: Open MPI 6 (the first Open MPI with MPI_T
events), traced by the same libtracer.so that traces MPICH.

Runs only when OMPI_EVENTS_PREFIX names an Open MPI installation with MPI_T
events (shared/tools/build-ompi-events builds one); otherwise it is skipped
with a message saying so. The driver builds programs/ompi_events.c with that
Open MPI's mpicc (the offload compiler underneath) and runs it under its
mpirun -n 2, untraced and with tracer preloaded into both ranks.

Ground truth is the program's own (see its header): per rank r, output
line, exit status 0, and in the job's one archive:
  - the group "rank r" has TRACER::MPIT::STATUS naming Open MPI with
    "MPI_T events: 1 sources";
  - its location "MPI_T source ompi" holds exactly: 1
    ompi.mpi.initialization, 2 ompi.mpi.communicator_created, 1
    ompi.mpi.communicator_name_set, 2 ompi.mpi.communicator_freed, 1
    ompi.mpi.finalization, in the program's order (finalization is raised
    inside MPI_Finalize: the job's archive is written at exit by the last
    rank, TRACER_JOB_WRITE=exit, src/job/job_exit.h);
  - payloads: the created events carry the handles of dup and split as the
    program printed them (element [1]), name_set is bound to dup
    (mpit_object) and names dup (element [0]), the freed events name split
    then dup; initialization's elements [2] and [3] are r and the world
    size (the layout of Open MPI b42cc61); finalization's [1] is r and its
    [2] the instance id that initialization's [4] gave;
  - finalization's time lies inside the rank's MPI_Finalize (Enter..Leave
    on host thread 0), and that Leave is complete (not incomplete=1): the
    recording went on past MPI_Finalize;
  - the OpenMP runtime's "device finalize" at exit is there once for every
    device location of the rank;
  - every event's time is mapped from its source tick: equal (within 1 ns
    of rounding) to the fit in TRACER::MPIT::CLOCK::OMPI applied to
    mpit_source_tick, and not after its callback time by more than the
    fit's max_residual_ns;
  - the offload work: one kernel per rank.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import otf2_trace  # noqa: E402

NPROC = 2
WANT = {"ompi.mpi.initialization": 1, "ompi.mpi.communicator_created": 2,
        "ompi.mpi.communicator_name_set": 1, "ompi.mpi.communicator_freed": 2, "ompi.mpi.finalization": 1}
LINE = re.compile(r"rank (\d+) of (\d+): split (\d+), sum (\d+), x\[n-1\] (\d+), dup 0x([0-9a-f]+), "
                  r"split 0x([0-9a-f]+)$")
CLOCK = re.compile(r"ns = (-?[0-9.]+) \+ ([0-9.]+) \* tick; pairs=\d+; wraps=\d+; max_residual_ns=([0-9.]+)")


def ompi_env(prefix):
    return {"PATH": os.path.join(prefix, "bin") + ":" + os.environ.get("PATH", "/usr/bin:/bin"),
            "LD_LIBRARY_PATH": os.path.join(prefix, "lib"),
            "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "HOME": os.environ.get("HOME", "/root")}  # Open MPI's MPI_T needs it


def build(c, prefix, tmp):
    exe = os.path.join(tmp, "ompi_events")
    env = dict(os.environ, OMPI_CC=h.env_path("TEST_OFFLOAD_CC"), **ompi_env(prefix))
    cmd = [os.path.join(prefix, "bin", "mpicc"), "-O1", "-g", "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu",
           "-Wl,-rpath," + os.environ.get("TEST_OFFLOAD_LIBDIR", ""), h.env_path("TEST_SRC"), "-o", exe]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if not c.check(p.returncode == 0, "building the program: %s" % p.stderr.decode(errors="replace")[-2000:]):
        return None
    return exe


def run(prefix, exe, tmp, traced, out=None):
    env = ompi_env(prefix)
    inner = []
    if traced:
        inner = ["env", "LD_PRELOAD=" + ":".join(h.preload_list()), "TRACER_OUTPUT=" + out]
    cmd = [os.path.join(prefix, "bin", "mpirun"), "--oversubscribe", "-n", str(NPROC)] + inner + [exe]
    r = h.run(cmd, tmp, False, extra_env=env, timeout=240)
    r.stdout = r.stdout.decode(errors="replace")
    r.stderr = r.stderr.decode(errors="replace")
    return r


def truth(c, what, stdout):
    ranks = {}
    for line in stdout.splitlines():
        m = LINE.match(line)
        if c.check(m, "%s: unexpected output line %r" % (what, line)):
            r = int(m.group(1))
            ranks[r] = {"size": int(m.group(2)), "dup": int(m.group(6), 16), "split": int(m.group(7), 16)}
    c.equal(sorted(ranks), list(range(NPROC)), "%s: ranks that printed" % what)
    for r, v in ranks.items():
        c.equal(v["size"], NPROC, "%s: rank %d's world size" % (what, r))
    return ranks


def check_rank(c, t, r, prog, props):
    what = "rank %d" % r
    status = props.get("TRACER::MPIT::STATUS", "")
    c.check(status.startswith("Open MPI v") and "MPI_T events: 1 sources" in status,
            "%s: TRACER::MPIT::STATUS %r" % (what, status))
    m = CLOCK.search(props.get("TRACER::MPIT::CLOCK::OMPI", ""))
    if not c.check(m, "%s: TRACER::MPIT::CLOCK::OMPI %r" % (what, props.get("TRACER::MPIT::CLOCK::OMPI"))):
        return
    offset, rate, residual = float(m.group(1)), float(m.group(2)), float(m.group(3))
    locs = [l for l in t.locations if l.name == "MPI_T source ompi" and l.group.name == what]
    if not c.equal(len(locs), 1, "%s: MPI_T source ompi locations" % what):
        return
    enters = [e for _, e in t.enters(location=locs[0])]
    got = {}
    for e in enters:
        got[e.region.name] = got.get(e.region.name, 0) + 1
    c.equal(got, WANT, "%s: MPI_T events by type" % what)
    c.equal([e.region.name for e in enters],
            ["ompi.mpi.initialization", "ompi.mpi.communicator_created", "ompi.mpi.communicator_name_set",
             "ompi.mpi.communicator_created", "ompi.mpi.communicator_freed", "ompi.mpi.communicator_freed",
             "ompi.mpi.finalization"],
            "%s: MPI_T events in order" % what)

    def elements(name, i):
        return [t.attr(e, "%s[%d]" % (name, i)) for e in enters if e.region.name == name]

    c.equal(elements("ompi.mpi.communicator_created", 1), [prog["dup"], prog["split"]],
            "%s: communicator_created handles (dup, split)" % what)
    c.equal(elements("ompi.mpi.communicator_name_set", 0), [prog["dup"]], "%s: communicator_name_set handle" % what)
    c.equal([t.attr(e, "mpit_object") for e in enters if e.region.name == "ompi.mpi.communicator_name_set"],
            [prog["dup"]], "%s: communicator_name_set bound to dup" % what)
    c.equal(elements("ompi.mpi.communicator_freed", 0), [prog["split"], prog["dup"]],
            "%s: communicator_freed handles (split, dup)" % what)
    c.equal(elements("ompi.mpi.initialization", 2), [r], "%s: initialization[2] (rank)" % what)
    c.equal(elements("ompi.mpi.initialization", 3), [NPROC], "%s: initialization[3] (size)" % what)
    c.equal(elements("ompi.mpi.finalization", 1), [r], "%s: finalization[1] (rank)" % what)
    c.equal(elements("ompi.mpi.finalization", 2), elements("ompi.mpi.initialization", 4),
            "%s: finalization[2] (the instance id of initialization[4])" % what)
    host0 = [l for l in t.locations if l.name == "host thread 0" and l.group.name == what]
    fin = [(e, l) for _, e, l in t.intervals("MPI_Finalize", host0[0])] if host0 else []
    if c.equal(len(fin), 1, "%s: MPI_Finalize on host thread 0" % what):
        e, l = fin[0]
        c.equal(t.attr(l, "incomplete"), None, "%s: MPI_Finalize's Leave incomplete attribute" % what)
        c.check(all(e.time <= x.time <= l.time for x in enters if x.region.name == "ompi.mpi.finalization"),
                "%s: ompi.mpi.finalization outside MPI_Finalize [%d, %d]" % (what, e.time, l.time))
    devs = [l for l in t.locations if l.group.name.startswith(what + " device ")]
    finals = [l.name for l in devs for _, x in t.enters(location=l) if x.region.name == "device finalize"]
    c.equal(sorted(finals), sorted(l.name for l in devs), "%s: device finalize on each device location" % what)
    for e in enters:
        tick, cb = t.attr(e, "mpit_source_tick"), t.attr(e, "mpit_callback_time")
        base = t.attr(e, "mpit_time_base")
        if not c.check(tick is not None and cb is not None and base == "source clock",
                       "%s %s: tick %r, callback time %r, time base %r" % (what, e.region.name, tick, cb, base)):
            continue
        mapped = offset + rate * tick
        c.check(abs(e.time - mapped) <= 1.0, "%s %s: time %d is not the fit of tick %d (%.1f)"
                % (what, e.region.name, e.time, tick, mapped))
        c.check(e.time <= cb + residual + 1.0, "%s %s: time %d after its callback %d (max residual %.1f ns)"
                % (what, e.region.name, e.time, cb, residual))
    kernels = [e for loc, e in t.enters() if loc.group.name.startswith(what + " ")
               and e.region.name.startswith("__omp_offloading_")]
    c.equal(len(kernels), 1, "%s: kernels" % what)


def main():
    prefix = os.environ.get("OMPI_EVENTS_PREFIX")
    if not prefix:
        print("SKIP: OMPI_EVENTS_PREFIX is not set; it must name an Open MPI with MPI_T events (6.x; "
              "shared/tools/build-ompi-events builds one) for this test to run")
        sys.exit(h.SKIP)
    c = h.Checker("ompi_events")
    tmp = tempfile.mkdtemp(prefix="tracer-test-ompi-events-")
    try:
        exe = build(c, prefix, tmp)
        if exe is None:
            c.finish()
        base = run(prefix, exe, tmp, False)
        c.equal(base.returncode, 0, "untraced: exit status (stderr %r)" % base.stderr[-600:])
        truth(c, "untraced", base.stdout)
        out = os.path.join(tmp, "trace")
        r = run(prefix, exe, tmp, True, out)
        c.equal(r.returncode, 0, "traced: exit status (stderr %r)" % r.stderr[-600:])
        c.equal([l for l in r.stderr.splitlines() if l.startswith("tracer:")], [], "traced: tracer: lines")
        for marker in h.SANITIZER_MARKERS:
            c.check(marker not in r.stderr, "traced: sanitizer report %r" % r.stderr[-800:])
        prog = truth(c, "traced", r.stdout)
        anchor = os.path.join(out, "traces.otf2")
        t = h.open_checked_trace(c, "traced", anchor)
        if t is not None:
            groups = otf2_trace.group_properties(t)
            c.equal(sorted(groups), ["rank %d" % k for k in range(NPROC)], "groups with properties")
            for k in sorted(prog):
                check_rank(c, t, k, prog[k], groups.get("rank %d" % k, {}))
                counts = {}
                for loc in t.locations:
                    if loc.name == "MPI_T source ompi" and loc.group.name == "rank %d" % k:
                        for _, e in t.enters(location=loc):
                            counts[e.region.name] = counts.get(e.region.name, 0) + 1
                print("rank %d: %s" % (k, ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
