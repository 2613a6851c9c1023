#!/usr/bin/python3
"""One OTF2 archive for an MPI job, from its ranks' journals (`tracer
recover D` on D/journals/rank<N>.journal; src/writer/job_convert.c).

No MPI job is run: each "rank" is a separate traced process (the offload
programs basic and threads, the crash program, and - when built - the MPI_T
program against the provider test double), run with TRACER_KEEP_JOURNAL=1.
tests/lib/journal_frames.py then gives each journal what a rank's journal
has: an MPI_RANK frame (rank, size) after START and CLOCK_OFFSET frames (at
"MPI_Init" and "MPI_Finalize") with offsets the test chooses. Ground truth
of a rank is its own archive: the one its process wrote, or `tracer
recover` of its journal alone (the crashed and the cut ones).

  job (every rank complete): exit 0 and the one-line summary (ranks,
      events, host threads, devices); otf2-print and the Python reader read
      it; one location group "rank <N>" (PROCESS) per rank holding that
      rank's host threads, "rank <N> device <d>" (ACCELERATOR, created by
      the rank's group) holding its streams; location ids rank by rank
      (threads, streams, MPI_T sources); per rank and location the same
      events (type, region, count) as its own archive, and their times
      corrected exactly as OTF2 readers apply the offsets written
      (interpolated between, extrapolated outside); ClockOffset
      definitions (otf2-print -C) on every location of a rank = its frames
      (offset, rtt/2), rank 0 with 0; ClockProperties = corrected min/max;
      no string, region or attribute defined twice (by content); one RMA
      window per (rank, device), transfers only on their rank's windows;
      ProgramBegin/End per rank on its host thread 0 with its exit status;
      MPI: COMM_LOCATIONS of the ranks' host thread 0, MPI_COMM_WORLD of
      them in rank order, MPI_COMM_SELF and "communicator 0x<h> (rank N)"
      per the MPI_T registrations of the journal; properties: CONFIG of
      rank 0, FILTERED summed, RUN::END "normal end", JOB::RANKS "n/n",
      MPIT per rank as properties TRACER::MPIT::* of its group "rank <N>"
      (= its own TRACER::MPIT::*), with TRACER::PROCESS ("pid <p> on <h>");
      no TRACER::MPIT::* in the anchor file
  gaps: ranks 2 and 4 of 6 have no journal, rank 5's holds no event,
      rank 1 crashed (SIGSEGV), rank 3's journal is cut in half (its
      "MPI_Finalize" offset is lost: one offset, held to its end): exit 0;
      JOB::RANKS "3/6", MISSING_RANKS "2,4-5", RUN::END names ranks 1, 3
      and 5; each rank's events = its own recovered archive's, the cut
      rank's a prefix of the complete run's
  errors (exit 1, one tracer: line naming the journals, nothing written):
      two journals of one rank; a journal without an MPI_RANK frame;
      journals of jobs of different sizes
  --force: a second recover refuses (exit 1), --force replaces the archive
"""
import collections
import glob
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import cfgtest  # noqa: E402
import journal_frames as jf  # noqa: E402
from otf2_trace import group_properties  # noqa: E402
import otf2  # noqa: E402
from otf2.enums import LocationGroupType, LocationType, GroupType, Paradigm  # noqa: E402

SECOND = 1000000000
CRASH_MARKS = 5000
MPIT_SCRIPT = ("@tinit;weird:1;@init;unordered_burst:5;released:3:300;drain;"
               "@finalize;weird:9;released:1:10;drop:ompi.mca.memory.patcher.released:4")

# A source journal of a rank: where it came from, its archive (ground truth).
Source = collections.namedtuple("Source", "name journal archive exit_status")


def tracer_lines(p):
    return [ln for ln in p.stderr.decode(errors="replace").splitlines() if ln.startswith("tracer:")]


def recover(dir_, *opts):
    return subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover"] + list(opts) + [dir_],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=h.base_env(), timeout=300)


def no_sanitizer(c, what, p):
    err = p.stderr.decode(errors="replace")
    for marker in h.SANITIZER_MARKERS:
        c.check(marker not in err, "%s: sanitizer output %r" % (what, marker))


