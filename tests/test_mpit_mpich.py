#!/usr/bin/python3
"""programs/mpit_offload.c under real MPICH 4.0.2, traced: `mpiexec -n 2` and
a singleton (no mpiexec).

MPICH 4.0.2 has the MPI_T events API but registers no sources and no event
types and raises nothing, so tracer's MPI_T session must come up empty and
stay out of the way while the offload part is traced as usual. Ground truth
per rank r (LLVM 19 host offload, device 0; NA = 1000 + 256 r doubles,
NX = 128 (r + 1), REPS = r + 2):
  target #1          alloc a, alloc b (NA*8 each), to a (NA*8), kernel,
                     from b (NA*8), delete a, b
  REPS x target #2   alloc x (NX*8), to x (NX*8), kernel, from x (NX*8), delete x
  MPI_Allreduce, MPI_Finalize; exit status 4.
Checks, for each run (tracer writes ONE archive per MPI job, a singleton
being a job of one rank: docs/trace-model.md, "Archive", "An MPI job's
archive"):
  - exit status and stdout as without tracer (stdout lines sorted: the ranks
    print concurrently); no sanitizer report; nothing on stderr;
  - exactly one archive below the run's directory, TRACER_OUTPUT/traces.otf2
    (+ traces.def, traces/<id>.evt|def only; no D.rank<N>, D.1, journals),
    nothing in the cwd; readable by otf2-print and the Python reader,
    timestamps and nesting sound;
  - PROCESS location groups exactly "rank 0".."rank <size-1>";
    TRACER::JOB::RANKS = "<size>/<size>", no TRACER::JOB::MISSING_RANKS;
    per-rank properties are STRING LocationGroupProperty definitions of the
    rank's group "rank <r>" (the anchor file has no TRACER::JOB::RANK<r>::*
    and no TRACER::MPIT::* property): TRACER::PROCESS = "pid <pid> on
    <host>" with the pid rank r wrote to TEST_PID_DIR, for every rank and no
    other group;
  - per rank r (otf2_trace.RankView: its "rank r" and "rank r device d"
    groups): rank r's offload ground truth: construct/data-op/kernel counts,
    bytes per direction (Enter attributes and RmaPut/RmaGet), kernel names
    in order, device memory metric; one host thread location;
  - per rank: MPI_Init and MPI_Finalize once each on host thread 0
    (regions role FUNCTION, paradigm MPI), MPI_Init before the first target
    construct and MPI_Finalize after the last; no MPI_Init_thread and no
    other MPI-paradigm region; recording goes on to the exit (the job's
    archive is written by the last rank out), so no Leave has incomplete=1
    and ProgramEnd's exit status is 4; ProgramBegin/End on host thread 0
    around both;
  - per rank: location group property TRACER::MPIT::STATUS of "rank <r>" =
    "<first line of MPI_Get_library_version, as the program printed it>:
    MPI_T events: 0 sources, 0 event types, 0 registrations made, 0 live"
    (control characters as spaces); no other TRACER::MPIT:: property (on any
    group or in the anchor); no "MPI_T source ..." location.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
from mpit_offload_truth import (check_plain, reps, tree, want_counts,  # noqa: E402
                                want_data_ops, want_transfers)
import cfgtest as ct  # noqa: E402
from otf2_trace import RankView, group_properties  # noqa: E402
import otf2  # noqa: E402
from otf2.enums import LocationGroupType, Paradigm, RegionRole  # noqa: E402

EXIT_STATUS = 4                  # programs/mpit_offload.c's
A = h.Trace.attr


class Run:
    def __init__(self, what, cwd, output, pid_dir, proc):
        self.what = what
        self.cwd = cwd
        self.output = output
        self.pid_dir = pid_dir
        self.rc = proc.returncode if proc else None
        self.out = proc.stdout.decode(errors="replace") if proc else ""
        self.err = proc.stderr.decode(errors="replace") if proc else "TIMEOUT"

    def describe(self):
        return "--- %s: rc=%r\nstdout:\n%s\nstderr:\n%s" % (self.what, self.rc, self.out, self.err[-4000:])


def run(tmp, label, cmd, traced):
    d = os.path.join(tmp, label)
    cwd = os.path.join(d, "cwd")
    pid_dir = os.path.join(d, "pids")
    os.makedirs(cwd)
    os.makedirs(pid_dir)
    output = os.path.join(d, "out")
    env = h.base_env()
    env["TEST_PID_DIR"] = pid_dir
    env.setdefault("HYDRA_LAUNCHER", "fork")   # mpiexec: local machine only
    if traced:
        env["LD_PRELOAD"] = ":".join(h.preload_list())
        env["TRACER_OUTPUT"] = output
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180)
    except subprocess.TimeoutExpired:
        p = None
    return Run("%s (%s)" % (label, " ".join(os.path.basename(x) for x in cmd)), cwd, output, pid_dir, p)


def archives_below(root):
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        if "traces.otf2" in filenames:
            found.append(os.path.join(dirpath, "traces.otf2"))
    return sorted(found)


def rank_pids(c, r, size):
    """{rank: pid} from the pid files the ranks wrote to TEST_PID_DIR."""
    pids = {}
    for rank in range(size):
        path = os.path.join(r.pid_dir, "rank%d.pid" % rank)
        if c.check(os.path.isfile(path), "%s: rank %d wrote no pid file" % (r.what, rank)):
            with open(path) as f:
                pids[rank] = int(f.read().strip())
    return pids


def check_offload(c, t, what, rank, src):
    """Rank `rank`'s offload ground truth in its view of the archive."""
    k = reps(rank)
    h.check_counts(c, t, want_counts(rank))
    c.equal(h.data_op_summary(t), want_data_ops(rank), "%s: data ops (kind, device) -> bytes" % what)
    c.equal(h.transfer_summary(t), want_transfers(rank), "%s: RmaPut/RmaGet (kind, device) -> bytes" % what)
    h.check_attributes(c, t)
    h.check_rma(c, t)
    h.check_memory(c, t, single_thread=True)
    lines = h.kernel_lines(src)
    h.check_kernels(c, t, {0: 1 + k}, [lines["first"]] + [lines["second"]] * k)
    for _, ev in t.enters():
        if ev.region.canonical_name in h.WRAPPERS:
            c.equal(A(ev, "device"), 0, "%s: device of %s" % (what, ev.region.canonical_name))


