#!/usr/bin/python3
"""A whole traced MPI run through tracer's Open MPI paths, on every test run:
programs/ompi_dialect.c, written against Open MPI's ABI (pointer handles,
the ompi_mpi_* objects), on the MPI_T provider TEST DOUBLE in its Open MPI
dialect (MPIT_DOUBLE_DIALECT=ompi; tests/mpit_double/mpit_double.c's header
says what it covers), which translates every MPI call tracer and the
program make to the MPICH underneath. Preloaded: sanitizer runtimes,
libtracer.so, libmpit_double.so. tracer picks the Open MPI family table
(src/mpit/mpi_abi.c) and from then on passes 8-byte handles and Open MPI's
constants: MPI_Init, the job's set-up and archive (src/job/: point to point
and collectives on MPI_COMM_WORLD, MPI_IN_PLACE, its own communicators),
communicator-bound registrations, the communicator wrappers, MPI_Finalize.

Runs: a singleton, and with TEST_MPIEXEC `mpiexec -n 2`; each untraced (the
double alone) and traced. Ground truth is the program's own line per rank
(its handles as it sees them) and the double's log (MPIT_DOUBLE_LOG, per
pid: what it raised, with which payload and tick):
  program     exit 0, one line per rank: world size, split's size and sum,
              the MPI_IN_PLACE sum over the world, both frees gave
              MPI_COMM_NULL; dup, split and MPI_COMM_WORLD are distinct
              pointers (above 2^32: no MPICH integer); the same with and
              without tracer (handles aside); no "tracer:" line, no
              sanitizer report
  the double  per rank, its log has initialization (rank, size), 2
              communicator_created (the program's dup and split, with their
              sizes), 1 communicator_name_set (dup), 2 communicator_freed
              (split, dup), each delivered to tracer
  archive     one job archive TRACER_OUTPUT/traces.otf2 (TRACER::JOB::RANKS
              "N/N"), readable by otf2-print and the Python reader, groups
              "rank 0".."rank N-1"; per rank TRACER::MPIT::STATUS names the
              double's Open MPI version text (the family tracer chose) with
              2 sources and 8 event types; location "MPI_T source ompi"
              holds exactly, in this order: initialization,
              communicator_created, communicator_name_set,
              communicator_created, communicator_freed x2, finalization
              (raised inside MPI_Finalize; the job's archive is written at
              exit), naming the rank; payloads: initialization[2..3] = rank, size;
              created[0] = the sizes, created[1] = dup, split;
              name_set[0] = dup and its mpit_object = dup (the registration
              tracer bound to the new communicator through an 8-byte
              handle); freed[0] = split, dup; every one's mpit_source_tick
              is the log's tick of that raise.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import cfgtest  # noqa: E402
import harness as h  # noqa: E402
import otf2_trace  # noqa: E402

LINE = re.compile(r"rank (\d+) of (\d+): split (\d+), sum (\d+), world sum (\d+), freed (\d), dup 0x([0-9a-f]+), "
                  r"split 0x([0-9a-f]+), world 0x([0-9a-f]+)$")
ORDER = ["ompi.mpi.initialization", "ompi.mpi.communicator_created", "ompi.mpi.communicator_name_set",
         "ompi.mpi.communicator_created", "ompi.mpi.communicator_freed", "ompi.mpi.communicator_freed"]
FINI = "ompi.mpi.finalization"


def run(tmp, label, ranks, traced):
    d = os.path.join(tmp, label)
    os.makedirs(d)
    preload = [p for p in re.split(r"[:\s]+", os.environ.get("TEST_SANITIZER_PRELOAD", "")) if p]
    if traced:
        preload.append(h.env_path("TEST_TRACER_LIB"))
    preload.append(h.env_path("TEST_MPIT_DOUBLE_LIB"))
    env = h.base_env()
    env.update({"LD_PRELOAD": ":".join(preload), "MPIT_DOUBLE_DIALECT": "ompi",
                "MPIT_DOUBLE_LOG": os.path.join(d, "double.%p.log"), "HYDRA_LAUNCHER": "fork"})
    out = os.path.join(d, "trace")
    if traced:
        env["TRACER_OUTPUT"] = out
    cmd = [h.env_path("TEST_BIN")]
    if ranks > 1:
        cmd = [h.env_path("TEST_MPIEXEC"), "-n", str(ranks)] + cmd
    try:
        p = subprocess.run(cmd, cwd=d, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=150)
        rc, so, se = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, so, se = None, e.stdout or b"", (e.stderr or b"") + b"\n(timed out)"
    return d, out, rc, so.decode(errors="replace"), se.decode(errors="replace")


def program_truth(c, what, ranks, stdout):
    prog = {}
    for line in stdout.splitlines():
        m = LINE.match(line)
        if not c.check(m, "%s: unexpected output line %r" % (what, line)):
            continue
        r = int(m.group(1))
        prog[r] = {"size": int(m.group(2)), "ssize": int(m.group(3)), "sum": int(m.group(4)),
                   "world_sum": int(m.group(5)), "freed": int(m.group(6)), "dup": int(m.group(7), 16),
                   "split": int(m.group(8), 16), "world": int(m.group(9), 16)}
    c.equal(sorted(prog), list(range(ranks)), "%s: ranks that printed" % what)
    for r, v in sorted(prog.items()):
        mates = [k for k in range(ranks) if k % 2 == r % 2]
        c.equal((v["size"], v["ssize"], v["sum"], v["world_sum"], v["freed"]),
                (ranks, len(mates), sum(mates), ranks * (ranks + 1) // 2, 1),
                "%s: rank %d's (size, split size, split sum, world sum, freed)" % (what, r))
        handles = [v["dup"], v["split"], v["world"]]
        c.check(all(x >= 1 << 32 for x in handles) and len(set(handles)) == 3,
                "%s: rank %d's handles dup, split, world are no distinct pointers: %s"
                % (what, r, [hex(x) for x in handles]))
    return prog


def masked(stdout):
    return re.sub(r"0x[0-9a-f]+", "0x?", stdout)


def double_logs(d):
    """{rank: [raise dicts]} from the double's per-pid logs, the rank read
    from the log's initialization (world_rank, element 2)."""
    out = {}
    for f in sorted(os.listdir(d)):
        if not f.startswith("double."):
            continue
        raises = []
        for line in open(os.path.join(d, f)):
            kind, _, rest = line.strip().partition(" ")
            if kind == "raise":
                x = dict(kv.split("=", 1) for kv in rest.split())
                x["values"] = [int(v) for v in x["values"].split(",")]
                raises.append(x)
        inits = [x for x in raises if x["name"] == "ompi.mpi.initialization"]
        if inits:
            out[inits[0]["values"][2]] = raises
    return out


