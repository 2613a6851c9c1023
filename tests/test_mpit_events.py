#!/usr/bin/python3
"""Ground truth of tracer's MPI_T event recording, against the MPI_T
provider TEST DOUBLE (tests/mpit_double).

TEST DOUBLE: libmpit_double.so stands in for an MPI library that raises MPI_T
events (Debian's MPICH 4.0.2 has the interface but raises none; see
tests/mpit_double/mpit_double.h for what the double implements and what
not). It is LD_PRELOADed after libtracer.so (sanitizer runtimes, tracer,
double, then MPICH), and every instance it raises is written to its own log
(MPIT_DOUBLE_LOG): event name, source, tick, the CLOCK_MONOTONIC ns the tick
stands for, the real time of the raise, the element values and to how many
callbacks it went; every dropped-events report with its count and the
number of dropped handlers called. That log is the ground truth; nothing
here trusts tracer's own account.

programs/mpit_events.c (MPICH) triggers the double's automatic events with
real MPI calls (MPI_Init, MPI_Comm_dup, _set_name, _split, _free,
MPI_Finalize) and raises the rest through the double's control API; the
scripted steps (MPIT_DOUBLE_SCRIPT) add an out-of-order burst on the
unordered source, drained memory releases and drops. The archive must
follow the contract of issue 6 (what the writer makes of MPI_T events):

  job archive  every MPI process (a singleton too) writes ONE archive per job,
               $TRACER_OUTPUT/traces.otf2, with no .rank<N> directory; its
               location groups are "rank <N>", TRACER::JOB::RANKS is "<N>/<N>"
               and the LocationGroupProperty TRACER::PROCESS of group
               "rank <N>" (a STRING, "pid <pid> on <host>") says which double
               log (MPIT_DOUBLE_LOG, per pid) is rank N's; every check below
               is made per rank, on that rank's part of the archive
               (RankView: the locations of group "rank <N>") against its own log
  recorded     by default (TRACER_JOB_WRITE=exit) the rank records until it
               exits and the last rank writes the archive, so the WHOLE log
               is expected: the double's @finalize steps (weird:9,
               released:1:10, a drop of 4) and ompi.mpi.finalization, raised
               inside MPI_Finalize (after its Enter; a drop by the rule
               below), are expected PRESENT, and the main scenario checks
               that the log has them (delivered).
               With TRACER_JOB_WRITE=finalize (case main-finalize) the
               rank's recording ends inside MPI_Finalize, before the real
               MPI_Finalize runs (docs/trace-model.md, "What is not seen"), so
               the expected set is the RECORDED PART of the log: a raise is
               recorded iff its raise_ns is before the Enter of the rank's
               MPI_Finalize region in the archive, and not recorded iff it is
               after that region's Leave (the end of the rank's recording); a
               raise between the two fails the test (the criterion could not
               tell). raise_ns is the rank's own CLOCK_MONOTONIC and the
               archive's times are rank 0's (ClockOffset): on one host the
               offset is a few ns, while the @finalize raises come
               milliseconds after the Leave. A drop line (no time) belongs
               where the raises around it in the log belong: after the
               recording when a raise before it in the log is after it, in it
               when a raise after it in the log is in it; otherwise the test
               fails. So the double's @finalize steps (weird:9, released:1:10,
               a drop of 4) and ompi.mpi.finalization are expected ABSENT,
               and the main scenario checks that the log has them (delivered)
  events       every recorded raise that reached tracer (delivered > 0) appears exactly
               `delivered` times - i.e. once, tracer registers each type once
               per object - as a zero-length region (Enter and Leave at the
               same time) named after the event type, role ARTIFICIAL,
               paradigm MPI, the MPI_T description, on the location
               "MPI_T source <name>" of its source (CPU_THREAD, in the
               rank's "rank <N>" group); raises nobody received do not appear; the
               number of regions per type equals the log's; element
               attributes "<type>[<i>]" hold the log's values with the type
               of the element's datatype (int32_t INT32, uint64_t UINT64,
               MPI_COUNT/MPI_AINT/MPI_OFFSET INT64 - COUNT -5, OFFSET 1<<40 -,
               the unknown MPI_2INT a STRING "0x" + its bytes in memory order)
  attributes   mpit_source_tick = the log's tick exactly; mpit_time_base
               "source clock"; mpit_callback_time after the raise (within a
               second); mpit_registration; mpit_object (bound events only) =
               the communicator handle of the log, for the dup'ed
               communicator and MPI_COMM_WORLD; a raise for a freed
               communicator reaches nobody
  time         |trace time - the ns the tick stands for| <= 20 us (the
               maximum error measured is printed); every MPI_T source
               location is sorted (the unordered burst); a tick that goes
               back on the ordered source carries mpit_order_violation=1
               (and only that one) and is not taken for a wrap
  drops        per source, the "MPI_T events dropped" regions carry the log's
               (type, count) once per handler called, and the last value of
               the metric "MPI_T dropped events" is the log's total
               (count * handlers)
  properties   per rank, as STRING LocationGroupProperty definitions of its
               PROCESS group "rank <N>" (not in the anchor file, whose
               properties are limited in size): TRACER::MPIT::STATUS (2 sources, 8 types,
               "K registrations made, L live" with L = 0 at exit (tracer freed
               its registrations after the real MPI_Finalize) and, with
               TRACER_JOB_WRITE=finalize, L = the registrations
               live at the last check before the recording ended: one per
               selected unbound type, plus MPI_COMM_WORLD's and MPI_COMM_SELF's
               when communicator_name_set is selected - the dup'ed and split
               communicators are freed before MPI_Finalize - and K >= L),
               ::SOURCE:: (events, dropped, order_violations of the recorded
               part), ::CLOCK:: (wraps) and ::EVENT:: (verbosity, bind,
               registered=yes|no (filtered), element layout, description) for
               the double's catalogue; exactly the groups "rank 0".."rank
               <N-1>" have TRACER::MPIT::* properties, and only "rank <N>"
               PROCESS groups have location group properties; the anchor file
               has no TRACER::MPIT::* and no TRACER::JOB::RANK<N>::* property
  summary      `tracer summary --json`: processes and host_threads = the
               number of ranks (MPI_T source locations are no host threads),
               incomplete = the archive's incomplete Leaves (one per rank,
               MPI_Finalize's, with TRACER_JOB_WRITE=finalize), mpit.sources/events/dropped/order_violations =
               the sums over the ranks' recorded parts (read from the
               location group properties), mpit.status = rank 0's STATUS
  filters      TRACER_MPIT_EVENTS='ompi.mpi.*,!*finalization' and
               TRACER_MPIT_LEVEL=2: exactly the selected types reach tracer
               (the double's delivered counts) and appear in the archive
  wrap         source 0 (microseconds modulo 2^40) wraps to 0 during the run
               (MPIT_DOUBLE_SCRIPT="@tinit;wrap_in:..."): the mapped times stay
               within the tolerance and monotonic; CLOCK says wraps >= 1
  host         MPI_Init and MPI_Finalize are regions (FUNCTION, MPI) on the
               rank's host thread; MPI_Init contains the ground-truth time of
               the initialization event and its Leave is complete;
               at exit MPI_Finalize's Leave is complete, the finalization
               event's ground-truth time inside it, and ProgramEnd (host
               thread 0) has the exit status 5; with
               TRACER_JOB_WRITE=finalize MPI_Finalize's Leave has incomplete=1
               and the finalization event's ground-truth time is after it,
               and ProgramEnd has the exit status OTF2_UNDEFINED_INT64; the process's exit
               status and stdout are those of the run without tracer; no
               "tracer:" line on stderr (the ranks no longer compete for a
               directory), no sanitizer report
  comms        every communicator a recorded bound event's mpit_object names
               is defined: MPI_COMM_WORLD, else "communicator 0x<handle>
               (rank <N>)"
  readable     otf2-print and the Python reader read the archive; no location
               without events (OTF2 3.0.2's global event reader frees such a
               location's reader and reads it again: a use-after-free)
  mpiexec      with TEST_MPIEXEC, `mpiexec -n 2`: one archive for both ranks,
               each rank's part matching the log of its own pid

Skipped (exit 77) only when the double or the MPICH program is not built.
"""
import collections
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import otf2  # noqa: E402
from otf2.enums import LocationGroupType, LocationType, Paradigm, RegionRole  # noqa: E402
from cfgtest import properties  # noqa: E402
from otf2_trace import RankView, group_properties  # noqa: E402

