#!/usr/bin/python3
"""programs/mpit_app_tool.c: an application that is itself an MPI_T event
tool, traced. tracer's MPI_T session and the application's must not disturb
each other, and the application's MPI_T_finalize (before MPI_Finalize) must
not end tracer's.

TEST DOUBLE: MPICH 4.0.2 raises no MPI_T events, so libmpit_double.so
(tests/mpit_double, see mpit_double.h) provides them; its MPIT_DOUBLE_LOG is
the ground truth: one line per raised instance with the number of callbacks
it was delivered to.

The application initializes MPI_T before MPI_Init, registers its own callback
for ompi.mpi.communicator_created, does MPI_Init and 3 x MPI_Comm_dup + free,
frees its handle, calls MPI_T_finalize, then dups and frees one more
communicator and calls MPI_Finalize; it prints every MPI_T return code and
how many callbacks it got.

Runs (singletons, no mpiexec):
  alone   LD_PRELOAD=<sanitizer runtimes>:libmpit_double.so
  traced  LD_PRELOAD=<sanitizer runtimes>:libtracer.so:libmpit_double.so
Checks:
  - both: exit status 0, the expected stdout (every MPI_T call returned
    MPI_SUCCESS, 8 event types found, callbacks=3), nothing on stderr;
    traced stdout == alone stdout;
  - alone's log: 4 communicator_created raises delivered to 1, 1, 1, 0
    callbacks (only the application's registration);
  - traced log: the same 4 raises delivered to 2, 2, 2, 1 (application +
    tracer, then tracer alone after the application's MPI_T_finalize); the
    application's count (3) + the trace's count of
    ompi.mpi.communicator_created instances (4) = the callbacks the double
    invoked for them;
  - the archive is the job archive of a singleton (docs/trace-model.md, "An
    MPI job's archive"): TRACER_OUTPUT/traces.otf2, one PROCESS group
    "rank 0", TRACER::JOB::RANKS = "1/1"; per-rank properties are STRING
    LocationGroupProperty definitions of group "rank 0", none in the anchor
    file (no TRACER::JOB::RANK<N>::*, no TRACER::MPIT::*): TRACER::PROCESS =
    "pid <the double's log's pid> on <host>";
  - the trace holds exactly the instances the double delivered to tracer,
    those raised inside MPI_Finalize included (the job's archive is written
    at exit, TRACER_JOB_WRITE=exit): per event type, the same source ticks
    (mpit_source_tick) and element values ("<type>[i]" attributes) in order,
    on an "MPI_T source ..." location of rank 0 (ompi.mpi.* types are raised
    on source "ompi"). Without MPIT_DOUBLE_SCRIPT the double raises exactly
    ompi.mpi.finalization in its MPI_Finalize, first thing. Criterion: the
    log's raises before its first ompi.mpi.finalization raise are "before
    MPI_Finalize"; the rest must be that one raise, delivered to tracer
    (delivered=1) and in the trace once. Cross-checked with the clock: the
    former raised no later than MPI_Finalize's Enter, the latter inside
    MPI_Finalize's Enter..Leave (20 us slack);
  - MPI_Init and MPI_Finalize once each on host thread 0; no Leave has
    incomplete=1; ProgramEnd's exit status is the program's (0);
  - the location group property TRACER::MPIT::STATUS of "rank 0" names
    MPICH and the double's 2 sources and 8 event types, with K >= 9
    registrations made (the 7 unbound types' and the bound type's on
    MPI_COMM_WORLD and MPI_COMM_SELF) and 0 live (tracer frees them after
    the real MPI_Finalize, before its recording ends); no TRACER::MPIT::
    property other than rank 0's (on another group or in the anchor).
"""
import collections
import glob
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import cfgtest as ct  # noqa: E402
from otf2_trace import RankView, group_properties  # noqa: E402
import otf2  # noqa: E402
from otf2.enums import LocationGroupType, LocationType  # noqa: E402