def program_raises(raises, p):
    """The raises of the program's own calls, in order (tracer's own
    communicators, made while it writes the archive, are not the program's)."""
    mine = {p["dup"], p["split"]}
    out = []
    for x in raises:
        n = x["name"]
        if n == "ompi.mpi.initialization" or n == FINI or \
                (n == "ompi.mpi.communicator_created" and x["values"][1] in mine) or \
                (n in ("ompi.mpi.communicator_name_set", "ompi.mpi.communicator_freed") and x["values"][0] in mine):
            out.append(x)
    return out


def check_log(c, what, r, ranks, p, raises):
    got = program_raises(raises, p)
    names = [x["name"] for x in got]
    c.equal(names, ORDER + [FINI], "%s rank %d: the double's raises for the program's calls" % (what, r))
    if names != ORDER + [FINI]:
        return
    c.equal([x["values"] for x in got],
            [[1, got[0]["values"][1], r, ranks, got[0]["values"][4]], [ranks, p["dup"]], [p["dup"]], [p["ssize"], p["split"]],
             [p["split"]], [p["dup"]], [1, r, got[6]["values"][2]]],
            "%s rank %d: the double's payloads (handles as the program sees them)" % (what, r))
    c.check(all(int(x["delivered"]) >= 1 for x in got[:6]),
            "%s rank %d: raises not delivered to tracer: %s" % (what, r, [x for x in got[:6]
                                                                          if int(x["delivered"]) < 1]))