def check_rank(c, t, what, rank, src):
    """Rank `rank` of the job's archive `t` (its "rank <r>" and "rank <r>
    device <d>" groups: RankView)."""
    v = RankView(t, rank)
    # Recording goes on to the exit (TRACER_JOB_WRITE=exit, the default): no
    # Leave is incomplete, MPI_Finalize's included (docs/trace-model.md,
    # "Regions on the host threads").
    c.equal(["%s Leave(%s)" % (loc.name, ev.region.canonical_name) for loc, ev in v.incomplete_leaves()],
            [], "%s: Leaves with incomplete=1" % what)
    threads = v.cpu_threads()
    for loc in threads:
        c.check(re.fullmatch(r"host thread \d+", loc.name), "%s: CPU_THREAD location %r (an MPI_T source "
                "location although MPICH has no sources?)" % (what, loc.name))
    c.equal(len(threads), 1, "%s: host thread locations" % what)
    host0 = [l for l in threads if l.name == "host thread 0"]
    if not c.check(host0, "%s: no 'host thread 0'" % what):
        return
    host0 = host0[0]

    # MPI_Init / MPI_Finalize on host thread 0
    counts = v.count_enters()
    c.equal((counts.get("MPI_Init", 0), counts.get("MPI_Finalize", 0), counts.get("MPI_Init_thread", 0)),
            (1, 1, 0), "%s: Enters of (MPI_Init, MPI_Finalize, MPI_Init_thread)" % what)
    mpi_enters = sorted(ev.region.canonical_name for _, ev in v.enters() if ev.region.paradigm == Paradigm.MPI)
    c.equal(mpi_enters, ["MPI_Finalize", "MPI_Init"], "%s: Enters of MPI-paradigm regions" % what)
    on0 = [(e.region.canonical_name, e.time, l.time) for _, e, l in v.intervals(location=host0)
           if e.region.canonical_name in ("MPI_Init", "MPI_Finalize")]
    c.equal(sorted(n for n, _, _ in on0), ["MPI_Finalize", "MPI_Init"],
            "%s: MPI regions on host thread 0" % what)
    spans = {n: (b, e) for n, b, e in on0}
    targets = [(e.time, l.time) for _, e, l in v.intervals("target")]
    if len(spans) == 2:
        c.check(spans["MPI_Init"][1] <= spans["MPI_Finalize"][0], "%s: MPI_Init %r does not end before "
                "MPI_Finalize %r begins" % (what, spans["MPI_Init"], spans["MPI_Finalize"]))
        if targets:
            c.check(spans["MPI_Init"][1] <= min(b for b, _ in targets),
                    "%s: MPI_Init ends after the first target construct begins" % what)
            c.check(spans["MPI_Finalize"][0] >= max(e for _, e in targets),
                    "%s: MPI_Finalize begins before the last target construct ends" % what)
    pb = v.events_of(otf2.events.ProgramBegin)
    pe = v.events_of(otf2.events.ProgramEnd)
    if c.equal(([l.name for l, _ in pb], [l.name for l, _ in pe]), (["host thread 0"], ["host thread 0"]),
               "%s: locations of (ProgramBegin, ProgramEnd)" % what):
        # Recording ends at the exit, whose status is the program's
        # (docs/trace-model.md, "Events, per rank").
        c.equal(pe[0][1].exit_status, EXIT_STATUS, "%s: ProgramEnd exit status (the program's)" % what)
        if len(spans) == 2:
            c.check(pb[0][1].time <= spans["MPI_Init"][0] and pe[0][1].time >= spans["MPI_Finalize"][1],
                    "%s: MPI_Init/MPI_Finalize outside ProgramBegin..ProgramEnd" % what)

    check_offload(c, v, what, rank, src)