CREATED = "ompi.mpi.communicator_created"
FINALIZATION = "ompi.mpi.finalization"
SLACK_NS = 20000   # tracer's stamps (TSC converted to CLOCK_MONOTONIC) vs its direct reads
WANT_STDOUT = (
    "mpit_app_tool: MPI_T_init_thread rc=0\n"
    "mpit_app_tool: MPI_T_event_get_num rc=0 types=8 ompi.mpi.communicator_created found=1\n"
    "mpit_app_tool: MPI_T_event_handle_alloc rc=0\n"
    "mpit_app_tool: MPI_T_event_register_callback rc=0\n"
    "mpit_app_tool: after 3 dups: callbacks=3\n"
    "mpit_app_tool: MPI_T_event_handle_free rc=0 free_cb=1\n"
    "mpit_app_tool: MPI_T_finalize rc=0\n"
    "mpit_app_tool: callbacks=3 wrong_size=0\n")
APP_COUNT_RE = re.compile(r"^mpit_app_tool: callbacks=(\d+) ", re.M)


def parse(line):
    kind, _, rest = line.partition(" ")
    return kind, dict(kv.split("=", 1) for kv in rest.split())


def san_preload():
    return [p for p in re.split(r"[:\s]+", os.environ.get("TEST_SANITIZER_PRELOAD", "")) if p]


class Run:
    def __init__(self, label, d, output, proc):
        self.what = label
        self.dir = d
        self.output = output
        self.rc = proc.returncode if proc else None
        self.out = proc.stdout.decode(errors="replace") if proc else ""
        self.err = proc.stderr.decode(errors="replace") if proc else "TIMEOUT"
        self.log = []

    def describe(self):
        return "--- %s: rc=%r\nstdout:\n%s\nstderr:\n%s" % (self.what, self.rc, self.out, self.err[-4000:])