def check_archive(c, what, ranks, out, prog, logs):
    anchor = os.path.join(out, "traces.otf2")
    if not c.check(os.path.exists(anchor), "%s: no job archive %s" % (what, anchor)):
        return
    props = cfgtest.properties(c, anchor, what)
    c.equal(props.get("TRACER::JOB::RANKS"), "%d/%d" % (ranks, ranks), "%s: TRACER::JOB::RANKS" % what)
    t = h.open_checked_trace(c, what, anchor)
    if t is None:
        return
    groups = otf2_trace.group_properties(t)
    c.equal(sorted(groups), ["rank %d" % k for k in range(ranks)], "%s: groups with properties" % what)
    for r in sorted(prog):
        p, rw = prog[r], "%s rank %d" % (what, r)
        status = groups.get("rank %d" % r, {}).get("TRACER::MPIT::STATUS", "")
        c.check(status.startswith("Open MPI v6.1.0a1 (mpit_double") and
                "MPI_T events: 2 sources, 8 event types" in status, "%s: TRACER::MPIT::STATUS %r" % (rw, status))
        locs = [l for l in t.locations if l.name == "MPI_T source ompi" and l.group.name == "rank %d" % r]
        if not c.equal(len(locs), 1, "%s: MPI_T source ompi locations" % rw):
            continue
        enters = [e for _, e in t.enters(location=locs[0])]
        names = [e.region.name for e in enters]
        c.equal(names, ORDER + [FINI], "%s: MPI_T events in order" % rw)
        counts = {}
        for n in names:
            counts[n] = counts.get(n, 0) + 1
        print("%s: %s" % (rw, ", ".join("%s %d" % kv for kv in sorted(counts.items()))))

        def elements(name, i):
            return [t.attr(e, "%s[%d]" % (name, i)) for e in enters if e.region.name == name]

        c.equal(elements("ompi.mpi.initialization", 2) + elements("ompi.mpi.initialization", 3), [r, ranks],
                "%s: initialization[2..3] (rank, size)" % rw)
        c.equal(elements("ompi.mpi.communicator_created", 0), [ranks, p["ssize"]],
                "%s: communicator_created sizes (dup, split)" % rw)
        c.equal(elements("ompi.mpi.communicator_created", 1), [p["dup"], p["split"]],
                "%s: communicator_created handles (dup, split)" % rw)
        c.equal(elements("ompi.mpi.communicator_name_set", 0), [p["dup"]], "%s: communicator_name_set handle" % rw)
        c.equal([t.attr(e, "mpit_object") for e in enters if e.region.name == "ompi.mpi.communicator_name_set"],
                [p["dup"]], "%s: communicator_name_set bound to dup" % rw)
        c.equal(elements("ompi.mpi.communicator_freed", 0), [p["split"], p["dup"]],
                "%s: communicator_freed handles (split, dup)" % rw)
        c.equal(elements(FINI, 1), [r], "%s: finalization[1] (rank)" % rw)
        want = [int(x["tick"]) for x in program_raises(logs.get(r, []), p)][:len(enters)]
        c.equal([t.attr(e, "mpit_source_tick") for e in enters], want, "%s: source ticks = the double's" % rw)


def one_case(c, tmp, label, ranks):
    d0, _, rc0, so0, se0 = run(tmp, label + "-plain", ranks, False)
    c.equal(rc0, 0, "%s untraced: exit status (stderr %r)" % (label, se0[-600:]))
    program_truth(c, label + " untraced", ranks, so0)
    d, out, rc, so, se = run(tmp, label, ranks, True)
    c.equal(rc, 0, "%s traced: exit status (stderr %r)" % (label, se[-600:]))
    c.equal([l for l in se.splitlines() if l.startswith("tracer:")], [], "%s traced: tracer: lines" % label)
    for marker in h.SANITIZER_MARKERS:
        c.check(marker not in se + se0, "%s: sanitizer report %r" % (label, (se0 + se)[-800:]))
    prog = program_truth(c, label + " traced", ranks, so)
    c.equal(sorted(masked(so).splitlines()), sorted(masked(so0).splitlines()),
            "%s: stdout traced vs untraced (handles aside)" % label)
    logs = double_logs(d)
    c.equal(sorted(logs), list(range(ranks)), "%s: ranks in the double's logs" % label)
    for r in sorted(prog):
        check_log(c, label, r, ranks, prog[r], logs.get(r, []))
    check_archive(c, label, ranks, out, prog, logs)


def main():
    c = h.Checker("mpit_ompi_dialect")
    tmp = tempfile.mkdtemp(prefix="tracer-test-ompi-dialect-")
    try:
        one_case(c, tmp, "singleton", 1)
        if os.environ.get("TEST_MPIEXEC"):
            one_case(c, tmp, "mpiexec", 2)
        else:
            c.note("mpiexec.mpich not found (TEST_MPIEXEC unset): the 2-rank case is skipped")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