def recover_alone(c, tmp, label, data):
    """The archive `tracer recover` writes from the journal @data alone."""
    d = os.path.join(tmp, "alone-" + label)
    os.makedirs(d)
    with open(os.path.join(d, "tracer.journal"), "wb") as f:
        f.write(data)
    p = recover(d)
    no_sanitizer(c, "recover %s alone" % label, p)
    c.equal(p.returncode, 0, "recover %s alone: exit code (%r)" % (label, p.stderr))
    return os.path.join(d, "traces.otf2")


# --- making the ranks' source journals ------------------------------------------

def run_offload(c, tmp, name, bin_env):
    out = os.path.join(tmp, "run-" + name)
    p = h.run([h.env_path(bin_env)], tmp, traced=True, output=out, extra_env={"TRACER_KEEP_JOURNAL": "1"})
    no_sanitizer(c, "run " + name, p)
    c.equal(p.returncode, 0, "run %s: exit code (%r)" % (name, p.stderr[-2000:]))
    return Source(name, os.path.join(out, "tracer.journal"), os.path.join(out, "traces.otf2"), 0)


def run_crash(c, tmp):
    out = os.path.join(tmp, "run-crash")
    # CLOCK_MONOTONIC stamps: the journal cut below loses its last TSC
    # calibration pair, and each conversion would calibrate it anew.
    # The sanitizers leave the signal to tracer's handler (as in test_crash).
    no_san = "handle_segv=0:handle_abort=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0"
    p = h.run([h.env_path("TEST_CRASH_BIN"), "segv", str(CRASH_MARKS)], tmp, traced=True, output=out,
              extra_env={"TRACER_CLOCK": "monotonic",
                         "ASAN_OPTIONS": "detect_leaks=0:verify_asan_link_order=0:" + no_san,
                         "UBSAN_OPTIONS": "print_stacktrace=1:" + no_san,
                         "TSAN_OPTIONS": (os.environ.get("TSAN_OPTIONS", "") + ":" + no_san).lstrip(":")})
    no_sanitizer(c, "run crash", p)
    c.check(p.returncode == -11, "run crash: died of SIGSEGV (rc %r)" % p.returncode)
    return Source("crash", os.path.join(out, "tracer.journal"), None, None)


def strip_job_frames(data):
    """The journal without MPI_RANK / CLOCK_OFFSET frames (a real MPI run
    has its own; the test gives it the rank it wants)."""
    return b"".join(data[f.offset:f.end] for f in jf.parse(data)
                    if f.type not in (jf.MPI_RANK, jf.CLOCK_OFFSET))


def run_mpit(c, tmp):
    """programs/mpit_events.c against the MPI_T test double, as a singleton:
    its journal (wherever the live side left it) without its job frames."""
    out = os.path.join(tmp, "run-mpit")
    env = {"LD_PRELOAD": None, "TRACER_KEEP_JOURNAL": "1", "MPIT_DOUBLE_SCRIPT": MPIT_SCRIPT,
           "MPIT_DOUBLE_LOG": os.path.join(tmp, "double.%p.log")}
    san = [p for p in re.split(r"[:\s]+", os.environ.get("TEST_SANITIZER_PRELOAD", "")) if p]
    env["LD_PRELOAD"] = ":".join(san + [h.env_path("TEST_TRACER_LIB"), h.env_path("TEST_MPIT_DOUBLE_LIB")])
    penv = h.base_env()
    penv.update(env)
    penv["TRACER_OUTPUT"] = out
    p = subprocess.run([h.env_path("TEST_MPIT_BIN"), "main", "0"], cwd=tmp, env=penv, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=150)
    no_sanitizer(c, "run mpit", p)
    found = sorted(glob.glob(out + "*/tracer.journal") + glob.glob(out + "*/journals/rank*.journal"))
    if not c.check(len(found) == 1, "run mpit: one journal expected, found %r (rc %r, stderr %r)"
                   % (found, p.returncode, p.stderr[-2000:])):
        return None
    with open(found[0], "rb") as f:
        data = strip_job_frames(f.read())
    path = os.path.join(tmp, "mpit.journal")
    with open(path, "wb") as f:
        f.write(data)
    return Source("mpit", path, recover_alone(c, tmp, "mpit", data), 5)


# --- a rank's journal ---------------------------------------------------------------