def check_traced(c, r, plain, size, library, src):
    c.equal(r.rc, plain.rc, "%s: exit status (vs without tracer)" % r.what)
    c.equal(sorted(r.out.splitlines()), sorted(plain.out.splitlines()),
            "%s: stdout lines (vs without tracer)" % r.what)
    for m in h.SANITIZER_MARKERS:
        c.check(m not in r.err, "%s: sanitizer report %r in stderr" % (r.what, m))
    c.equal(r.err, "", "%s: stderr" % r.what)
    c.equal(os.listdir(r.cwd), [], "%s: files in the cwd although TRACER_OUTPUT was set" % r.what)

    # One archive for the whole job (the singleton too), exactly at
    # TRACER_OUTPUT/traces.otf2: no D.rank<N>, D.1, journals or anything else.
    top = os.path.dirname(r.output)
    anchor = os.path.join(r.output, "traces.otf2")
    c.equal(archives_below(top), [anchor], "%s: archives below %s (one for the job)" % (r.what, top))
    files = tree(top)
    out = os.path.basename(r.output)
    c.equal([f for f in files if not re.match(r"(cwd|pids|%s)(/|$)" % re.escape(out), f)], [],
            "%s: left beside TRACER_OUTPUT (D.rank<N>, D.1, ...)" % r.what)
    inside = [f[len(out) + 1:] for f in files if f.startswith(out + "/") and f != out + "/"]
    c.equal([f for f in inside if f not in ("traces.otf2", "traces.def", "traces/")
             and not re.fullmatch(r"traces/\d+\.(evt|def)", f)], [],
            "%s: in TRACER_OUTPUT besides traces.otf2, traces.def, traces/<id>.evt|def" % r.what)
    pids = rank_pids(c, r, size)
    if not c.check(os.path.isfile(anchor) and os.path.getsize(anchor) > 0, "%s: no archive %s" % (r.what, anchor)):
        return
    what = "%s %s" % (r.what, os.path.relpath(anchor, top))
    t = h.open_checked_trace(c, what, anchor)
    if t is None:
        return

    # The job: "rank <r>" groups, one per rank, each the process that wrote
    # rank r's pid file; nothing else.
    groups = sorted(g.name for g in t.definitions.location_groups
                    if g.location_group_type == LocationGroupType.PROCESS)
    c.equal(groups, sorted("rank %d" % k for k in range(size)), "%s: PROCESS location groups" % what)
    c.check(not [l for l in t.locations if l.name.startswith("MPI_T source")],
            "%s: MPI_T source locations %r" % (what, [l.name for l in t.locations]))
    mpi_regions = [reg for reg in t.regions if reg.paradigm == Paradigm.MPI]
    c.equal(sorted(reg.name for reg in mpi_regions), ["MPI_Finalize", "MPI_Init"],
            "%s: regions of paradigm MPI" % what)
    for reg in mpi_regions:
        c.equal(reg.region_role, RegionRole.FUNCTION, "%s: role of %s" % (what, reg.name))
        c.equal(reg.canonical_name, reg.name, "%s: canonical name of %s" % (what, reg.name))
    props = ct.properties(c, anchor, what)
    c.equal(props.get("TRACER::JOB::RANKS"), "%d/%d" % (size, size), "%s: property TRACER::JOB::RANKS" % what)
    c.check("TRACER::JOB::MISSING_RANKS" not in props, "%s: TRACER::JOB::MISSING_RANKS = %r"
            % (what, props.get("TRACER::JOB::MISSING_RANKS")))
    # Per-rank properties are location group properties of "rank <r>",
    # none in the anchor file.
    c.equal(sorted(k for k in props if k.startswith("TRACER::MPIT::")
                   or (k.startswith("TRACER::JOB::RANK") and k != "TRACER::JOB::RANKS")), [],
            "%s: TRACER::MPIT::* / TRACER::JOB::RANK<r>::* anchor properties (per-rank properties "
            "belong to the rank's location group)" % what)
    gprops = group_properties(t)
    host = socket.gethostname()
    c.equal({g: ps["TRACER::PROCESS"] for g, ps in gprops.items() if "TRACER::PROCESS" in ps},
            {"rank %d" % k: "pid %d on %s" % (pid, host) for k, pid in pids.items()},
            "%s: location group property TRACER::PROCESS per group (the pid each rank wrote to "
            "TEST_PID_DIR)" % what)

    # MPI_T properties, per rank: MPICH has no sources and no event types
    mpit = {(g, k): v for g, ps in gprops.items() for k, v in ps.items() if k.startswith("TRACER::MPIT::")}
    c.equal(sorted(mpit), sorted(("rank %d" % k, "TRACER::MPIT::STATUS") for k in range(size)),
            "%s: (group, TRACER::MPIT:: location group property) (one STATUS per rank, nothing else)" % what)
    for k in range(size):
        name = "TRACER::MPIT::STATUS of \"rank %d\"" % k
        status = mpit.get(("rank %d" % k, "TRACER::MPIT::STATUS"), "")
        if library is not None:
            c.equal(status, "%s: MPI_T events: 0 sources, 0 event types, 0 registrations made, 0 live"
                    % re.sub(r"[\x00-\x1f]", " ", library), "%s: property %s" % (what, name))
        c.check("MPICH" in status and "0 sources, 0 event types, 0 registrations made, 0 live" in status,
                "%s: %s %r does not say MPICH, 0 sources, 0 event types, 0 registrations made, 0 live"
                % (what, name, status))

    for k in range(size):
        check_rank(c, t, "%s (rank %d)" % (what, k), k, src)


def main():
    c = h.Checker("mpit_mpich")
    binary = h.env_path("TEST_BIN")
    src = h.env_path("TEST_SRC")
    mpiexec = h.env_path("TEST_MPIEXEC")
    tmp = tempfile.mkdtemp(prefix="tracer-test-mpit-mpich-")
    runs = []
    try:
        for label, cmd, size in (("mpiexec", [mpiexec, "-n", "2", binary], 2),
                                 ("singleton", [binary], 1)):
            plain = run(tmp, label + "-plain", cmd, traced=False)
            traced = run(tmp, label + "-traced", cmd, traced=True)
            runs += [plain, traced]
            library = check_plain(c, plain, size)
            check_traced(c, traced, plain, size, library, src)
    finally:
        if c.failures:
            for r in runs:
                print(r.describe())
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