TOLERANCE_NS = 20000          # the contract's bound on the mapping error
CALLBACK_WINDOW_NS = 10 ** 9  # mpit_callback_time: at most this long after the raise
EXIT_CODE = 5                 # programs/mpit_events.c's exit status
DROPPED_REGION = "MPI_T events dropped"
DROPPED_METRIC = "MPI_T dropped events"
LOCATION_PREFIX = "MPI_T source "

# --- the double's catalogue (tests/mpit_double/mpit_double.c's header) -------

Source = collections.namedtuple("Source", "name ordered ticks_per_second max_ticks description")
SOURCES = {
    0: Source("ompi", True, 10 ** 6, (1 << 40) - 1,
              "Ordered lifecycle events (test double), microseconds, wraps at 2^40"),
    1: Source("ompi.unordered", False, 10 ** 9, (1 << 63) - 1,
              "Aggregated, unordered events (test double), nanoseconds"),
}
SOURCE_INDEX = {s.name: i for i, s in SOURCES.items()}

# element kinds: i32, u64, count, aint, offset, weird (MPI_2INT, 8 bytes)
ATTR_TYPE = {"i32": "INT32", "u64": "UINT64", "count": "INT64", "aint": "INT64",
             "offset": "INT64", "weird": "STRING"}
ELEMENT_TYPE_NAME = {"i32": "int32_t", "u64": "uint64_t", "count": "MPI_COUNT",
                     "aint": "MPI_AINT", "offset": "MPI_OFFSET"}
VERBOSITY = {2: "user detail", 4: "tuner basic", 9: "mpidev all"}

EventType = collections.namedtuple("EventType", "source level bound elements description")
CATALOGUE = {
    "ompi.mpi.initialization": EventType(
        0, 2, False, [("i32", 0), ("i32", 4), ("i32", 8), ("i32", 12), ("u64", 16)],
        "An MPI instance has been initialized (test double)"),
    "ompi.mpi.finalization": EventType(
        0, 2, False, [("i32", 0), ("i32", 4), ("u64", 8)],
        "An MPI instance is about to be finalized (test double)"),
    "ompi.mpi.communicator_created": EventType(
        0, 2, False, [("i32", 0), ("u64", 8)], "A communicator was created (test double)"),
    "ompi.mpi.communicator_freed": EventType(
        0, 2, False, [("u64", 0)], "A communicator is being freed (test double)"),
    "ompi.mpi.communicator_name_set": EventType(
        0, 4, True, [("u64", 0)], "The bound communicator's name was set (test double)"),
    "ompi.mpi.errhandler_invoked": EventType(
        0, 4, False, [("i32", 0), ("i32", 4), ("u64", 8), ("u64", 16)],
        "An error handler is invoked (test double)"),
    "ompi.mca.memory.patcher.released": EventType(
        1, 4, False, [("u64", 0), ("u64", 8)], "Memory returned to the OS, aggregated (test double)"),
    "double.weird": EventType(
        0, 9, False, [("i32", 0), ("count", 8), ("aint", 16), ("offset", 24), ("weird", 32)],
        "Test double only: elements of unusual datatypes, with a hole"),
}
MPI_COMM_WORLD_HANDLE = 0x44000000
UNDEFINED_INT64 = -(1 << 63)     # OTF2_UNDEFINED_INT64

# --- the runs ----------------------------------------------------------------

# @tinit runs in tracer's MPI_T_init_thread, before it registers anything: the
# weird:1 there reaches nobody. The memory release in @finalize is delivered
# when tracer frees its registrations (MPI_T_event_handle_free drains). The
# @finalize steps run inside MPI_Finalize: recorded at exit (the default);
# with TRACER_JOB_WRITE=finalize after the rank's recording ended, so they
# must be absent and the drop on source 1 in @init is the one recorded.
SCRIPT_MAIN = ("@tinit;weird:1;"
               "@init;unordered_burst:5;released:3:300;drain;drop:ompi.mca.memory.patcher.released:2;"
               "@finalize;weird:9;released:1:10;drop:ompi.mca.memory.patcher.released:4")
# Source 0 re-based before tracer takes its first clock pair, to wrap 6 s later:
# after MPI_Init (which took over 2 s once, under UBSan on a loaded machine,
# so that the wrap came before the program's loop), well within its 20 s.
SCRIPT_WRAP = "@tinit;wrap_in:6000000"

Case = collections.namedtuple("Case", "label scenario script env ranks selected want_wrap")


def all_types():
    return set(CATALOGUE)


def selected_types(events="*", level=9):
    """The types TRACER_MPIT_EVENTS / TRACER_MPIT_LEVEL select (glob list,
    '!' excludes; level = Open MPI's 1..9 as the double maps it)."""
    pats = [p.strip() for p in events.split(",") if p.strip()]
    inc = [p for p in pats if not p.startswith("!")] or ["*"]
    exc = [p[1:] for p in pats if p.startswith("!")]
    return {n for n, t in CATALOGUE.items()
            if any(fnmatch.fnmatchcase(n, p) for p in inc)
            and not any(fnmatch.fnmatchcase(n, p) for p in exc)
            and t.level <= level}