class Rank:
    """Source journal + the frames the test gives it. offsets: [(local_ns,
    offset_ns, rtt_ns, when)]; cut: keep that fraction of the bytes."""

    def __init__(self, rank, size, src, offsets, cut=None, only_meta=False):
        self.rank, self.size, self.src, self.offsets, self.cut = rank, size, src, offsets, cut
        with open(src.journal, "rb") as f:
            data = f.read()
        init = [o for o in offsets if o[3] == jf.WHEN_INIT]
        fini = [o for o in offsets if o[3] != jf.WHEN_INIT]
        data = jf.insert_after_first(data, jf.mpi_rank(rank, size) +
                                     b"".join(jf.clock_offset(*o) for o in init))
        data += b"".join(jf.clock_offset(*o) for o in fini)
        if only_meta:
            data = b"".join(data[f.offset:f.end] for f in jf.parse(data)
                            if f.type in (jf.START, jf.MPI_RANK, jf.CLOCK_OFFSET))
        if cut is not None:
            data = data[:int(len(data) * cut)]
        self.data = data

    def write(self, d, name=None):
        os.makedirs(os.path.join(d, "journals"), exist_ok=True)
        with open(os.path.join(d, "journals", name or "rank%d.journal" % self.rank), "wb") as f:
            f.write(self.data)


def span(trace):
    cp = trace.clock_properties
    return cp.global_offset, cp.global_offset + cp.trace_length