def run(tmp, label, with_tracer):
    d = os.path.join(tmp, label)
    cwd = os.path.join(d, "cwd")
    os.makedirs(cwd)
    output = os.path.join(d, "out")
    env = h.base_env()
    for k in [k for k in env if k.startswith("MPIT_DOUBLE_")]:
        del env[k]
    env["MPIT_DOUBLE_LOG"] = os.path.join(d, "double.%p.log")
    libs = san_preload() + ([h.env_path("TEST_TRACER_LIB")] if with_tracer else []) + \
        [h.env_path("TEST_MPIT_DOUBLE_LIB")]
    env["LD_PRELOAD"] = ":".join(libs)
    env["TRACER_OUTPUT"] = output
    try:
        p = subprocess.run([h.env_path("TEST_BIN")], cwd=cwd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
    except subprocess.TimeoutExpired:
        p = None
    r = Run(label, d, output, p)
    logs = glob.glob(os.path.join(d, "double.*.log"))
    if len(logs) == 1:
        with open(logs[0]) as f:
            r.log = [parse(l) for l in f.read().splitlines() if l]
    r.nlogs = len(logs)
    return r


def check_run(c, r):
    c.equal(r.rc, 0, "%s: exit status" % r.what)
    c.equal(r.out, WANT_STDOUT, "%s: stdout" % r.what)
    for m in h.SANITIZER_MARKERS:
        c.check(m not in r.err, "%s: sanitizer report %r in stderr" % (r.what, m))
    c.equal(r.err, "", "%s: stderr" % r.what)
    c.equal(r.nlogs, 1, "%s: MPIT_DOUBLE_LOG files" % r.what)
    c.equal(os.listdir(os.path.join(r.dir, "cwd")), [], "%s: files in the cwd" % r.what)


def raises(r, name=None):
    return [f for k, f in r.log if k == "raise" and (name is None or f["name"] == name)]


def trace_instances(c, t):
    """{type name: [(tick, values)]} of the MPI_T event instances in the
    trace, in time order per source location."""
    out = collections.defaultdict(list)
    sources = [loc for loc in t.locations if loc.name.startswith("MPI_T source ")]
    c.check(sources, "no 'MPI_T source ...' location: %r" % [l.name for l in t.locations])
    for loc in sources:
        c.equal(loc.type, LocationType.CPU_THREAD, "type of location %r" % loc.name)
        for _, ev in t.enters(location=loc):
            name = ev.region.canonical_name
            values = []
            i = 0
            while True:
                v = h.Trace.attr(ev, "%s[%d]" % (name, i))
                if v is None:
                    break
                values.append(str(v))
                i += 1
            out[(loc.name, name)].append((h.Trace.attr(ev, "mpit_source_tick"), ",".join(values)))
    return out


def check(c, tmp, runs):
    alone = run(tmp, "alone", with_tracer=False)
    runs.append(alone)
    traced = run(tmp, "traced", with_tracer=True)
    runs.append(traced)
    check_run(c, alone)
    check_run(c, traced)
    c.equal(traced.out, alone.out, "stdout with tracer (vs without)")
    c.check(not os.path.exists(alone.output), "alone: a trace was written without tracer")

    # Ground truth: who got each communicator_created instance.
    c.equal([f["delivered"] for f in raises(alone, CREATED)], ["1", "1", "1", "0"],
            "alone: callbacks per %s raise (the application's only)" % CREATED)
    created = raises(traced, CREATED)
    c.equal([f["delivered"] for f in created], ["2", "2", "2", "1"],
            "traced: callbacks per %s raise (application + tracer, then tracer alone)" % CREATED)
    m = APP_COUNT_RE.search(traced.out)
    app_count = int(m.group(1)) if m else None

    anchor = os.path.join(traced.output, "traces.otf2")
    if not c.check(os.path.isfile(anchor), "traced: no archive at %s" % anchor):
        return
    t = h.open_checked_trace(c, "traced", anchor)
    if t is None:
        return
    # An MPI process's archive is its job's archive (a singleton: a job of
    # one rank): group "rank 0", whose pid is the double's log's.
    groups = sorted(g.name for g in t.definitions.location_groups
                    if g.location_group_type == LocationGroupType.PROCESS)
    c.equal(groups, ["rank 0"], "traced: PROCESS location groups")
    props = ct.properties(c, anchor, "traced")
    c.equal(props.get("TRACER::JOB::RANKS"), "1/1", "traced: property TRACER::JOB::RANKS")
    # Per-rank properties are location group properties of "rank 0", none
    # in the anchor file.
    c.equal(sorted(k for k in props if k.startswith("TRACER::MPIT::")
                   or (k.startswith("TRACER::JOB::RANK") and k != "TRACER::JOB::RANKS")), [],
            "traced: TRACER::MPIT::* / TRACER::JOB::RANK<N>::* anchor properties (per-rank properties "
            "belong to the rank's location group)")
    gprops = group_properties(t)
    rank0 = gprops.get("rank 0", {})
    pids = sorted({f["pid"] for f in raises(traced)})
    c.equal(rank0.get("TRACER::PROCESS"),
            "pid %s on %s" % (pids[0] if len(pids) == 1 else pids, socket.gethostname()),
            "traced: location group property TRACER::PROCESS of \"rank 0\" (the pid in the double's log)")
    v = RankView(t, 0)
    c.equal(sorted(l.name for l in t.locations), sorted(l.name for l in v.locations),
            "traced: locations outside rank 0's groups")
    got = trace_instances(c, v)
    got_created = [v for (loc, name), v in got.items() if name == CREATED]
    n_created = sum(len(v) for v in got_created)
    c.equal(n_created, 4, "%s instances in the trace" % CREATED)
    if app_count is not None:
        c.equal(app_count + n_created, sum(int(f["delivered"]) for f in created),
                "application's callbacks + the trace's %s instances vs callbacks the double "
                "invoked" % CREATED)

    # The trace holds exactly the instances the double delivered to tracer,
    # unchanged, those raised inside MPI_Finalize included: the recording
    # goes on to the exit, where the job's archive is written (TRACER_JOB_
    # WRITE=exit). No MPIT_DOUBLE_SCRIPT is set, so the double raises
    # exactly one instance in its MPI_Finalize, first thing:
    # ompi.mpi.finalization (mpit_double.c, header). Criterion: the raises
    # logged before the first ompi.mpi.finalization raise are those before
    # MPI_Finalize; that one and any after it were raised inside it. The
    # split is cross-checked with the clock: the raises before it happened
    # no later than MPI_Finalize's Enter, the ones inside it between its
    # Enter and its Leave, within SLACK_NS (the trace's stamps vs the
    # double's direct CLOCK_MONOTONIC reads).
    log = raises(traced)
    cut = next((i for i, f in enumerate(log) if f["name"] == FINALIZATION), len(log))
    before, inside = log[:cut], log[cut:]
    c.equal([f["name"] for f in inside], [FINALIZATION],
            "raises inside MPI_Finalize (the double raises ompi.mpi.finalization there, nothing else)")
    c.equal([f["delivered"] for f in inside], ["1"],
            "callbacks per raise inside MPI_Finalize (tracer's registration is still live: it is freed after "
            "the real MPI_Finalize)")
    fin = [(e.time, l.time) for _, e, l in v.intervals("MPI_Finalize")]
    times = [ev.time for evs in v.events.values() for ev in evs]
    if len(fin) == 1 and times:
        late = [(f["name"], int(f["raise_ns"])) for f in before if int(f["raise_ns"]) > fin[0][0] + SLACK_NS]
        c.equal(late, [], "raises counted as before MPI_Finalize but raised after its Enter (%d)" % fin[0][0])
        out = [(f["name"], int(f["raise_ns"])) for f in inside
               if not fin[0][0] - SLACK_NS <= int(f["raise_ns"]) <= fin[0][1] + SLACK_NS]
        c.equal(out, [], "raises counted as inside MPI_Finalize but raised outside its Enter..Leave %r" % (fin[0],))
    want = collections.defaultdict(list)
    n_seen = 0
    for f in log:
        mine = int(f["delivered"])
        if f["name"] == CREATED:
            n_seen += 1
            if n_seen <= 3:
                mine -= 1      # the application's registration took one
        want[("MPI_T source ompi" if f["source"] == "0" else "MPI_T source ompi.unordered", f["name"])] \
            += [(int(f["tick"]), f["values"])] * mine
    c.equal({k: v for k, v in got.items() if v}, {k: v for k, v in want.items() if v},
            "trace: (source location, event type) -> [(source tick, element values)] (vs the double's "
            "deliveries to tracer)")
    c.check(set(n for _, n in want) >= {"ompi.mpi.initialization", CREATED, "ompi.mpi.communicator_freed"},
            "the double raised fewer event types than expected before MPI_Finalize: %r" % sorted(want))
    c.equal(sum(len(v) for k, v in got.items() if k[1] == FINALIZATION), 1,
            "%s (raised in MPI_Finalize) instances in the trace" % FINALIZATION)

    host0 = [l for l in v.cpu_threads() if l.name == "host thread 0"]
    if c.check(host0, "no 'host thread 0' location in group 'rank 0'"):
        cnt = v.count_enters(host0[0])
        c.equal((cnt.get("MPI_Init", 0), cnt.get("MPI_Finalize", 0)), (1, 1),
                "(MPI_Init, MPI_Finalize) regions on host thread 0")
        # Recording goes on to the exit: MPI_Finalize's Leave is the real
        # one, the exit status the program's (docs/trace-model.md, "Events,
        # per rank").
        c.equal([(l.name, ev.region.canonical_name) for l, ev in v.incomplete_leaves()],
                [], "traced: Leaves with incomplete=1")
        c.equal([ev.exit_status for _, ev in v.events_of(otf2.events.ProgramEnd, host0[0])], [traced.rc],
                "traced: ProgramEnd exit status (the program's)")
    # MPI_T properties are per rank; none without a rank. tracer made its 7
    # unbound registrations and the bound type's on MPI_COMM_WORLD and
    # MPI_COMM_SELF, and freed them all after the real MPI_Finalize, before
    # its recording ended: 0 live at the last catalogue check.
    c.equal(sorted((g, k) for g, ps in gprops.items() if g != "rank 0" for k in ps if k.startswith("TRACER::MPIT::")),
            [], "traced: TRACER::MPIT:: location group properties not of group \"rank 0\"")
    status = rank0.get("TRACER::MPIT::STATUS", "")
    m = re.fullmatch(r"MPICH.*: MPI_T events: 2 sources, 8 event types, (\d+) registrations made, (\d+) live", status)
    c.check(m and int(m.group(1)) >= 9 and int(m.group(2)) == 0,
            "TRACER::MPIT::STATUS of \"rank 0\" %r" % status)


def main():
    c = h.Checker("mpit_coexist")
    tmp = tempfile.mkdtemp(prefix="tracer-test-mpit-coexist-")
    runs = []
    try:
        check(c, tmp, runs)
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