def cases():
    out = [
        Case("main", "main", SCRIPT_MAIN, {}, 1, all_types(), False),
        Case("main-finalize", "main", SCRIPT_MAIN, {"TRACER_JOB_WRITE": "finalize"}, 1, all_types(), False),
        Case("filter-events", "main", SCRIPT_MAIN,
             {"TRACER_MPIT_EVENTS": "ompi.mpi.*,!*finalization"}, 1,
             selected_types("ompi.mpi.*,!*finalization"), False),
        Case("filter-level", "main", SCRIPT_MAIN, {"TRACER_MPIT_LEVEL": "2"}, 1,
             selected_types(level=2), False),
        Case("wrap", "wrap", SCRIPT_WRAP, {"TRACER_FLUSH_INTERVAL": "100ms"}, 1, all_types(), True),
    ]
    if os.environ.get("TEST_MPIEXEC"):
        out.append(Case("mpiexec", "main", SCRIPT_MAIN, {}, 2, all_types(), False))
    return out


def want_stdout_lines(case):
    extra = ", wrap seen" if case.scenario == "wrap" else ""
    return ["mpit_events: rank %d of %d: %s done%s" % (r, case.ranks, case.scenario, extra)
            for r in range(case.ranks)]


Run = collections.namedtuple("Run", "dir rc stdout stderr")


def preload(traced):
    san = [p for p in re.split(r"[:\s]+", os.environ.get("TEST_SANITIZER_PRELOAD", "")) if p]
    tracer = [h.env_path("TEST_TRACER_LIB")] if traced else []
    return ":".join(san + tracer + [h.env_path("TEST_MPIT_DOUBLE_LIB")])