def offsets_for(rank, trace, with_finalize=True, at_start=False):
    """Offsets measured a quarter into the run and three quarters into it,
    so the reader interpolates between them and extrapolates on both sides
    (@at_start: the first at the run's first stamp)."""
    t0, t1 = span(trace)
    a, b = t0 + (t1 - t0) // 4, t0 + 3 * (t1 - t0) // 4
    if at_start:
        a = t0
    if rank == 0:
        return [(a, 0, 0, jf.WHEN_INIT), (b, 0, 0, jf.WHEN_FINALIZE)]
    base = rank * SECOND + 1234 * rank if rank % 2 else -(SECOND // 2) - 977 * rank
    drift = 3000 * rank if rank % 2 else -7000 * rank
    out = [(a, base, 2000 + rank, jf.WHEN_INIT)]
    if with_finalize:
        out.append((b, base + drift, 3000 + rank, jf.WHEN_FINALIZE))
    return out


def clock_points(rank, offsets, t_max):
    """The ClockOffset definitions the writer must write (and readers use)."""
    pts = sorted((o[0], 0 if rank == 0 else o[1], o[2] / 2.0) for o in offsets)
    if len(pts) == 1:
        pts.append((t_max if t_max > pts[0][0] else pts[0][0] + 1, pts[0][1], pts[0][2]))
    return pts


def correct(points, t):
    """OTF2's otf2_evt_reader_apply_clock_correction over @points."""
    if len(points) < 2:
        return t
    i = 0
    while i + 2 < len(points) and t > points[i + 1][0]:
        i += 1
    (ta, oa, _), (tb, ob, _) = points[i], points[i + 1]
    slope = float(ob - oa) / float(tb - ta)
    diff = float(t - ta) if t >= ta else -float(ta - t)
    return t + oa + int(round(slope * diff))


# --- reading the archive ----------------------------------------------------------------

def rank_of_group(name):
    m = re.fullmatch(r"rank (\d+)(?: device \d+)?", name)
    return int(m.group(1)) if m else None


def per_location(t):
    """{location name: [(event type, region canonical name or None, time)]}"""
    out = {}
    for loc in t.locations:
        seq = []
        for ev in t.events.get(loc, []):
            region = getattr(ev, "region", None)
            seq.append((type(ev).__name__, region.canonical_name if region is not None else None, ev.time))
        out[loc.name] = seq
    return out


def clock_offset_defs(c, anchor):
    """{location id: [(time, offset, stddev)]} from otf2-print -C."""
    p = subprocess.run([h.otf2_print_cmd(), "-C", anchor], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    c.equal(p.returncode, 0, "otf2-print -C exit code")
    out = collections.defaultdict(list)
    for line in p.stdout.decode().splitlines():
        m = re.match(r"CLOCK_OFFSET\s+(\d+)\s+Time: (\d+), Offset: ([+-]?\d+), StdDev: ([0-9.e+-]+)", line)
        if m:
            out[int(m.group(1))].append((int(m.group(2)), int(m.group(3)), float(m.group(4))))
    return out


def global_def_lines(c, anchor, kind):
    p = subprocess.run([h.otf2_print_cmd(), "-G", anchor], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    c.equal(p.returncode, 0, "otf2-print -G exit code")
    return [ln for ln in p.stdout.decode(errors="replace").splitlines() if ln.startswith(kind + " ")]


def mpit_regs(data):
    """[(bound, object, object_name)] of the journal's MPIT REG frames."""
    out = []
    for f in jf.parse(data, cut_ok=True):
        if f.type != jf.MPIT or len(f.payload) < 8 + 88:
            continue
        kind, = struct.unpack_from("<I", f.payload, 0)
        if kind != 4:
            continue
        _id, _type, bound, _pad, obj = struct.unpack_from("<IIiIQ", f.payload, 8)
        name = f.payload[8 + 24:8 + 24 + 64].split(b"\0")[0].decode()
        out.append((bound, obj, name))
    return out


# --- the checks ------------------------------------------------------------------------------

def equal_seq(c, got, want, what):
    """Lists equal; else says where they first differ."""
    if got == want:
        return True
    i = next((k for k, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
    return c.check(False, "%s: %d vs %d items, first difference at %d: got %r, want %r"
                   % (what, len(got), len(want), i, got[i:i + 3], want[i:i + 3]))


def check_rank_events(c, what, ranks, truth, job, clocks):
    """Per rank and location: same events as its own archive, times corrected."""
    by_rank = collections.defaultdict(dict)
    for loc in job.locations:
        by_rank[rank_of_group(loc.group.name)][loc.name] = loc
    for rk in ranks:
        want = per_location(truth[rk.rank])
        got_locs = by_rank.get(rk.rank, {})
        c.equal(sorted(got_locs), sorted(want), "%s: rank %d location names" % (what, rk.rank))
        for name, wseq in want.items():
            loc = got_locs.get(name)
            if loc is None:
                continue
            gseq = [(type(ev).__name__, getattr(ev, "region", None) and ev.region.canonical_name, ev.time)
                    for ev in job.events.get(loc, [])]
            c.equal(len(gseq), len(wseq), "%s: rank %d %s: number of events" % (what, rk.rank, name))
            equal_seq(c, [g[:2] for g in gseq], [w[:2] for w in wseq],
                      "%s: rank %d %s: event types and regions" % (what, rk.rank, name))
            wt = [correct(clocks[rk.rank], w[2]) for w in wseq]
            equal_seq(c, [g[2] for g in gseq], wt, "%s: rank %d %s: times (corrected by the offsets)"
                      % (what, rk.rank, name))
            c.equal(loc.number_of_events, len(wseq), "%s: rank %d %s: Location's event count"
                    % (what, rk.rank, name))


def check_groups_and_ids(c, what, ranks, job, host):
    groups = {g.name: g for g in job.definitions.location_groups}
    present = [rk.rank for rk in ranks]
    procs = [g for g in job.definitions.location_groups if g.location_group_type == LocationGroupType.PROCESS]
    c.equal([g.name for g in procs], ["rank %d" % r for r in present], "%s: process location groups" % what)
    for g in job.definitions.location_groups:
        c.equal(g.system_tree_parent.name, host, "%s: system tree parent of %s" % (what, g.name))
        if g.location_group_type == LocationGroupType.ACCELERATOR:
            r = rank_of_group(g.name)
            c.check(re.fullmatch(r"rank \d+ device \d+", g.name), "%s: device group name %r" % (what, g.name))
            c.equal(g.creating_location_group, groups.get("rank %d" % r),
                    "%s: creating group of %s" % (what, g.name))
    nodes = list(job.definitions.system_tree_nodes)
    c.equal([(n.name, n.class_name) for n in nodes], [("machine", "machine"), (host, "node")],
            "%s: system tree" % what)
    # ids rank by rank; within a rank threads, then streams, then MPI_T sources
    order = {"host": 0, "stream": 1, "mpit": 2}
    last = (-1, -1)
    for loc in sorted(job.locations, key=lambda l: l._ref):
        r = rank_of_group(loc.group.name)
        kind = ("stream" if loc.type == LocationType.ACCELERATOR_STREAM
                else "mpit" if loc.name.startswith("MPI_T source") else "host")
        if r is None:
            c.check(False, "%s: location %s in group %r" % (what, loc.name, loc.group.name))
            continue
        if loc.type == LocationType.ACCELERATOR_STREAM:
            c.check(loc.group.name.startswith("rank %d device " % r), "%s: stream %s in %s"
                    % (what, loc.name, loc.group.name))
        else:
            c.equal(loc.group.name, "rank %d" % r, "%s: group of %s" % (what, loc.name))
        key = (present.index(r) if r in present else -1, order[kind])
        c.check(key >= last, "%s: location id %d (%s of rank %d) out of rank/kind order"
                % (what, loc._ref, loc.name, r))
        last = key
    c.equal(sorted(l._ref for l in job.locations), list(range(len(job.locations))), "%s: location ids" % what)


def check_no_duplicate_definitions(c, what, job, anchor):
    strings = []
    for ln in global_def_lines(c, anchor, "STRING"):
        m = re.match(r'STRING\s+\d+\s+"(.*)"$', ln)
        if m:
            strings.append(m.group(1))
    dup = [s for s, n in collections.Counter(strings).items() if n > 1]
    c.check(strings and not dup, "%s: strings defined more than once: %r" % (what, dup[:5]))
    regions = collections.Counter((r.name, r.canonical_name, r.description, r.region_role, r.paradigm,
                                   r.source_file, r.begin_line_number, r.end_line_number) for r in job.regions)
    dup = [k[1] for k, n in regions.items() if n > 1]
    c.check(not dup, "%s: regions defined more than once: %r" % (what, dup[:5]))
    attrs = collections.Counter((a.name, a.description, a.type) for a in job.attributes)
    dup = [k[0] for k, n in attrs.items() if n > 1]
    c.check(not dup, "%s: attributes defined more than once: %r" % (what, dup[:5]))


def check_clock(c, what, ranks, job, anchor, clocks):
    defs = clock_offset_defs(c, anchor)
    for loc in job.locations:
        r = rank_of_group(loc.group.name)
        if r in clocks:
            c.equal(defs.get(loc._ref, []), clocks[r], "%s: ClockOffsets of %s (rank %d)" % (what, loc.name, r))
    times = [ev.time for _, ev in job.all_events()]
    cp = job.clock_properties
    c.equal(cp.global_offset, min(times), "%s: ClockProperties global offset = earliest corrected time" % what)
    c.equal(cp.trace_length, max(times) - min(times), "%s: ClockProperties trace length" % what)


def check_program_events(c, what, ranks, truth, job):
    pb = job.events_of(otf2.events.ProgramBegin)
    pe = job.events_of(otf2.events.ProgramEnd)
    c.equal(sorted(rank_of_group(l.group.name) for l, _ in pb), [rk.rank for rk in ranks],
            "%s: ranks with a ProgramBegin" % what)
    c.equal(sorted(rank_of_group(l.group.name) for l, _ in pe), [rk.rank for rk in ranks],
            "%s: ranks with a ProgramEnd" % what)
    for loc, ev in pb + pe:
        c.equal(loc.name, "host thread 0", "%s: %s on" % (what, type(ev).__name__))
    for loc, ev in pe:
        r = rank_of_group(loc.group.name)
        want = [e.exit_status for _, e in truth[r].events_of(otf2.events.ProgramEnd)]
        c.equal([ev.exit_status], want, "%s: rank %d ProgramEnd exit status" % (what, r))


def check_rma(c, what, ranks, truth, job):
    names = [w.name for w in job.rma_wins]
    c.equal(len(names), len(set(names)), "%s: RMA window names unique" % what)
    for rk in ranks:
        want = sum(1 for w in truth[rk.rank].rma_wins)
        got = [n for n in names if n.startswith("rank %d device " % rk.rank)]
        c.equal(len(got), want, "%s: rank %d: RMA windows" % (what, rk.rank))
        c.equal(len([t for t in job.transfers() if rank_of_group(t.location.group.name) == rk.rank]),
                len(truth[rk.rank].transfers()), "%s: rank %d: transfers" % (what, rk.rank))
    for t in job.transfers():
        r = rank_of_group(t.location.group.name)
        c.check(t.win.name.startswith("rank %d device " % r), "%s: a transfer of rank %d on window %r"
                % (what, r, t.win.name))
        c.check(t.remote_location is not None and rank_of_group(t.remote_location.group.name) == r,
                "%s: a transfer of rank %d to a location of another rank" % (what, r))


def check_mpi_comms(c, what, ranks, job):
    host0 = {}
    for loc in job.locations:
        if loc.name == "host thread 0":
            host0[rank_of_group(loc.group.name)] = loc
    comms = {}
    for cm in job.definitions.comms:
        comms.setdefault(cm.name, []).append(cm)
    world = comms.get("MPI_COMM_WORLD", [])
    if c.equal(len(world), 1, "%s: MPI_COMM_WORLD comms" % what):
        g = world[0].group
        c.equal((g.group_type, g.paradigm), (GroupType.COMM_GROUP, Paradigm.MPI), "%s: MPI_COMM_WORLD group" % what)
        c.equal([m._ref for m in g.members], [host0[rk.rank]._ref for rk in ranks],
                "%s: MPI_COMM_WORLD members (each rank's host thread 0, in rank order)" % what)
    locs = [g for g in job.definitions.groups
            if g.group_type == GroupType.COMM_LOCATIONS and g.paradigm == Paradigm.MPI]
    if c.equal(len(locs), 1, "%s: MPI COMM_LOCATIONS groups" % what):
        c.equal([m._ref for m in locs[0].members], [host0[rk.rank]._ref for rk in ranks],
                "%s: MPI COMM_LOCATIONS members" % what)
    want_self, want_other = [], []
    for rk in ranks:
        regs = mpit_regs(rk.data)
        if any(b and n == "MPI_COMM_SELF" for b, _, n in regs):
            want_self.append(rk.rank)
        for o in sorted({o for b, o, n in regs if b and n not in ("MPI_COMM_SELF", "MPI_COMM_WORLD")}):
            want_other.append(("communicator 0x%x (rank %d)" % (o, rk.rank), rk.rank))
    got_self = sorted(rank_of_group(cm.group.members[0].group.name) for cm in comms.get("MPI_COMM_SELF", [])
                      if len(cm.group.members) == 1)
    c.equal(got_self, want_self, "%s: ranks with an MPI_COMM_SELF comm" % what)
    c.equal(len(comms.get("MPI_COMM_SELF", [])), len(want_self), "%s: MPI_COMM_SELF comms" % what)
    for name, r in want_other:
        got = comms.get(name, [])
        if c.equal(len(got), 1, "%s: comm %r" % (what, name)):
            c.equal([m._ref for m in got[0].group.members], [host0[r]._ref], "%s: members of %r" % (what, name))
    others = [n for n in comms if n.startswith("communicator ")]
    c.equal(sorted(others), sorted(n for n, _ in want_other), "%s: communicator comms" % what)


def check_properties(c, what, props, ranks, truth, size, want_end, want_missing, job):
    own0 = cfgtest.properties(c, truth[ranks[0].rank].path, "rank %d alone" % ranks[0].rank)
    cfg = {k: v for k, v in props.items() if k.startswith("TRACER::CONFIG::")}
    c.equal(cfg, {k: v for k, v in own0.items() if k.startswith("TRACER::CONFIG::")},
            "%s: TRACER::CONFIG::* = rank %d's" % (what, ranks[0].rank))
    c.equal(props.get("TRACER::RUN::END"), want_end, "%s: TRACER::RUN::END" % what)
    c.equal(props.get("TRACER::JOB::RANKS"), "%d/%d" % (len(ranks), size), "%s: TRACER::JOB::RANKS" % what)
    c.equal(props.get("TRACER::JOB::MISSING_RANKS"), want_missing, "%s: TRACER::JOB::MISSING_RANKS" % what)
    groups = group_properties(job)
    sums = collections.Counter()
    for rk in ranks:
        own = cfgtest.properties(c, truth[rk.rank].path, "rank %d alone" % rk.rank)
        for d in ("TO_DEVICE", "FROM_DEVICE"):
            m = re.fullmatch(r"(\d+) transfers, (\d+) bytes", own.get("TRACER::FILTERED::SMALL_TRANSFERS_" + d, ""))
            if c.check(m, "%s: rank %d alone: FILTERED %s" % (what, rk.rank, d)):
                sums[d, 0] += int(m.group(1))
                sums[d, 1] += int(m.group(2))
        mpit = {k: v for k, v in own.items() if k.startswith("TRACER::MPIT::")}
        gp = groups.get("rank %d" % rk.rank, {})
        got = {k: v for k, v in gp.items() if k != "TRACER::PROCESS"}
        c.equal(got, mpit, "%s: properties of group 'rank %d' = the rank's own TRACER::MPIT::*" % (what, rk.rank))
        alone = truth[rk.rank]
        pid = [g.name for g in alone.definitions.location_groups if g.location_group_type == LocationGroupType.PROCESS]
        c.equal(gp.get("TRACER::PROCESS", "").split(" on ")[0], pid[0].replace("process ", "pid ") if pid else None,
                "%s: TRACER::PROCESS of group 'rank %d' names its pid" % (what, rk.rank))
    c.equal(sorted(groups), sorted("rank %d" % rk.rank for rk in ranks if truth[rk.rank].events),
            "%s: groups with properties (the ranks with events)" % what)
    for d in ("TO_DEVICE", "FROM_DEVICE"):
        c.equal(props.get("TRACER::FILTERED::SMALL_TRANSFERS_" + d),
                "%d transfers, %d bytes" % (sums[d, 0], sums[d, 1]), "%s: FILTERED %s summed" % (what, d))
    bare = [k for k in props if k.startswith("TRACER::MPIT::") or re.match(r"TRACER::JOB::RANK\d", k)]
    c.check(not bare, "%s: per-rank properties in the anchor file: %r" % (what, bare[:3]))


def check_job(c, tmp, what, d, ranks, truth, size, want_end, want_missing):
    """Recover D and check the archive against every rank's own."""
    p = recover(d)
    no_sanitizer(c, what + ": recover", p)
    if not c.equal(p.returncode, 0, "%s: recover exit code (stderr %r)" % (what, p.stderr.decode(errors="replace"))):
        return None
    anchor = os.path.join(d, "traces.otf2")
    job = h.open_checked_trace(c, what, anchor)
    if job is None:
        return None
    host = job.definitions.system_tree_nodes[1].name if len(job.definitions.system_tree_nodes) > 1 else None
    events = sum(len(evs) for t in truth.values() for evs in t.events.values())
    threads = sum(1 for t in truth.values() for l in t.cpu_threads() if l.name.startswith("host thread "))
    devices = sum(1 for t in truth.values() for g in t.definitions.location_groups
                  if g.location_group_type == LocationGroupType.ACCELERATOR)
    how = "every rank ended normally" if want_end == "normal end" else want_end
    line = "recovered %s/traces.otf2: %d of %d ranks, %d events of %d host threads and %d devices (%s%s)\n" % (
        d, len(ranks), size, events, threads, devices, how,
        "; missing: ranks %s" % want_missing if want_missing else "")
    c.equal(p.stdout.decode(), line, "%s: recover's line" % what)
    clocks = {rk.rank: clock_points(rk.rank, rk.offsets, span(truth[rk.rank])[1]) for rk in ranks}
    check_rank_events(c, what, ranks, truth, job, clocks)
    check_groups_and_ids(c, what, ranks, job, host)
    check_no_duplicate_definitions(c, what, job, anchor)
    check_clock(c, what, ranks, job, anchor, clocks)
    check_program_events(c, what, ranks, truth, job)
    check_rma(c, what, ranks, truth, job)
    check_mpi_comms(c, what, ranks, job)
    check_properties(c, what, cfgtest.properties(c, anchor, what), ranks, truth, size, want_end, want_missing, job)
    return job


def check_refused(c, tmp, what, ranks_and_names, want_in_line):
    d = os.path.join(tmp, what.replace(" ", "-"))
    for rk, name in ranks_and_names:
        rk.write(d, name)
    p = recover(d)
    no_sanitizer(c, what, p)
    c.equal(p.returncode, 1, "%s: recover exit code" % what)
    lines = tracer_lines(p)
    if c.equal(len(lines), 1, "%s: one tracer: line (%r)" % (what, p.stderr.decode(errors="replace"))):
        for s in want_in_line:
            c.check(s in lines[0], "%s: the line %r does not say %r" % (what, lines[0], s))
    c.equal(p.stdout, b"", "%s: stdout" % what)
    c.equal(sorted(os.listdir(d)), ["journals"], "%s: recover wrote files" % what)


def main():
    c = h.Checker("job_merge")
    for var in ("TEST_BIN", "TEST_THREADS_BIN", "TEST_CRASH_BIN", "TEST_TRACER_CLI", "TEST_TRACER_LIB"):
        h.env_path(var)
    tmp = tempfile.mkdtemp(prefix="tracer-test-job-merge-")
    try:
        basic = [run_offload(c, tmp, "basic%d" % i, "TEST_BIN") for i in range(2)]
        threads = [run_offload(c, tmp, "threads%d" % i, "TEST_THREADS_BIN") for i in range(2)]
        crash = run_crash(c, tmp)
        mpit = run_mpit(c, tmp) if os.environ.get("TEST_MPIT_BIN") else None
        if c.failures:
            c.finish()
        own = {s.name: h.Trace(s.archive) for s in basic + threads + ([mpit] if mpit else [])}

        # job: every rank complete
        srcs = [basic[0], threads[0], basic[1], threads[1]] + ([mpit, mpit] if mpit else [])
        size = len(srcs)
        ranks = [Rank(r, size, s, offsets_for(r, own[s.name])) for r, s in enumerate(srcs)]
        d = os.path.join(tmp, "job")
        for rk in reversed(ranks):
            rk.write(d)
        truth = {rk.rank: own[rk.src.name] for rk in ranks}
        job = check_job(c, tmp, "job", d, ranks, truth, size, "normal end", None)

        # --force
        if job is not None:
            p = recover(d)
            c.equal(p.returncode, 1, "job: second recover exit code")
            c.check(len(tracer_lines(p)) == 1 and "--force" in tracer_lines(p)[0],
                    "job: second recover's line (%r)" % p.stderr)
            p = recover(d, "--force")
            c.equal(p.returncode, 0, "job: recover --force exit code (%r)" % p.stderr)
            c.check(p.stdout.decode().startswith("recovered %s/traces.otf2: %d of %d ranks" % (d, size, size)),
                    "job: recover --force line %r" % p.stdout)
            h.open_checked_trace(c, "job after --force", os.path.join(d, "traces.otf2"))

        # gaps: missing ranks, a crashed one, a cut one, one without events
        crash_alone = h.Trace(recover_alone(c, tmp, "crash", open(crash.journal, "rb").read()))
        r0 = Rank(0, 6, basic[0], offsets_for(0, own[basic[0].name]))
        r1 = Rank(1, 6, crash, offsets_for(1, crash_alone))
        r3 = Rank(3, 6, crash, offsets_for(3, crash_alone, with_finalize=False, at_start=True), cut=0.5)
        r5 = Rank(5, 6, basic[1], offsets_for(5, own[basic[1].name]), only_meta=True)
        gaps = [r0, r1, r3]
        d = os.path.join(tmp, "gaps")
        for rk in gaps + [r5]:
            rk.write(d)
        truth = {0: own[basic[0].name], 1: h.Trace(recover_alone(c, tmp, "r1", r1.data)),
                 3: h.Trace(recover_alone(c, tmp, "r3", r3.data))}
        c.check(0 < len(list(truth[3].all_events())) < len(list(crash_alone.all_events())),
                "gaps: the cut journal holds some of the events")
        # the cut rank's Enters are a prefix of the complete run's (its
        # Leaves may be the ones tracer closes at the end)
        full, cut = per_location(crash_alone), per_location(truth[3])
        for name, seq in cut.items():
            enters = [e[1] for e in seq if e[0] == "Enter"]
            c.check([e[1] for e in full.get(name, []) if e[0] == "Enter"][:len(enters)] == enters,
                    "gaps: the cut rank's %s is not a prefix of the complete run's" % name)
        check_job(c, tmp, "gaps", d, gaps, truth, 6,
                  "rank 1: crashed (signal 11); rank 3: recovered; rank 5: recovered, no events", "2,4-5")

        # refused
        a = Rank(0, 3, basic[0], offsets_for(0, own[basic[0].name]))
        b = Rank(1, 3, threads[0], offsets_for(1, own[threads[0].name]))
        b2 = Rank(1, 3, basic[1], offsets_for(1, own[basic[1].name]))
        check_refused(c, tmp, "duplicate rank", [(a, None), (b, None), (b2, "rank2.journal")],
                      ["rank1.journal", "rank2.journal", "both rank 1"])
        plain = Rank(1, 3, basic[1], [])
        plain.data = open(basic[1].journal, "rb").read()
        check_refused(c, tmp, "no rank", [(a, None), (plain, None)], ["rank1.journal", "no MPI rank"])
        other = Rank(1, 4, threads[0], offsets_for(1, own[threads[0].name]))
        check_refused(c, tmp, "two jobs", [(a, None), (other, None)], ["not of one job"])
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