def run_program(tmp, label, case, traced):
    """Runs the program (under mpiexec for ranks > 1) in a fresh directory
    TMP/LABEL, the trace going to TMP/LABEL/trace, the double's log to
    TMP/LABEL/double.<pid>.log."""
    d = os.path.join(tmp, label)
    os.makedirs(d)
    env = h.base_env()
    env.pop("MPIT_DOUBLE_SCRIPT", None)
    env["LD_PRELOAD"] = preload(traced)
    env["MPIT_DOUBLE_LOG"] = os.path.join(d, "double.%p.log")
    env["MPIT_DOUBLE_SCRIPT"] = case.script
    if traced:
        env["TRACER_OUTPUT"] = os.path.join(d, "trace")
    env.update(case.env)
    cmd = [h.env_path("TEST_BIN"), case.scenario, str(EXIT_CODE)]
    if case.ranks > 1:
        cmd = [os.environ["TEST_MPIEXEC"], "-n", str(case.ranks)] + cmd
    try:
        p = subprocess.run(cmd, cwd=d, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=150)
        return Run(d, p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"))
    except subprocess.TimeoutExpired as e:
        return Run(d, None, (e.stdout or b"").decode(errors="replace"),
                   (e.stderr or b"").decode(errors="replace") + "\n(timed out)")


# --- the double's log -----------------------------------------------------------

Raise = collections.namedtuple("Raise", "name source tick mono_ns raise_ns pid delivered values seq")
Drop = collections.namedtuple("Drop", "name source count handlers reason seq")


def parse_log(path):
    raises, drops = [], []
    with open(path) as f:
        for seq, line in enumerate(f):
            kind, _, rest = line.strip().partition(" ")
            fields = dict(kv.split("=", 1) for kv in rest.split())
            if kind == "raise":
                raises.append(Raise(fields["name"], int(fields["source"]), int(fields["tick"]),
                                    int(fields["mono_ns"]), int(fields["raise_ns"]), int(fields["pid"]),
                                    int(fields["delivered"]), tuple(fields["values"].split(",")), seq))
            elif kind == "drop":
                drops.append(Drop(fields["name"], int(fields["source"]), int(fields["count"]),
                                  int(fields["handlers"]), fields["reason"], seq))
    return raises, drops


def logs_by_pid(run_dir):
    out = {}
    for name in sorted(os.listdir(run_dir)):
        m = re.fullmatch(r"double\.(\d+)\.log", name)
        if m:
            out[int(m.group(1))] = parse_log(os.path.join(run_dir, name))
    return out


def period(source):
    return SOURCES[source].max_ticks + 1


def ns_per_tick(source):
    return 10 ** 9 // SOURCES[source].ticks_per_second


def truth_times(raises):
    """{raise: CLOCK_MONOTONIC ns its tick stands for}. The double's tick is
    (mono_ns / ns_per_tick + origin) mod period; origin is the most common
    (tick - mono_ns / ns_per_tick) of the source, and a tick raised with an
    offset (the order violation) stands for mono_ns + offset."""
    out = {}
    for src in SOURCES:
        mine = [r for r in raises if r.source == src]
        if not mine:
            continue
        k, p = ns_per_tick(src), period(src)
        origin = collections.Counter((r.tick - r.mono_ns // k) % p for r in mine).most_common(1)[0][0]
        for r in mine:
            lag = (r.tick - (r.mono_ns // k + origin)) % p
            if lag >= p // 2:
                lag -= p
            out[r] = r.mono_ns + lag * k
    return out


def delivered_order(raises, source):
    return [r for r in raises if r.source == source and r.delivered > 0]


def wraps_in(raises, source):
    """Ticks of consecutive raises that go back by more than half the period."""
    ticks = [r.tick for r in raises if r.source == source]
    return sum(1 for a, b in zip(ticks, ticks[1:]) if a - b > period(source) // 2)


def expected_violations(raises):
    """Raises on an ordered source whose tick is below the previous one
    delivered from it (a wrap is no violation)."""
    out = set()
    for src, s in SOURCES.items():
        if not s.ordered:
            continue
        prev = None
        for r in delivered_order(raises, src):
            if prev is not None and r.tick < prev and prev - r.tick < period(src) // 2:
                out.add(r)
            prev = r.tick
    return out


def log_key(r):
    return (r.source, r.name, r.tick, r.values)


def at_exit(case):
    """The job's archive is written at exit (TRACER_JOB_WRITE=exit, the
    default): the recording goes on past MPI_Finalize."""
    return case.env.get("TRACER_JOB_WRITE", "exit") == "exit"


def split_at_recording_end(c, what, raises, drops, enter_ns, leave_ns, whole=False):
    """(recorded raises, recorded drops, late raises, late drops).
    TRACER_JOB_WRITE=finalize: a raise is recorded iff raise_ns < enter_ns
    (the Enter of the rank's MPI_Finalize), not recorded ("late") iff
    raise_ns > leave_ns (its Leave, the end of the rank's recording); one in
    between fails the check. A drop follows the raises around it in the log
    (see the module docstring). @whole (TRACER_JOB_WRITE=exit): every raise
    and drop is recorded, and "late" are those raised after MPI_Finalize's
    Enter (the double's @finalize steps), by the same rule."""
    if whole:
        late = [r for r in raises if r.raise_ns > enter_ns]
        late_drops = []
        for d in drops:
            before_it = [r for r in raises if r.seq < d.seq]
            if before_it and before_it[-1] in late:
                late_drops.append(d)
        return list(raises), list(drops), late, late_drops
    between = [r for r in raises if enter_ns <= r.raise_ns <= leave_ns]
    c.check(not between, "%s: raise(s) between MPI_Finalize's Enter %d and the end of the recording %d: "
            "the test cannot tell whether they belong in the archive: %r" % (what, enter_ns, leave_ns, between[:3]))
    rec = [r for r in raises if r.raise_ns < enter_ns]
    after = [r for r in raises if r.raise_ns > leave_ns]
    rec_drops, after_drops = [], []
    for d in drops:
        before_it = [r for r in raises if r.seq < d.seq]
        after_it = [r for r in raises if r.seq > d.seq]
        if before_it and before_it[-1] in after:
            after_drops.append(d)
        elif after_it and after_it[0] in rec:
            rec_drops.append(d)
        else:
            c.check(False, "%s: the log's drop %r lies between the last raise recorded and the first "
                    "not recorded: the test cannot tell whether it belongs in the archive" % (what, d))
    return rec, rec_drops, after, after_drops


def expected_live_registrations(case):
    """Registrations live at the last check before the recording ended: one
    per selected unbound type, MPI_COMM_WORLD's and MPI_COMM_SELF's for the
    bound type (the program frees its own communicators before MPI_Finalize)."""
    return sum(1 if not CATALOGUE[n].bound else 2 for n in case.selected)


# --- the archive -----------------------------------------------------------------


def trace_value(v):
    """An element attribute in the log's notation."""
    if isinstance(v, str) and v.startswith("0x"):
        return "x" + v[2:]
    return str(v)


def element_values(ev, name):
    """The element attributes "<name>[i]" in order, in the log's notation."""
    vals = []
    while True:
        v = h.Trace.attr(ev, "%s[%d]" % (name, len(vals)))
        if v is None:
            return tuple(vals)
        vals.append(trace_value(v))


def source_locations(c, what, t, rank):
    """{source index: location} of the "MPI_T source <name>" locations of a
    rank (t: its RankView), in its group "rank <N>"."""
    out = {}
    host_groups = {loc.group for loc in t.cpu_threads() if not loc.name.startswith(LOCATION_PREFIX)}
    for loc in t.locations:
        if not loc.name.startswith(LOCATION_PREFIX):
            continue
        name = loc.name[len(LOCATION_PREFIX):]
        if not c.check(name in SOURCE_INDEX, "%s: location %r names no source of the double" % (what, loc.name)):
            continue
        c.equal(loc.type, LocationType.CPU_THREAD, "%s: type of location %r" % (what, loc.name))
        c.check(loc.group in host_groups and loc.group.name == "rank %d" % rank,
                "%s: location %r is not in the rank's group %r (%r)"
                % (what, loc.name, "rank %d" % rank, getattr(loc.group, "name", None)))
        c.check(SOURCE_INDEX[name] not in out, "%s: two locations %r" % (what, loc.name))
        out[SOURCE_INDEX[name]] = loc
    return out


def event_enters(t, locs):
    """[(source, Enter)] of MPI_T event regions (drop regions excluded)."""
    return [(src, ev) for src, loc in locs.items() for _, ev in t.enters(location=loc)
            if ev.region.canonical_name != DROPPED_REGION]


def archive_outline(anchor):
    """([location group names], {(group, location name): number of events}) from
    `otf2-print -G`, which reads the definitions only: OTF2 3.0.2's global
    event reader, which otf2-print and the Python reader use for events,
    frees the reader of a location without events and then reads it (a
    use-after-free valgrind shows; a crash with MALLOC_PERTURB_), so an
    archive with such a location is not given to it."""
    p = subprocess.run([h.otf2_print_cmd() or "otf2-print", "-G", anchor], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    groups = []
    counts = {}
    for line in p.stdout.splitlines():
        m = re.match(r'LOCATION_GROUP\s+\d+\s+Name: "(.*?)" <\d+>', line)
        if m:
            groups.append(m.group(1))
        m = re.match(r'LOCATION\s+\d+\s+Name: "(.*)" <\d+>, .*# Events: (\d+), Group: "(.*?)" <\d+>', line)
        if m:
            counts[(m.group(3), m.group(1))] = int(m.group(2))
    return groups, counts


def find_archives(run_dir):
    return sorted(os.path.join(dp, "traces.otf2") for dp, _, files in os.walk(run_dir)
                  if "traces.otf2" in files)


def prop_fields(value):
    """'a=1; flag; b=x' -> {'a': '1', 'flag': True, 'b': 'x'} (description last, may hold ';')."""
    out = {}
    head, sep, desc = value.partition("; description=")
    for part in head.split(";"):
        part = part.strip()
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
        elif part:
            out[part] = True
    if sep:
        out["description"] = desc
    return out


def mpit_properties(props, kind):
    """{MPI_T name: fields} of the TRACER::MPIT::<kind>::* properties (the
    real name is the value's name= field: property names allow only
    [A-Z0-9_])."""
    out = {}
    for pname, value in props.items():
        if pname.startswith("TRACER::MPIT::%s::" % kind):
            f = prop_fields(value)
            out[f.get("name", pname.split("::")[-1])] = f
    return out


# --- the checks --------------------------------------------------------------------


def check_process(c, what, case, run, plain_stdout):
    """Exit status and stdout as without tracer, no tracer: errors, no
    sanitizer report."""
    c.equal(run.rc, EXIT_CODE, "%s: exit status (stderr tail: %s)" % (what, run.stderr[-1500:]))
    c.equal(sorted(run.stdout.splitlines()), want_stdout_lines(case), "%s: stdout" % what)
    if plain_stdout is not None:
        c.equal(run.stdout, plain_stdout, "%s: stdout vs the run without tracer" % what)
    bad = [ln for ln in run.stderr.splitlines() if ln.startswith("tracer:")]
    c.equal(bad, [], "%s: tracer: lines on stderr" % what)
    for m in h.SANITIZER_MARKERS:
        c.check(m not in run.stderr, "%s: sanitizer report\n%s" % (what, run.stderr[-3000:]))


def check_scenario(c, what, case, raises, drops, rec, rec_drops, after, after_drops):
    """The log holds what this run is meant to exercise, in the part the
    archive records (rec, rec_drops) and, for the main scenario, in the late
    part (after, after_drops: raised inside MPI_Finalize; recorded too at
    exit, after the end of the recording with TRACER_JOB_WRITE=finalize):
    otherwise the checks below could not fail."""
    where = "inside MPI_Finalize" if at_exit(case) else "after the end of the recording"
    raised = {r.name for r in raises}
    if case.scenario == "main":
        c.equal(raised, all_types(), "%s: event types raised" % what)
    names = {r.name for r in raises if r.delivered > 0}
    c.equal(names, case.selected & raised, "%s: event types delivered to tracer (its registrations)" % what)
    c.check(all(r.delivered <= 1 for r in raises),
            "%s: raises delivered to several registrations of tracer: %r"
            % (what, [r for r in raises if r.delivered > 1][:3]))
    late = {r.name for r in after if r.delivered > 0}
    if "ompi.mpi.finalization" in case.selected:
        c.check("ompi.mpi.finalization" in late,
                "%s: no delivered ompi.mpi.finalization %s in the log" % (what, where))
    c.check("ompi.mpi.finalization" not in {r.name for r in rec if r not in after},
            "%s: ompi.mpi.finalization raised before MPI_Finalize began" % what)
    if case.scenario == "wrap":
        c.check(wraps_in(delivered_order(rec, 0), 0) >= 1,
                "%s: source 0 did not wrap between two delivered events the archive records" % what)
        return
    if "double.weird" in case.selected:
        c.check(any(r.name == "double.weird" and r.delivered and r.values[0] == "9" for r in after),
                "%s: the @finalize weird:9 was not delivered %s" % (what, where))
    if "ompi.mca.memory.patcher.released" in case.selected:
        c.check(any(r.name == "ompi.mca.memory.patcher.released" and r.delivered for r in after),
                "%s: the @finalize memory release was not delivered %s" % (what, where))
        c.check(any(d.source == 1 and d.handlers > 0 for d in after_drops),
                "%s: no drop on source 1 %s" % (what, where))
    raises, drops = rec, rec_drops  # what follows is about the recorded part
    first = raises[0] if raises else None
    c.check(first is not None and first.name == "double.weird" and first.delivered == 0,
            "%s: the @tinit raise (before tracer registers) reached someone: %r" % (what, first))
    if "ompi.mpi.errhandler_invoked" in case.selected:
        c.check(expected_violations(raises), "%s: no order violation in the log" % what)
    if "ompi.mca.memory.patcher.released" in case.selected:
        burst = [r.tick for r in delivered_order(raises, 1)]
        c.check(burst != sorted(burst), "%s: source 1's delivered ticks are in order" % what)
        c.check(any(d.source == 1 and d.handlers > 0 for d in drops), "%s: no drop on source 1" % what)
    if "ompi.mpi.communicator_name_set" in case.selected:
        named = [r for r in raises if r.name == "ompi.mpi.communicator_name_set"]
        dup = dup_handle(raises)
        c.check(any(r.values[0] == str(dup) and r.delivered == 1 for r in named),
                "%s: the name_set of the dup'ed communicator %r did not reach tracer" % (what, dup))
        c.check(any(r.values[0] == str(MPI_COMM_WORLD_HANDLE) and r.delivered == 1 for r in named),
                "%s: the name_set of MPI_COMM_WORLD did not reach tracer" % what)
        c.check(named and named[-1].values[0] == str(dup) and named[-1].delivered == 0,
                "%s: the name_set raised after MPI_Comm_free of the dup reached tracer "
                "(its registration was not freed): %r" % (what, named[-1:]))
        c.check(any(d.name == "ompi.mpi.communicator_name_set" and d.handlers >= 4 for d in drops),
                "%s: the bound drop did not reach a handler per communicator" % what)
    if "double.weird" in case.selected:
        c.check(any(r.name == "double.weird" and r.delivered and r.values[1] == "-5"
                    and r.values[3] == str(1 << 40) for r in raises),
                "%s: no delivered double.weird with COUNT -5 and OFFSET 1<<40" % what)


def dup_handle(raises):
    """The handle of the first communicator the program created (its dup)."""
    created = [r for r in raises if r.name == "ompi.mpi.communicator_created"]
    return int(created[0].values[1]) if created else None


def check_event_set(c, what, t, locs, raises):
    """Every delivered raise exactly `delivered` times on its source's
    location, nothing else; the same number of regions per type."""
    want = collections.Counter()
    for r in raises:
        if r.delivered > 0:
            want[log_key(r)] += r.delivered
    got = collections.Counter()
    for src, ev in event_enters(t, locs):
        name = ev.region.canonical_name
        got[(src, name, h.Trace.attr(ev, "mpit_source_tick"), element_values(ev, name))] += 1
    missing = want - got
    extra = got - want
    c.check(not missing, "%s: %d raise(s) of the log missing from the archive (source, type, tick, values): %r"
            % (what, sum(missing.values()), sorted(missing)[:5]))
    c.check(not extra, "%s: %d event(s) in the archive the log does not have (or twice): %r"
            % (what, sum(extra.values()), sorted(extra)[:5]))
    want_types = collections.Counter(r.name for r in raises for _ in range(r.delivered))
    got_types = collections.Counter(ev.region.canonical_name for _, ev in event_enters(t, locs))
    c.equal(dict(got_types), dict(want_types), "%s: events per type" % what)
    host = [ev.region.canonical_name for loc in t.cpu_threads() if loc not in locs.values()
            for _, ev in t.enters(location=loc)
            if ev.region.canonical_name in CATALOGUE or ev.region.canonical_name == DROPPED_REGION]
    c.equal(host, [], "%s: MPI_T regions on a host thread" % what)
    return sum(want.values())


def check_region(c, what, region, name):
    c.equal(region.region_role, RegionRole.ARTIFICIAL, "%s: role of region %r" % (what, name))
    c.equal(region.paradigm, Paradigm.MPI, "%s: paradigm of region %r" % (what, name))
    if name in CATALOGUE:
        c.equal(region.description, CATALOGUE[name].description, "%s: description of region %r" % (what, name))


def check_zero_length(c, what, t, locs):
    """Each MPI_T region is an Enter directly followed by its Leave at the
    same time."""
    for src, loc in locs.items():
        evs = t.events[loc]
        for i, ev in enumerate(evs):
            if not isinstance(ev, otf2.events.Enter):
                continue
            nxt = evs[i + 1] if i + 1 < len(evs) else None
            c.check(isinstance(nxt, otf2.events.Leave) and nxt.region == ev.region and nxt.time == ev.time,
                    "%s: %s: Enter(%s) at %d not followed by its Leave at the same time (next: %s)"
                    % (what, loc.name, ev.region.canonical_name, ev.time,
                       None if nxt is None else "%s(%s) at %d" % (type(nxt).__name__,
                                                                  getattr(getattr(nxt, "region", None),
                                                                          "canonical_name", ""), nxt.time)))


def check_attributes(c, what, t, locs, raises, truth):
    """Per event: attribute types and values against its raise; the mapped
    time against the ground truth. Returns {source: max |error| ns}."""
    by_key = {log_key(r): r for r in raises if r.delivered > 0}
    violations = expected_violations(raises)
    max_err = {}
    for src, ev in event_enters(t, locs):
        name = ev.region.canonical_name
        r = by_key.get((src, name, h.Trace.attr(ev, "mpit_source_tick"), element_values(ev, name)))
        if r is None or name not in CATALOGUE:
            continue  # reported by check_event_set
        check_region(c, what, ev.region, name)
        w = "%s: %s tick %d" % (what, name, r.tick)
        types = {k.name: str(k.type).rsplit(".", 1)[-1] for k in (ev.attributes or {})}
        for i, (kind, _) in enumerate(CATALOGUE[name].elements):
            c.equal(types.get("%s[%d]" % (name, i)), ATTR_TYPE[kind], "%s: type of element %d" % (w, i))
        c.equal(types.get("mpit_source_tick"), "UINT64", "%s: type of mpit_source_tick" % w)
        c.equal(h.Trace.attr(ev, "mpit_time_base"), "source clock", "%s: mpit_time_base" % w)
        c.check(isinstance(h.Trace.attr(ev, "mpit_registration"), int),
                "%s: no mpit_registration" % w)
        cb = h.Trace.attr(ev, "mpit_callback_time")
        c.check(isinstance(cb, int) and r.raise_ns - TOLERANCE_NS <= cb <= r.raise_ns + CALLBACK_WINDOW_NS,
                "%s: mpit_callback_time %r, raised at %d" % (w, cb, r.raise_ns))
        obj = h.Trace.attr(ev, "mpit_object")
        if CATALOGUE[name].bound:
            c.equal(obj, int(r.values[0]), "%s: mpit_object (the bound communicator)" % w)
        else:
            c.equal(obj, None, "%s: mpit_object on an unbound event" % w)
        c.equal(h.Trace.attr(ev, "mpit_order_violation"), 1 if r in violations else None,
                "%s: mpit_order_violation" % w)
        err = ev.time - truth[r]
        c.check(abs(err) <= TOLERANCE_NS, "%s: trace time %d, the tick stands for %d: error %d ns > %d ns"
                % (w, ev.time, truth[r], err, TOLERANCE_NS))
        max_err[src] = max(max_err.get(src, 0), abs(err))
    return max_err


def check_sorted(c, what, t, locs):
    for src, loc in locs.items():
        times = [ev.time for ev in t.events[loc]]
        c.check(times == sorted(times), "%s: %s: timestamps not sorted" % (what, loc.name))


def check_drops(c, what, t, locs, drops):
    """Drop regions and the running total per source against the log."""
    for src in SOURCES:
        want = collections.Counter()
        for d in drops:
            if d.source == src:
                want[(d.name, d.count)] += d.handlers
        want_total = sum(n * cnt for (_, n), cnt in want.items())
        loc = locs.get(src)
        got = collections.Counter()
        if loc is not None:
            for _, ev in t.enters(DROPPED_REGION, loc):
                got[(h.Trace.attr(ev, "mpit_event_type"), h.Trace.attr(ev, "mpit_dropped"))] += 1
                check_region(c, what, ev.region, DROPPED_REGION)
                c.check(isinstance(h.Trace.attr(ev, "mpit_registration"), int),
                        "%s: drop region without mpit_registration" % what)
        c.equal(dict(got), dict(+want), "%s: source %s: drops (type, count) x handlers"
                % (what, SOURCES[src].name))
        values = [v for _, _, v in t.metric_values(DROPPED_METRIC, loc)] if loc is not None else []
        c.equal(values[-1] if values else 0, want_total, "%s: source %s: last %r value"
                % (what, SOURCES[src].name, DROPPED_METRIC))
        c.equal(values, sorted(values), "%s: source %s: %r is a running total" % (what, SOURCES[src].name,
                                                                                 DROPPED_METRIC))


def finalize_span(c, what, t):
    """(Enter, Leave) of the rank's MPI_Finalize region (t: its RankView), or None."""
    spans = t.intervals("MPI_Finalize")
    if not c.equal(len(spans), 1, "%s: MPI_Finalize regions" % what):
        return None
    return spans[0][1], spans[0][2]


def check_mpi_calls(c, what, t, raises, truth, whole=True):
    """MPI_Init / MPI_Finalize on the rank's host thread: MPI_Init around the
    ground-truth time of the initialization event. @whole
    (TRACER_JOB_WRITE=exit): MPI_Finalize's real Leave, the finalization
    event (raised by the real MPI_Finalize) inside it, ProgramEnd's exit
    status the program's. TRACER_JOB_WRITE=finalize: MPI_Finalize cut at the
    end of the recording (Leave incomplete=1), the finalization event after
    it; ProgramEnd's exit status undefined. raises: the whole log."""
    for region, event in (("MPI_Init", "ompi.mpi.initialization"), ("MPI_Finalize", "ompi.mpi.finalization")):
        spans = [(loc, a, b) for loc, a, b in t.intervals(region)]
        if not c.equal(len(spans), 1, "%s: %s regions" % (what, region)):
            continue
        loc, enter, leave = spans[0]
        c.equal(h.Trace.attr(leave, "incomplete"), 1 if region == "MPI_Finalize" and not whole else None,
                "%s: incomplete on %s's Leave" % (what, region))
        c.check(loc.type == LocationType.CPU_THREAD and not loc.name.startswith(LOCATION_PREFIX),
                "%s: %s on %r, not a host thread" % (what, region, loc.name))
        c.equal(enter.region.region_role, RegionRole.FUNCTION, "%s: role of %s" % (what, region))
        c.equal(enter.region.paradigm, Paradigm.MPI, "%s: paradigm of %s" % (what, region))
        inside = [r for r in raises if r.name == event]
        if c.equal(len(inside), 1, "%s: %s raises in the log" % (what, event)):
            when = truth[inside[0]]
            if region == "MPI_Init" or whole:
                c.check(enter.time - TOLERANCE_NS <= when <= leave.time + TOLERANCE_NS,
                        "%s: %s (ground truth %d) outside %s [%d, %d]" % (what, event, when, region,
                                                                          enter.time, leave.time))
            else:
                c.check(when > leave.time,
                        "%s: %s (ground truth %d) not after the end of the recording (%s's Leave %d)"
                        % (what, event, when, region, leave.time))
    ends = t.events_of(otf2.events.ProgramEnd)
    if c.equal(len(ends), 1, "%s: ProgramEnd events" % what):
        c.equal(ends[0][0].name, "host thread 0", "%s: location of ProgramEnd" % what)
        c.equal(ends[0][1].exit_status, EXIT_CODE if whole else UNDEFINED_INT64, "%s: ProgramEnd exit status" % what)


def check_properties(c, what, props, case, t, locs, raises, drops):
    """props: the rank's TRACER::MPIT::* (location group properties of its
    group "rank <N>"); raises, drops: the recorded part of its log."""
    status = props.get("TRACER::MPIT::STATUS", "")
    m = re.fullmatch(r"MPICH Version:\s*\S+: MPI_T events: 2 sources, 8 event types, "
                     r"(\d+) registrations made, (\d+) live", status)
    # At exit tracer has freed every registration itself after the real
    # MPI_Finalize, before its recording ended: none is live then.
    made = expected_live_registrations(case)
    live = 0 if at_exit(case) else made
    c.check(m and int(m.group(2)) == live and int(m.group(1)) >= made,
            "%s: TRACER::MPIT::STATUS %r (want %d live, at least %d made)" % (what, status, live, made))
    sources = mpit_properties(props, "SOURCE")
    clocks = mpit_properties(props, "CLOCK")
    violations = expected_violations(raises)
    for src, s in SOURCES.items():
        f = sources.get(s.name)
        loc = locs.get(src)
        events = len([1 for x, _ in event_enters(t, locs) if x == src]) if loc else 0
        delivered = sum(r.delivered for r in raises if r.source == src)
        if delivered == 0 and f is None:
            continue  # nothing recorded from it (filtered)
        if not c.check(f is not None, "%s: no TRACER::MPIT::SOURCE property for %s (have %r)"
                       % (what, s.name, sorted(sources))):
            continue
        w = "%s: SOURCE %s" % (what, s.name)
        c.check(f.get("ordered" if s.ordered else "unordered") is True, "%s: order %r" % (w, f))
        c.equal(f.get("ticks_per_second"), str(s.ticks_per_second), "%s: ticks_per_second" % w)
        c.equal(f.get("max_ticks"), str(s.max_ticks), "%s: max_ticks" % w)
        c.equal(f.get("adhoc_timestamps"), "yes", "%s: adhoc_timestamps" % w)
        c.equal(f.get("events"), str(delivered), "%s: events (log: delivered)" % w)
        c.equal(f.get("events"), str(events), "%s: events (archive)" % w)
        c.equal(f.get("dropped"), str(sum(d.count * d.handlers for d in drops if d.source == src)),
                "%s: dropped" % w)
        c.equal(f.get("order_violations"), str(len([r for r in violations if r.source == src])),
                "%s: order_violations" % w)
        c.equal(f.get("description"), s.description, "%s: description" % w)
        cf = clocks.get(s.name, {})
        ns = [k for k in cf if isinstance(k, str) and k.startswith("ns")]
        c.check(ns, "%s: CLOCK %s is no source-clock fit: %r" % (what, s.name, cf))
        wraps = cf.get("wraps")
        if wraps_in(raises, src):
            c.check(wraps is not None and wraps.isdigit() and int(wraps) >= 1,
                    "%s: CLOCK %s: wraps=%r, the log wraps" % (what, s.name, wraps))
        else:
            c.equal(wraps, "0", "%s: CLOCK %s wraps" % (what, s.name))
    events = mpit_properties(props, "EVENT")
    for name, ty in CATALOGUE.items():
        f = events.get(name)
        if not c.check(f is not None, "%s: no TRACER::MPIT::EVENT property for %s" % (what, name)):
            continue
        w = "%s: EVENT %s" % (what, name)
        c.equal(f.get("verbosity"), "%s (%d)" % (VERBOSITY[ty.level], ty.level), "%s: verbosity" % w)
        c.equal(f.get("bind"), "communicator" if ty.bound else "none", "%s: bind" % w)
        c.equal(f.get("registered"), "yes" if name in case.selected else "no (filtered)", "%s: registered" % w)
        layout = [e.rsplit("@", 1) for e in f.get("elements", "").split(",") if e]
        c.equal([int(d) for _, d in layout], [d for _, d in ty.elements], "%s: element displacements" % w)
        for (tn, _), (kind, disp) in zip(layout, ty.elements):
            if kind in ELEMENT_TYPE_NAME:  # the unknown one's name is tracer's choice
                c.equal(tn, ELEMENT_TYPE_NAME[kind], "%s: datatype of the element at %d" % (w, disp))
        c.equal(f.get("description"), ty.description, "%s: description" % w)


def check_summary(c, what, anchor, t, ranks, totals, status0):
    """`tracer summary --json` of the job archive: one process and one host
    thread per rank (MPI_T source locations are not host threads), the
    incomplete Leaves (MPI_Finalize's, one per rank), MPI_T totals = the sums
    over the ranks' recorded parts (totals), mpit.status = rank 0's STATUS."""
    cli = os.environ.get("TEST_TRACER_CLI")
    if not cli:
        c.note("TEST_TRACER_CLI not set: tracer summary is not checked")
        return
    p = subprocess.run([cli, "summary", "--json", anchor], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if not c.equal(p.returncode, 0, "%s: tracer summary exit status (%r)" % (what, p.stderr[-300:])):
        return
    s = json.loads(p.stdout)
    m = s.get("mpit", {})
    c.equal(s.get("processes"), ranks, "%s: summary processes" % what)
    c.equal(s.get("host_threads"), ranks, "%s: summary host_threads" % what)
    c.equal(s.get("incomplete"), len(t.incomplete_leaves()), "%s: summary incomplete" % what)
    for key in ("sources", "events", "dropped", "order_violations"):
        c.equal(m.get(key), totals[key], "%s: summary mpit.%s" % (what, key))
    c.equal(m.get("status"), status0, "%s: summary mpit.status (rank 0's)" % what)


def rank_properties(gprops, rank):
    """The rank's TRACER::MPIT::* properties (of its group "rank <N>")."""
    return {k: v for k, v in gprops.get("rank %d" % rank, {}).items() if k.startswith("TRACER::MPIT::")}


def check_comms(c, what, t, rank, locs):
    """Every communicator a recorded bound event names is defined."""
    names = {cm.name for cm in t.definitions.comms}
    for _, ev in event_enters(t, locs):
        obj = h.Trace.attr(ev, "mpit_object")
        if obj is None:
            continue
        want = "MPI_COMM_WORLD" if obj == MPI_COMM_WORLD_HANDLE else "communicator 0x%x (rank %d)" % (obj, rank)
        c.check(want in names, "%s: no Comm %r for mpit_object 0x%x (have %r)" % (what, want, obj, sorted(names)))


def check_rank(c, what, case, t, rank, props, raises, drops, totals):
    """Everything one rank's part of the archive must say about its log.
    Returns {source: max |time error|}."""
    v = RankView(t, rank)
    span = finalize_span(c, what, v)
    if span is None:
        return {}
    rec, rec_drops, after, after_drops = split_at_recording_end(c, what, raises, drops, span[0].time,
                                                                span[1].time, whole=at_exit(case))
    check_scenario(c, what, case, raises, drops, rec, rec_drops, after, after_drops)
    locs = source_locations(c, what, v, rank)
    for src in SOURCES:
        if any(r.source == src and r.delivered for r in rec):
            c.check(src in locs, "%s: no location %r%s" % (what, LOCATION_PREFIX, SOURCES[src].name))
    truth = truth_times(raises)
    n = check_event_set(c, what, v, locs, rec)
    check_zero_length(c, what, v, locs)
    check_sorted(c, what, v, locs)
    errors = check_attributes(c, what, v, locs, rec, truth)
    check_drops(c, what, v, locs, rec_drops)
    check_mpi_calls(c, what, v, raises, truth, whole=at_exit(case))
    check_properties(c, what, props, case, v, locs, rec, rec_drops)
    check_comms(c, what, v, rank, locs)
    totals["sources"] += len(mpit_properties(props, "SOURCE"))
    totals["events"] += n
    totals["dropped"] += sum(d.count * d.handlers for d in rec_drops)
    totals["order_violations"] += len(expected_violations(rec))
    print("%s: %d of %d delivered raises recorded, %d violation(s), %d of %d drop report(s) compared; "
          "max |trace time - tick time|: %s (tolerance %d ns)"
          % (what, n, sum(r.delivered for r in raises), len(expected_violations(rec)),
             sum(d.handlers for d in rec_drops), sum(d.handlers for d in drops),
             ", ".join("%s %d ns" % (SOURCES[s].name, e) for s, e in sorted(errors.items())) or "-",
             TOLERANCE_NS))
    return errors


def check_case(c, case, run, plain_stdout):
    """One run: the process, its one job archive, then each rank's part of
    it against the log of that rank's pid."""
    what = case.label
    check_process(c, what, case, run, plain_stdout)
    logs = logs_by_pid(run.dir)
    c.equal(len(logs), case.ranks, "%s: double logs (one per rank)" % what)
    anchor = os.path.join(run.dir, "trace", "traces.otf2")
    archives = find_archives(run.dir)
    if not c.equal(archives, [anchor], "%s: archives under %s (one per job, at $TRACER_OUTPUT)" % (what, run.dir)):
        return {}
    groups, counts = archive_outline(anchor)
    want_groups = ["rank %d" % r for r in range(case.ranks)]
    c.equal(groups, want_groups, "%s: location groups" % what)
    empty = sorted(k for k, n in counts.items() if n == 0)
    if not c.check(counts and not empty,
                   "%s: location(s) without events %r (of %r): OTF2 3.0.2's global event reader "
                   "frees an empty location's reader and reads it again (use-after-free: otf2-print "
                   "and the Python reader may crash); the archive is not read further"
                   % (what, empty, sorted(counts))):
        return {}
    t = h.open_checked_trace(c, what, anchor)
    if t is None:
        return {}
    props = properties(c, anchor, what)
    c.equal(props.get("TRACER::JOB::RANKS"), "%d/%d" % (case.ranks, case.ranks), "%s: TRACER::JOB::RANKS" % what)
    # Per-rank properties are location group properties, none in the anchor.
    stray = sorted(k for k in props if k.startswith("TRACER::MPIT::")
                   or (k.startswith("TRACER::JOB::RANK") and k != "TRACER::JOB::RANKS"))
    c.equal(stray, [], "%s: TRACER::MPIT::* / TRACER::JOB::RANK<N>::* anchor properties (per-rank "
            "properties belong to the rank's location group)" % what)
    gprops = group_properties(t)
    process_groups = {g.name for g in t.definitions.location_groups
                      if g.location_group_type == LocationGroupType.PROCESS}
    c.equal(sorted(g for g in gprops if g not in process_groups or not re.fullmatch(r"rank \d+", g)), [],
            "%s: location group properties on groups other than the PROCESS groups \"rank <N>\"" % what)
    c.equal(sorted(int(g.split()[1]) for g, ps in gprops.items() if re.fullmatch(r"rank \d+", g)
                   and any(k.startswith("TRACER::MPIT::") for k in ps)),
            list(range(case.ranks)), "%s: ranks whose group has TRACER::MPIT::* properties" % what)
    errors, seen = {}, set()
    totals = collections.Counter(sources=0, events=0, dropped=0, order_violations=0)
    for rank in range(case.ranks):
        proc = gprops.get("rank %d" % rank, {}).get("TRACER::PROCESS", "")
        m = re.fullmatch(r"pid (\d+) on (\S+)", proc)
        if not c.check(m, "%s: TRACER::PROCESS of group \"rank %d\" %r" % (what, rank, proc)):
            continue
        pid = int(m.group(1))
        if not c.check(pid in logs, "%s: rank %d is pid %d, no double log of it (%r)"
                       % (what, rank, pid, sorted(logs))):
            continue
        c.check(pid not in seen, "%s: two ranks of pid %d" % (what, pid))
        seen.add(pid)
        raises, drops = logs[pid]
        w = "%s [rank %d, pid %d]" % (what, rank, pid)
        for src, e in check_rank(c, w, case, t, rank, rank_properties(gprops, rank), raises, drops,
                                 totals).items():
            errors[src] = max(errors.get(src, 0), e)
    check_summary(c, what, anchor, t, case.ranks, totals,
                  gprops.get("rank 0", {}).get("TRACER::MPIT::STATUS"))
    return errors


def main():
    for var in ("TEST_MPIT_DOUBLE_LIB", "TEST_BIN"):
        if not os.environ.get(var) or not os.path.exists(os.environ[var]):
            print("SKIP: %s not built (needs MPICH: the MPI_T test double and programs/mpit_events.c)" % var)
            sys.exit(h.SKIP)
    c = h.Checker("mpit_events")
    tmp = tempfile.mkdtemp(prefix="tracer-test-mpit-events-")
    main_case = cases()[0]
    plain = run_program(tmp, "plain", main_case, traced=False)
    c.equal(plain.rc, EXIT_CODE, "without tracer: exit status (stderr: %s)" % plain.stderr[-1500:])
    c.equal(plain.stdout.splitlines(), want_stdout_lines(main_case), "without tracer: stdout")
    summary, max_err = [], {}
    for case in cases():
        before = len(c.failures)
        run = run_program(tmp, case.label, case, traced=True)
        errors = check_case(c, case, run, plain.stdout if case.ranks == 1 and case.scenario == "main" else None)
        for src, e in errors.items():
            max_err[src] = max(max_err.get(src, 0), e)
        summary.append("%-14s %s" % (case.label, "PASS" if len(c.failures) == before
                                     else "FAIL (%d)" % (len(c.failures) - before)))
    if not os.environ.get("TEST_MPIEXEC"):
        c.note("mpiexec.mpich not found (TEST_MPIEXEC unset): the 2-rank case is skipped")
    print("max |trace time - ground truth| over all runs: %s (tolerance %d ns)"
          % (", ".join("source %s %d ns" % (SOURCES[s].name, e) for s, e in sorted(max_err.items())) or "-",
             TOLERANCE_NS))
    print("summary:")
    for line in summary:
        print("  " + line)
    if os.environ.get("TEST_KEEP"):
        print("kept", tmp)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
