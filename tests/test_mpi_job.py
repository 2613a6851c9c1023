#!/usr/bin/python3
"""One trace per MPI job (issue 7): programs/mpit_offload.c under real MPICH
4.0.2 (mpiexec.mpich, HYDRA_LAUNCHER=fork), traced.

Ground truth per rank r (LLVM 19 host offload, device 0; NA = 1000 + 256 r
doubles, NX = 128 (r + 1), REPS = r + 2; see programs/mpit_offload.c):
  target #1          alloc a, alloc b (NA*8 each), to a (NA*8), kernel,
                     from b (NA*8), delete a, b
  REPS x target #2   alloc x (NX*8), to x (NX*8), kernel, from x (NX*8), delete x
  MPI_Allreduce, MPI_Finalize; exit status 4.

Cases (TRACER_OUTPUT = D in a fresh directory each):
 1. `mpiexec -n 4 env LD_PRELOAD=<lib> mpit_offload` and
    `LD_PRELOAD=<lib> mpiexec -n 4 mpit_offload`: exit status and stdout as
    without tracer, nothing on stderr, no sanitizer report; the run's
    directory holds exactly one archive, D/traces.otf2 (+ traces.def and
    traces/ of *.evt / *.def files only): no D.rank<N>, no D/journals, no
    journal, nothing in the cwd. otf2-print and the Python reader read it
    (timestamps per location do not go back, regions nest). Its content:
    - location groups "rank 0".."rank 3" (PROCESS), each below a system tree
      node named after this host, each with exactly one "host thread 0";
      device groups "rank <r> device <d>" (ACCELERATOR) holding that rank's
      "device <d> stream" locations; location ids unique, (group, name)
      unique; no MPI_T source location (MPICH has none);
    - per rank (its "rank r" and "rank r device d" groups only): the
      construct / data-op / kernel counts, bytes per direction (Enter
      attributes and RmaPut/RmaGet), kernel names in execution order,
      device_memory_in_use, attribute and RMA contracts of the ground truth
      above; MPI_Init and MPI_Finalize once each on host thread 0 (MPI_Init
      ends before the first target begins, MPI_Finalize begins after the
      last ends); one ProgramBegin and one ProgramEnd on host thread 0;
    - global definitions without duplicates: strings by content, regions by
      (name, canonical name, role, paradigm), attributes by name, location
      groups by name, system tree nodes by (name, class, parent), locations
      by (group, name) and id, comms by (name, members), RMA windows by
      (name, comm);
    - comm "MPI_COMM_WORLD": its members are each rank's host thread 0 in
      rank order;
    - the job's archive is written at exit by the last rank out
      (TRACER_JOB_WRITE=exit, the default): MPI_Finalize's Leave is
      complete, ProgramEnd has the exit status 4, and every device location
      has its "device finalize" (the OpenMP runtime's, at exit);
    - ClockOffset local definitions, read through the OTF2 C API binding
      (_otf2.DefReaderCallbacks_SetClockOffsetCallback: the `otf2` module's
      reader reads them but does not keep them) and cross-checked against
      `otf2-print -C`: every location has two (MPI_Init, MPI_Finalize or
      the rank's end), at increasing times, the same for all locations of a
      rank; rank 0's are (0, 0); on this single node every rank shares rank
      0's CLOCK_MONOTONIC, which rank 0 read inside the round trip, so
      |offset| <= stddev (= rtt/2) + 1 ns; |offset| < 1 ms is checked when
      there are 2 CPUs per rank (with fewer, waiting ranks spin and round
      trips take milliseconds: a NOTE says so);
    - per rank, the properties of its location group "rank <r>": exactly
      TRACER::PROCESS and TRACER::MPIT::STATUS, saying MPICH (its version
      line as the program printed it) has no MPI_T sources; the anchor file
      has no TRACER::MPIT::* (a rank's own properties are not job-wide);
    - archive property TRACER::JOB::RANKS = "4/4", no
      TRACER::JOB::MISSING_RANKS, TRACER::RUN::END = "normal end".
 1c. TRACER_JOB_WRITE=finalize (4 ranks): the same, except that the ranks
    write the archive together inside MPI_Finalize: MPI_Finalize's Leave is
    incomplete=1, ProgramEnd's exit status undefined, no "device finalize";
    stderr still empty (what comes after is documented, not reported).
 2. 16 ranks on this small machine (oversubscribed): exit status and stdout
    as without tracer, one archive, 16 "rank <r>" groups, each rank's
    target / kernel / data-op counts and bytes per direction.
 3. `LD_PRELOAD=<lib> mpiexec -n 2 /bin/true`: nothing is written anywhere
    (the run's directory holds only the empty cwd), stderr empty.
 4. TRACER_WRITE_AT_END=0 (4 ranks): D/journals/rank0..3.journal stay and
    the run writes no archive (at most the empty claim D/traces.otf2);
    `tracer recover D` then writes D/traces.otf2, valid, with every rank's
    counts and bytes equal to case 1's archive and to the ground truth.
 5. TEST_ABORT_RANK=2 (4 ranks, TRACER_FLUSH_INTERVAL=50ms): every rank does
    its offload work, rank 2 calls MPI_Abort 0.5 s later, the others wait in
    MPI_Barrier and are killed by mpiexec. Exit status as without tracer;
    the journals stay in D/journals; `tracer recover D` writes a valid
    archive with all 4 ranks, each holding its complete offload ground truth
    (every rank's work was over 10 flush intervals before the abort) and
    MPI_Init but no MPI_Finalize; TRACER::JOB::RANKS = "4/4";
    TRACER::RUN::END says "rank <r>: recovered" for the killed ranks 0, 1, 3
    and "rank 2: ended in MPI_Abort(5)" (tracer's MPI_Abort saves its
    journal before the real one runs).
 5b. TEST_KILL_AFTER_FINALIZE=3 (4 ranks, TRACER_FLUSH_INTERVAL=50ms): rank
    3 kills itself (SIGKILL) 0.3 s after MPI_Finalize returned, so no rank
    is the last to exit: exit status and stdout as without tracer, no
    tracer: line, no archive (at most the empty claim), every journal stays;
    `tracer recover D` writes a valid archive with all 4 ranks, each with
    its offload counts, TRACER::RUN::END saying "rank 3: recovered", and
    removes the journals/.exit-<k> marks the other ranks left.
 6. A singleton (no mpiexec): its archive is exactly TRACER_OUTPUT (not
    TRACER_OUTPUT.1), nothing on stderr, one "rank 0" group, rank 0's ground
    truth, TRACER::JOB::RANKS = "1/1".
 7. TEST_NO_MPI=1 under `mpiexec -n 2` (the program never calls MPI): each
    process keeps its own archive in D.rank<N> (nothing in D, nothing else),
    group "process <pid>", rank N's ground truth, no TRACER::JOB::
    property, no MPI region, ProgramEnd status 4, nothing on stderr.
A NOTE lists the time of every run.
"""
import collections
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
from mpit_offload_truth import (EXIT, check_plain, local_sum, reps, tree, want_counts,  # noqa: E402
                                want_data_ops, want_transfers)
import cfgtest as ct  # noqa: E402
from otf2_trace import RankView, group_properties  # noqa: E402
import otf2  # noqa: E402
import _otf2  # noqa: E402
from otf2.enums import GroupType, LocationGroupType, LocationType, Paradigm, RegionRole  # noqa: E402

ABORT_RANK = 2
KILL_RANK = 3
ABORT_CODE = 5
FLUSH_MS = 50
A = h.Trace.attr


# ---------------------------------------------------------------------------
# running

class Run:
    def __init__(self, what, top, cwd, output, proc, seconds):
        self.what = what
        self.top = top              # the run's own directory: cwd/ and out*
        self.cwd = cwd
        self.output = output        # TRACER_OUTPUT
        self.rc = proc.returncode if proc else None
        self.out = proc.stdout.decode(errors="replace") if proc else ""
        self.err = proc.stderr.decode(errors="replace") if proc else "TIMEOUT"
        self.seconds = seconds

    @property
    def anchor(self):
        return os.path.join(self.output, "traces.otf2")

    def describe(self):
        return "--- %s: rc=%r (%.1f s)\nstdout:\n%s\nstderr:\n%s\nfiles: %r" % (
            self.what, self.rc, self.seconds, self.out, self.err[-4000:], tree(self.top))


class Runner:
    def __init__(self, tmp):
        self.tmp = tmp
        self.runs = []

    def run(self, label, argv, preload=None, env=None, timeout=120, output=True):
        """preload: None (untraced), "ranks" (mpiexec -n N env LD_PRELOAD=lib
        prog) or "env" (LD_PRELOAD in the environment of argv[0]: mpiexec
        itself, whose ranks inherit it, or a singleton)."""
        top = os.path.join(self.tmp, label)
        cwd = os.path.join(top, "cwd")
        os.makedirs(cwd)
        out = os.path.join(top, "out")
        e = h.base_env()
        e["HYDRA_LAUNCHER"] = "fork"       # mpiexec: this machine only
        e.pop("TEST_ABORT_RANK", None)
        e.pop("TEST_PID_DIR", None)
        e.pop("TEST_NO_MPI", None)
        if preload is not None and output:
            e["TRACER_OUTPUT"] = out
        lib = ":".join(h.preload_list())
        cmd = list(argv)
        if preload == "ranks":
            cmd = cmd[:3] + ["env", "LD_PRELOAD=" + lib] + cmd[3:]
        elif preload == "env":
            e["LD_PRELOAD"] = lib
        elif preload is not None:
            raise ValueError(preload)
        for k, v in (env or {}).items():
            if v is None:
                e.pop(k, None)
            else:
                e[k] = v
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, cwd=cwd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            p = None
        what = "%s (%s%s)" % (label, "LD_PRELOAD=lib " if preload == "env" else "",
                              " ".join("LD_PRELOAD=lib" if x.startswith("LD_PRELOAD=")
                                       else os.path.basename(x) if x.startswith("/") else x for x in cmd))
        r = Run(what, top, cwd, out, p, time.monotonic() - t0)
        self.runs.append(r)
        return r


def check_recover_line(c, what, p, d, size):
    """`tracer recover D`'s line (docs/trace-model.md, "tracer recover D")
    against the archive it wrote."""
    anchor = os.path.join(d, "traces.otf2")
    if p is None or p.returncode != 0 or not os.path.isfile(anchor):
        return
    try:
        t = h.Trace(anchor)
    except Exception:  # noqa: BLE001 - reported by check_job_archive
        return
    end = ct.properties(c, anchor, what).get("TRACER::RUN::END")
    ranks = sum(1 for g in t.definitions.location_groups if re.fullmatch(r"rank \d+", g.name))
    devices = sum(1 for g in t.definitions.location_groups if g.location_group_type == LocationGroupType.ACCELERATOR)
    want = "recovered %s/traces.otf2: %d of %d ranks, %d events of %d host threads and %d devices (%s)\n" % (
        d, ranks, size, sum(len(evs) for evs in t.events.values()), len(t.cpu_threads()), devices,
        "every rank ended normally" if end == "normal end" else end)
    out = p.stdout.decode(errors="replace").splitlines(True)
    c.equal(out[:1], [want], "%s: stdout of tracer recover (vs its archive)" % what)
    # then, per rank, what came from its journal and from its in-flight file
    # (only for ranks whose in-flight file was left: killed ones)
    # (and code addresses a killed rank left unnamed, named from its files:
    # issue 35, item 6)
    report = re.compile(r"  rank \d+: (in-flight file /dev/shm/tracer-\d+-\w+: \d+ records in \d+ chunks not in "
                        r"the journal.*|thread \d+ \(tid \d+\): \d+ records from the journal, \d+ from the "
                        r"in-flight file|named .+ from the program's files \(the run died before naming them\))\n")
    c.check(all(report.fullmatch(ln) for ln in out[1:]), "%s: recover's per-rank report: %r" % (what, out[1:]))
    c.equal(p.stderr.decode(errors="replace"), "", "%s: stderr of tracer recover" % what)


def recover(c, what, d):
    p = subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover", d], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=h.base_env(), timeout=120)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    c.equal(p.returncode, 0, "%s: `tracer recover D` exit status (stdout %r, stderr %r)" % (what, out, err))
    for m in h.SANITIZER_MARKERS:
        c.check(m not in err, "%s: sanitizer report %r from tracer recover" % (what, m))
    return p


# ---------------------------------------------------------------------------
# reading a job archive

def clock_offsets_api(anchor, refs):
    """{location ref: [(time, offset, stddev), ...]} through the OTF2 C API."""
    out = {ref: [] for ref in refs}
    r = _otf2.Reader_Open(anchor)
    try:
        _otf2.Reader_SetSerialCollectiveCallbacks(r)
        cbs = _otf2.DefReaderCallbacks_New()

        def on_offset(sink, when, offset, stddev):
            sink.append((when, offset, stddev))
            return _otf2.CALLBACK_SUCCESS
        _otf2.DefReaderCallbacks_SetClockOffsetCallback(cbs, on_offset)
        for ref in refs:
            _otf2.Reader_SelectLocation(r, ref)
        _otf2.Reader_OpenDefFiles(r)
        for ref in refs:
            dr = _otf2.Reader_GetDefReader(r, ref)
            if not dr:
                continue
            _otf2.Reader_RegisterDefCallbacks(r, dr, cbs, out[ref])
            _otf2.Reader_ReadAllLocalDefinitions(r, dr)
            _otf2.Reader_CloseDefReader(r, dr)
        _otf2.Reader_CloseDefFiles(r)
        _otf2.DefReaderCallbacks_Delete(cbs)
    finally:
        _otf2.Reader_Close(r)
    return out


def clock_offsets_print(c, anchor, what):
    """The same from `otf2-print -C`."""
    exe = h.otf2_print_cmd()
    out = collections.defaultdict(list)
    if not c.check(exe, "otf2-print not found"):
        return out
    p = subprocess.run([exe, "-C", anchor], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    c.equal(p.returncode, 0, "%s: otf2-print -C exit status" % what)
    for line in p.stdout.decode(errors="replace").splitlines():
        m = re.match(r"CLOCK_OFFSET\s+(\d+)\s+Time: (\d+), Offset: ([+-]?\d+), StdDev: (\S+)$", line.strip())
        if m:
            out[int(m.group(1))].append((int(m.group(2)), int(m.group(3)), float(m.group(4))))
    return out


def check_no_duplicates(c, t, what):
    d = t.definitions

    def dups(keys):
        return sorted(k for k, n in collections.Counter(keys).items() if n > 1)
    strings = [s.name if hasattr(s, "name") else str(s) for s in d.strings]
    c.equal(dups(strings), [], "%s: String definitions with the same content" % what)
    c.equal(dups((r.name, r.canonical_name, r.region_role, r.paradigm) for r in t.regions), [],
            "%s: Region definitions with the same (name, canonical name, role, paradigm)" % what)
    c.equal(dups(a.name for a in t.attributes), [], "%s: Attribute definitions with the same name" % what)
    c.equal(dups(g.name for g in d.location_groups), [], "%s: LocationGroups with the same name" % what)
    c.equal(dups((n.name, n.class_name, n.parent._ref if n.parent else None) for n in d.system_tree_nodes), [],
            "%s: SystemTreeNodes with the same (name, class, parent)" % what)
    c.equal(dups((loc.group.name, loc.name) for loc in t.locations), [],
            "%s: Locations with the same (group, name)" % what)
    c.equal(dups(loc._ref for loc in t.locations), [], "%s: location ids used twice" % what)
    c.equal(dups((cm.name, tuple(m._ref for m in cm.group.members)) for cm in d.comms), [],
            "%s: Comms with the same name and members" % what)
    c.equal(dups((w.name, w.comm._ref if w.comm else None) for w in t.rma_wins), [],
            "%s: RmaWins with the same name and comm" % what)


SLACK_NS = 20000   # TSC stamps converted to CLOCK_MONOTONIC vs its direct reads


def check_offset_times(c, v, host0, got, where, finalized):
    """When each ClockOffset was measured, on the rank's own timeline (a
    reader maps a definition's time t to t + its offset): the first right
    after the real MPI_Init (after MPI_Init's Leave, before the first target
    construct); the second inside MPI_Finalize before the rank's recording
    ended, or, for a rank that never got there, a copy of the first at the
    rank's last stamp (1 ns later when that is not later)."""
    if len(got) != 2:
        return
    times = [ev.time for evs in v.events.values() for ev in evs]
    spans = {e.region.canonical_name: (e.time, l.time) for _, e, l in v.intervals(location=host0)
             if e.region.canonical_name in ("MPI_Init", "MPI_Finalize")}
    targets = [(e.time, l.time) for _, e, l in v.intervals("target")]
    (t0, o0, s0), (t1, o1, s1) = got
    m0, m1 = t0 + o0, t1 + o1
    if "MPI_Init" in spans:
        c.check(spans["MPI_Init"][1] - SLACK_NS <= m0, "%s: first ClockOffset (%d) before MPI_Init's Leave (%d)"
                % (where, m0, spans["MPI_Init"][1]))
    if targets:
        c.check(m0 <= min(b for b, _ in targets), "%s: first ClockOffset (%d) after the first target (%d)"
                % (where, m0, min(b for b, _ in targets)))
    if finalized:
        if "MPI_Finalize" in spans:
            c.check(spans["MPI_Finalize"][0] - SLACK_NS <= m1 <= max(times) + SLACK_NS,
                    "%s: second ClockOffset (%d) outside MPI_Finalize's Enter (%d) .. the rank's last stamp (%d)"
                    % (where, m1, spans["MPI_Finalize"][0], max(times)))
    else:
        c.equal((o1, s1), (o0, s0), "%s: the second ClockOffset of a rank measured once (a copy)" % where)
        c.check(m1 == max(times) or t1 == t0 + 1, "%s: the copy's time %d + offset %d is not the rank's last "
                "stamp %d (nor 1 ns after the first)" % (where, t1, o1, max(times)))


def check_clock_offsets(c, t, anchor, what, size, finalized, measured_per_rank=False):
    refs = [loc._ref for loc in t.locations]
    try:
        api = clock_offsets_api(anchor, refs)
    except Exception as e:  # noqa: BLE001
        c.check(False, "%s: reading ClockOffset definitions through _otf2 failed: %r" % (what, e))
        return
    printed = clock_offsets_print(c, anchor, what)
    for loc in t.locations:
        got = api.get(loc._ref, [])
        c.equal([(tm, off) for tm, off, _ in got], [(tm, off) for tm, off, _ in printed.get(loc._ref, [])],
                "%s: ClockOffsets of %s/%s, OTF2 API vs otf2-print -C" % (what, loc.group.name, loc.name))
    per_rank = {}
    slow = []
    # each rank's host thread 0 first: the others must have its offsets
    for loc in sorted(t.locations, key=lambda l: (l.group.name, l.name != "host thread 0", l.name)):
        m = re.match(r"rank (\d+)(?: device \d+)?$", loc.group.name)
        if not m:
            continue
        rank = int(m.group(1))
        got = api.get(loc._ref, [])
        where = "%s: %s/%s" % (what, loc.group.name, loc.name)
        if not c.check(got, "%s: no ClockOffset definition" % where):
            continue
        c.equal(len(got), 2, "%s: ClockOffset definitions (MPI_Init, MPI_Finalize or the rank's end)" % where)
        c.check(all(a[0] < b[0] for a, b in zip(got, got[1:])), "%s: ClockOffset times not increasing: %r"
                % (where, got))
        if rank in per_rank:
            c.equal(got, per_rank[rank], "%s: ClockOffsets differ from the rank's host thread 0" % where)
            continue
        per_rank[rank] = got
        check_offset_times(c, RankView(t, rank), loc, got, where, finalized)
        for tm, off, sd in got:
            if rank == 0:
                c.equal((off, sd), (0, 0.0), "%s: rank 0's ClockOffset (offset, stddev)" % where)
            elif not measured_per_rank:
                # TRACER_CLOCK_OFFSETS=node (default): every rank shares rank
                # 0's node, hence its clock: offset 0 exactly, nothing measured.
                c.equal((off, sd), (0, 0.0), "%s: ClockOffset on rank 0's node (per node)" % where)
            else:
                c.check(sd > 0, "%s: ClockOffset stddev %r: per rank, each rank measures a round trip"
                        % (where, sd))
            c.check(sd >= 0, "%s: ClockOffset stddev %r < 0" % (where, sd))
            # One node, one CLOCK_MONOTONIC: rank 0 read it between the
            # ping's send and the answer's receipt, so the midpoint is off
            # by at most half the round trip (integer midpoint: + 1 ns).
            c.check(abs(off) <= sd + 1, "%s: |ClockOffset| %d ns > stddev (rtt/2) %.1f ns + 1: on one node "
                    "rank 0's clock was read inside the round trip" % (where, off, sd))
            if abs(off) >= 1000000:
                slow.append("rank %d %+d ns (rtt/2 %.0f ns)" % (rank, off, sd))
    c.equal(sorted(per_rank), list(range(size)), "%s: ranks with ClockOffset definitions" % what)
    # |offset| < 1 ms needs round trips below 2 ms: true when every rank has
    # CPUs to itself; with more ranks than CPUs, the ranks waiting for rank
    # 0 spin (MPICH polls) and each round trip takes scheduler slices.
    cpus = len(os.sched_getaffinity(0))
    slow = sorted(set(slow))
    if cpus >= 2 * size:
        c.equal(slow, [], "%s: |ClockOffset| >= 1 ms on one node with %d CPUs for %d ranks" % (what, cpus, size))
    elif slow:
        c.note("%s: |ClockOffset| >= 1 ms, within rtt/2 of the shared clock (%d ranks on %d CPUs: the round "
               "trips wait for the scheduler; checked only with 2 CPUs per rank): %s"
               % (what, size, cpus, "; ".join(slow[:4])))


def machine_name(anchor):
    p = subprocess.run([h.otf2_print_cmd() or "otf2-print", "-I", anchor], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    m = re.search(r"^Machine name\s+(.*)$", p.stdout.decode(errors="replace"), re.M)
    return m.group(1).strip() if m else None


def rank_groups(c, t, what, size):
    """{rank: LocationGroup} of the "rank <r>" groups."""
    groups = {}
    for g in t.definitions.location_groups:
        m = re.fullmatch(r"rank (\d+)", g.name)
        if m:
            groups[int(m.group(1))] = g
    c.equal(sorted(groups), list(range(size)), "%s: 'rank <r>' location groups" % what)
    return groups


def check_structure(c, t, what, size):
    """Location groups, system tree, locations, comm, definitions."""
    groups = rank_groups(c, t, what, size)
    host = socket.gethostname()
    for r, g in groups.items():
        c.equal(g.location_group_type, LocationGroupType.PROCESS, "%s: type of group %s" % (what, g.name))
        node = g.system_tree_parent
        if c.check(node is not None, "%s: group %s has no system tree parent" % (what, g.name)):
            c.equal((node.name, node.class_name), (host, "node"),
                    "%s: system tree node of %s (name = the host name, class)" % (what, g.name))
            root = node.parent
            c.equal((root.name, root.class_name, root.parent) if root else None, ("machine", "machine", None),
                    "%s: parent of node %r (the root)" % (what, node.name))
    c.equal(sorted((n.name, n.class_name) for n in t.definitions.system_tree_nodes),
            sorted([(host, "node"), ("machine", "machine")]), "%s: system tree nodes (one host)" % what)
    other = sorted(g.name for g in t.definitions.location_groups
                   if not re.fullmatch(r"rank \d+( device \d+)?", g.name))
    c.equal(other, [], "%s: location groups other than 'rank <r>' / 'rank <r> device <d>'" % what)
    for loc in t.locations:
        g = loc.group.name
        if re.fullmatch(r"rank \d+", g):
            c.check(loc.type == LocationType.CPU_THREAD and re.fullmatch(r"host thread \d+", loc.name),
                    "%s: location %r (%s) in group %s: want CPU_THREAD 'host thread <k>' (MPICH has no MPI_T "
                    "sources)" % (what, loc.name, getattr(loc.type, "name", loc.type), g))
        else:
            m = re.fullmatch(r"rank (\d+) device (\d+)", g)
            if m:
                c.equal(loc.group.location_group_type, LocationGroupType.ACCELERATOR, "%s: type of group %s"
                        % (what, g))
                creator = loc.group.creating_location_group
                c.equal(creator.name if creator else None, "rank %s" % m.group(1),
                        "%s: creating location group of %s" % (what, g))
                c.check(loc.group.system_tree_parent is groups.get(int(m.group(1)), loc.group).system_tree_parent,
                        "%s: group %s is not on its rank's node" % (what, g))
                c.equal(h.Trace.stream_device(loc), int(m.group(2)), "%s: device of %r in group %s"
                        % (what, loc.name, g))
                c.equal(loc.type, LocationType.ACCELERATOR_STREAM, "%s: type of %s/%s" % (what, g, loc.name))
    for r in range(size):
        threads = [loc for loc in t.locations if loc.group.name == "rank %d" % r]
        c.equal(sorted(loc.name for loc in threads), ["host thread 0"], "%s: host locations of rank %d" % (what, r))
        dev_groups = sorted({loc.group.name for loc in t.locations
                             if loc.group.name.startswith("rank %d device " % r)})
        c.check("rank %d device 0" % r in dev_groups, "%s: rank %d has no 'rank %d device 0' group (has %r)"
                % (what, r, r, dev_groups))

    # Ids rank by rank: a rank's host threads, then its device streams;
    # groups: a rank's PROCESS group, then its device groups.
    def rank_of(g):
        return int(re.match(r"rank (\d+)", g.name).group(1)) if re.match(r"rank \d+", g.name) else -1
    locs = sorted(t.locations, key=lambda l: l._ref)
    c.equal([l._ref for l in locs], list(range(len(locs))), "%s: location ids" % what)
    c.equal([(rank_of(l.group), l.type != LocationType.CPU_THREAD) for l in locs],
            sorted((rank_of(l.group), l.type != LocationType.CPU_THREAD) for l in locs),
            "%s: locations in id order: (rank, is a device stream)" % what)
    grps = sorted(t.definitions.location_groups, key=lambda g: g._ref)
    c.equal([g._ref for g in grps], list(range(len(grps))), "%s: location group ids" % what)
    c.equal([(rank_of(g), g.location_group_type != LocationGroupType.PROCESS) for g in grps],
            sorted((rank_of(g), g.location_group_type != LocationGroupType.PROCESS) for g in grps),
            "%s: location groups in id order: (rank, is a device group)" % what)

    # MPI: "MPI ranks" (COMM_LOCATIONS) and MPI_COMM_WORLD over each rank's
    # host thread 0 in rank order; nothing else (MPICH: no MPI_T registration)
    host0s = [("rank %d" % r, "host thread 0") for r in range(size)]
    ranks_groups = [g for g in t.definitions.groups if g.paradigm == Paradigm.MPI
                    and g.group_type == GroupType.COMM_LOCATIONS]
    c.equal([(g.name, [(m.group.name, m.name) for m in g.members]) for g in ranks_groups], [("MPI ranks", host0s)],
            "%s: MPI COMM_LOCATIONS groups (name, members)" % what)
    mpi_comms = [cm for cm in t.definitions.comms if cm.group is not None and cm.group.paradigm == Paradigm.MPI]
    c.equal(sorted(cm.name for cm in mpi_comms), ["MPI_COMM_WORLD"], "%s: MPI comms" % what)
    world = [cm for cm in mpi_comms if cm.name == "MPI_COMM_WORLD"]
    if len(world) == 1:
        c.equal([(m.group.name, m.name) for m in world[0].group.members], host0s,
                "%s: members of MPI_COMM_WORLD in comm rank order" % what)
        c.equal(world[0].group.group_type, GroupType.COMM_GROUP, "%s: type of MPI_COMM_WORLD's group" % what)

    # The clock: globalOffset and traceLength span the (corrected) stamps.
    times = [ev.time for evs in t.events.values() for ev in evs]
    cp = t.clock_properties
    c.equal(cp.timer_resolution, 1000000000, "%s: ClockProperties.timer_resolution" % what)
    if times:
        c.equal((cp.global_offset, cp.trace_length), (min(times), max(times) - min(times)),
                "%s: ClockProperties (globalOffset, traceLength) vs the earliest and latest event" % what)
    check_no_duplicates(c, t, what)


def check_mpi_regions(c, v, what, finalized, at="exit"):
    """MPI_Init (and MPI_Finalize when the rank got there) on host thread 0,
    around its offload work; ProgramBegin/End. @at: TRACER_JOB_WRITE of the
    run (exit: the recording went on to the process's exit; finalize: it
    ended inside MPI_Finalize)."""
    host0 = [loc for loc in v.cpu_threads() if loc.name == "host thread 0"]
    if not c.check(host0, "%s: no host thread 0" % what):
        return
    host0 = host0[0]
    counts = v.count_enters()
    want = (1, 1 if finalized else 0, 0)
    c.equal((counts.get("MPI_Init", 0), counts.get("MPI_Finalize", 0), counts.get("MPI_Init_thread", 0)), want,
            "%s: Enters of (MPI_Init, MPI_Finalize, MPI_Init_thread)" % what)
    for reg in v.regions:
        if reg.canonical_name in ("MPI_Init", "MPI_Finalize"):
            c.equal((reg.region_role, reg.paradigm), (RegionRole.FUNCTION, Paradigm.MPI),
                    "%s: (role, paradigm) of %s" % (what, reg.name))
    spans = {e.region.canonical_name: (e.time, l.time) for _, e, l in v.intervals(location=host0)
             if e.region.canonical_name in ("MPI_Init", "MPI_Finalize")}
    c.equal(sorted(spans), sorted(["MPI_Init"] + (["MPI_Finalize"] if finalized else [])),
            "%s: MPI regions on host thread 0" % what)
    targets = [(e.time, l.time) for _, e, l in v.intervals("target")]
    if "MPI_Init" in spans and targets:
        c.check(spans["MPI_Init"][1] <= min(b for b, _ in targets),
                "%s: MPI_Init ends after the first target construct begins" % what)
    if "MPI_Finalize" in spans and targets:
        c.check(spans["MPI_Finalize"][0] >= max(e for _, e in targets),
                "%s: MPI_Finalize begins before the last target construct ends" % what)
    # With TRACER_JOB_WRITE=finalize recording ends inside MPI_Finalize: its
    # Leave is marked incomplete (docs/trace-model.md, "Regions on the host
    # threads"); at exit the Leave is the real one.
    fin = [(e, l) for _, e, l in v.intervals("MPI_Finalize", host0)]
    c.equal([A(l, "incomplete") for _, l in fin], [1 if at == "finalize" else None] * len(fin),
            "%s: 'incomplete' of MPI_Finalize's Leave (TRACER_JOB_WRITE=%s)" % (what, at))
    # ProgramBegin / ProgramEnd on host thread 0 at the rank's first and last
    # timestamps; when the recording ends inside MPI_Finalize, before the
    # exit, ProgramEnd's exit status is undefined (docs, "Events, per rank").
    times = [ev.time for evs in v.events.values() for ev in evs]
    pb = v.events_of(otf2.events.ProgramBegin)
    pe = v.events_of(otf2.events.ProgramEnd)
    c.equal([loc.name for loc, _ in pb], ["host thread 0"], "%s: locations of ProgramBegin" % what)
    c.equal([loc.name for loc, _ in pe], ["host thread 0"], "%s: locations of ProgramEnd" % what)
    if times:
        c.equal([ev.time for _, ev in pb], [min(times)], "%s: ProgramBegin time (the rank's first)" % what)
        c.equal([ev.time for _, ev in pe], [max(times)], "%s: ProgramEnd time (the rank's last)" % what)
    c.equal([os.path.basename(str(ev.program_name)) for _, ev in pb], [os.path.basename(h.env_path("TEST_BIN"))],
            "%s: ProgramBegin program name" % what)
    if finalized and at == "finalize":
        c.equal([ev.exit_status for _, ev in pe], [UNDEFINED_INT64],
                "%s: ProgramEnd exit status (undefined: written before the exit)" % what)
    elif finalized:
        c.equal([ev.exit_status for _, ev in pe], [EXIT], "%s: ProgramEnd exit status (the program's)" % what)
    # The OpenMP runtime finalizes its devices at exit, after MPI_Finalize:
    # in the archive when it is written at exit, not when inside MPI_Finalize.
    devs = [loc for loc in v.locations if loc.type == LocationType.ACCELERATOR_STREAM]
    finals = sorted(loc.name for loc in devs for _, ev in v.enters(location=loc)
                    if ev.region.canonical_name == "device finalize")
    c.equal(finals, sorted(loc.name for loc in devs) if finalized and at == "exit" else [],
            "%s: 'device finalize' on the device locations (TRACER_JOB_WRITE=%s)" % (what, at))


def check_offload(c, v, what, rank, src, full=True):
    """Rank `rank`'s offload ground truth in its view."""
    h.check_counts(c, v, want_counts(rank))
    c.equal(h.data_op_summary(v), want_data_ops(rank), "%s: data ops (kind, device) -> bytes" % what)
    c.equal(h.transfer_summary(v), want_transfers(rank), "%s: RmaPut/RmaGet (kind, device) -> bytes" % what)
    if not full:
        return
    h.check_attributes(c, v)
    h.check_rma(c, v)
    h.check_memory(c, v, single_thread=True)
    lines = h.kernel_lines(src)
    h.check_kernels(c, v, {0: 1 + reps(rank)}, [lines["first"]] + [lines["second"]] * reps(rank))
    for _, ev in v.enters():
        if ev.region.canonical_name in h.WRAPPERS:
            c.equal(A(ev, "device"), 0, "%s: device of %s" % (what, ev.region.canonical_name))
    inc = [(loc.name, ev.region.canonical_name) for loc, ev in v.incomplete_leaves()
           if ev.region.canonical_name in h.OMPT_REGIONS]
    c.equal(inc, [], "%s: offload regions closed with incomplete=1" % what)


def rank_summary(v):
    """What case 4 compares between the live archive and the recovered one."""
    return (dict(v.count_enters()), h.data_op_summary(v), h.transfer_summary(v),
            sorted((loc.group.name, loc.name) for loc in v.locations))


def check_job_archive(c, anchor, what, size, src, library, finalized=True, full=True,
                      want_end="normal end", measured_per_rank=False, at="exit"):
    """The checks of case 1 (full) or case 2 (counts only). Returns
    {rank: rank_summary} or None."""
    t = h.open_checked_trace(c, what, anchor)
    if t is None:
        return None
    props = ct.properties(c, anchor, what)
    c.equal(machine_name(anchor), socket.gethostname(), "%s: machine name in the anchor file" % what)
    c.equal(props.get("TRACER::JOB::RANKS"), "%d/%d" % (size, size), "%s: property TRACER::JOB::RANKS" % what)
    c.check("TRACER::JOB::MISSING_RANKS" not in props, "%s: TRACER::JOB::MISSING_RANKS = %r with every rank "
            "present" % (what, props.get("TRACER::JOB::MISSING_RANKS")))
    if want_end is not None:
        c.equal(props.get("TRACER::RUN::END"), want_end, "%s: property TRACER::RUN::END" % what)
    c.equal(sorted(k for k in props if k.startswith("TRACER::MPIT::") or k.startswith("TRACER::JOB::RANK")
                   and k != "TRACER::JOB::RANKS"), [],
            "%s: per-rank properties in the anchor file (they belong to the rank's group)" % what)
    if library is not None:
        status = ("%s: MPI_T events: 0 sources, 0 event types, 0 registrations made, 0 live"
                  % re.sub(r"[\x00-\x1f]", " ", library))
        gp = group_properties(t)
        c.equal({g: sorted(p) for g, p in gp.items()},
                {"rank %d" % r: ["TRACER::MPIT::STATUS", "TRACER::PROCESS"] for r in range(size)},
                "%s: properties of each rank's group" % what)
        c.equal({g: p.get("TRACER::MPIT::STATUS") for g, p in gp.items()}, {"rank %d" % r: status for r in range(size)},
                "%s: TRACER::MPIT::STATUS of each rank's group" % what)
        c.equal(sorted(g for g, p in gp.items() if re.fullmatch(r"pid \d+ on %s" % re.escape(socket.gethostname()),
                                                                p.get("TRACER::PROCESS", ""))),
                sorted(gp), "%s: TRACER::PROCESS = 'pid <pid> on <host>' of each rank's group" % what)
    rank_groups(c, t, what, size)
    if full:
        check_structure(c, t, what, size)
        check_clock_offsets(c, t, anchor, what, size, finalized, measured_per_rank)
    out = {}
    for r in range(size):
        v = RankView(t, r)
        rw = "%s rank %d" % (what, r)
        if full:
            check_mpi_regions(c, v, rw, finalized, at)
        check_offload(c, v, rw, r, src, full)
        out[r] = rank_summary(v)
    return out


# ---------------------------------------------------------------------------
# the run itself

def check_like_plain(c, r, plain):
    c.equal(r.rc, plain.rc, "%s: exit status (vs without tracer)" % r.what)
    c.equal(sorted(r.out.splitlines()), sorted(plain.out.splitlines()),
            "%s: stdout lines (vs without tracer)" % r.what)
    for m in h.SANITIZER_MARKERS:
        c.check(m not in r.err, "%s: sanitizer report %r in stderr" % (r.what, m))


LATE = "tracer: %d events arrived after the trace was written and are not in it"
UNDEFINED_INT64 = -(1 << 63)     # OTF2_UNDEFINED_INT64


def check_job_stderr(c, r, got):
    """stderr of a job: empty. At exit nothing comes later; with
    TRACER_JOB_WRITE=finalize what the OpenMP runtime reports at exit (the
    "device finalize" of every device) is not in the archive, which is
    documented, so tracer says so only with TRACER_VERBOSE=1 (docs/
    trace-model.md, "Archive"). @got: unused (kept for the callers)."""
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    c.equal(lines, [], "%s: stderr" % r.what)


def check_one_archive(c, r):
    """The run's directory: cwd (empty) and D = TRACER_OUTPUT holding one
    OTF2 archive, nothing else."""
    c.equal(os.listdir(r.cwd), [], "%s: files in the cwd" % r.what)
    files = tree(r.top)
    c.equal([f for f in files if not (f == "cwd/" or f == "out/" or f.startswith("out/"))], [],
            "%s: left beside TRACER_OUTPUT (D.rank<N>, D.1, ...)" % r.what)
    inside = [f[len("out/"):] for f in files if f.startswith("out/") and f != "out/"]
    odd = [f for f in inside if f not in ("traces.otf2", "traces.def", "traces/")
           and not re.fullmatch(r"traces/\d+\.(evt|def)", f)]
    c.equal(odd, [], "%s: in D besides traces.otf2, traces.def, traces/<id>.evt|def" % r.what)
    return c.check(os.path.isfile(r.anchor) and os.path.getsize(r.anchor) > 0, "%s: no archive %s"
                   % (r.what, r.anchor))


def check_no_mpi_archives(c, r, size, src):
    """Processes with a launcher rank that never call MPI_Init: one archive
    per process in D.rank<N>, nothing in D, each its own process's trace."""
    c.equal(os.listdir(r.cwd), [], "%s: files in the cwd" % r.what)
    files = tree(r.top)
    want_dirs = ["out.rank%d/" % k for k in range(size)]
    c.equal(sorted(f for f in files if f.count("/") == 1 and f.endswith("/")), sorted(["cwd/"] + want_dirs),
            "%s: directories beside the cwd (D.rank<N> only)" % r.what)
    for k in range(size):
        d = "out.rank%d/" % k
        odd = [f[len(d):] for f in files if f.startswith(d) and f != d]
        odd = [f for f in odd if f not in ("traces.otf2", "traces.def", "traces/")
               and not re.fullmatch(r"traces/\d+\.(evt|def)", f)]
        c.equal(odd, [], "%s: in %s besides the archive" % (r.what, d))
        anchor = os.path.join(r.top, d, "traces.otf2")
        what = "%s %s" % (r.what, d)
        if not c.check(os.path.isfile(anchor), "%s: no archive" % what):
            continue
        t = h.open_checked_trace(c, what, anchor)
        if t is None:
            continue
        groups = sorted(g.name for g in t.definitions.location_groups
                        if g.location_group_type == LocationGroupType.PROCESS)
        c.check(len(groups) == 1 and re.fullmatch(r"process \d+", groups[0]),
                "%s: PROCESS groups %r, want one 'process <pid>'" % (what, groups))
        props = ct.properties(c, anchor, what)
        c.equal(sorted(p for p in props if p.startswith("TRACER::JOB::")), [], "%s: TRACER::JOB:: properties" % what)
        c.equal(props.get("TRACER::RUN::END"), "normal end", "%s: TRACER::RUN::END" % what)
        c.equal([reg.name for reg in t.regions if reg.paradigm == Paradigm.MPI], [],
                "%s: MPI regions (the program never called MPI)" % what)
        pe = t.events_of(otf2.events.ProgramEnd)
        c.equal([ev.exit_status for _, ev in pe], [EXIT], "%s: ProgramEnd exit status" % what)
        check_offload(c, t, what, k, src)


def main():
    c = h.Checker("mpi_job")
    binary = h.env_path("TEST_BIN")
    src = h.env_path("TEST_SRC")
    mpiexec = h.env_path("TEST_MPIEXEC")
    h.env_path("TEST_TRACER_CLI")
    tmp = tempfile.mkdtemp(prefix="tracer-test-mpi-job-")
    runner = Runner(tmp)
    timings = []
    t_start = time.monotonic()
    try:
        def n(k):
            return [mpiexec, "-n", str(k), binary]

        plain4 = runner.run("plain-4", n(4))
        library4 = check_plain(c, plain4, 4)

        # 1. both ways of preloading, 4 ranks
        live = None
        for label, how in (("ranks-4", "ranks"), ("launcher-4", "env")):
            r = runner.run(label, n(4), preload=how)
            check_like_plain(c, r, plain4)
            got = None
            if check_one_archive(c, r):
                got = check_job_archive(c, r.anchor, r.what, 4, src, library4)
                if live is None:
                    live = got
            check_job_stderr(c, r, got)

        # 1b. clock offsets measured by every rank (TRACER_CLOCK_OFFSETS=rank):
        # the ping-pong itself, bounded by its round trip on this one node
        r = runner.run("ranks-4-offsets-per-rank", n(4), preload="ranks", env={"TRACER_CLOCK_OFFSETS": "rank"})
        check_like_plain(c, r, plain4)
        got = None
        if check_one_archive(c, r):
            got = check_job_archive(c, r.anchor, r.what, 4, src, library4, measured_per_rank=True)
        check_job_stderr(c, r, got)

        # 1c. TRACER_JOB_WRITE=finalize: the ranks write the archive together
        # inside MPI_Finalize; what comes later (device finalize) is not in it
        r = runner.run("job-write-finalize-4", n(4), preload="ranks", env={"TRACER_JOB_WRITE": "finalize"})
        check_like_plain(c, r, plain4)
        got = None
        if check_one_archive(c, r):
            got = check_job_archive(c, r.anchor, r.what, 4, src, library4, at="finalize")
        check_job_stderr(c, r, got)

        # 2. 16 ranks, counts only
        plain16 = runner.run("plain-16", n(16), timeout=90)
        check_plain(c, plain16, 16)
        r = runner.run("ranks-16", n(16), preload="ranks", timeout=120)
        check_like_plain(c, r, plain16)
        got = None
        if check_one_archive(c, r):
            got = check_job_archive(c, r.anchor, r.what, 16, src, library4, full=False)
        check_job_stderr(c, r, got)

        # 3. the launcher alone
        r = runner.run("launcher-only", [mpiexec, "-n", "2", "/bin/true"], preload="env")
        c.equal(r.rc, 0, "%s: exit status" % r.what)
        c.equal(r.err, "", "%s: stderr" % r.what)
        c.equal(tree(r.top), ["cwd/"], "%s: written below the run's directory" % r.what)

        # 4. TRACER_WRITE_AT_END=0, then tracer recover
        r = runner.run("write-at-end-0", n(4), preload="ranks", env={"TRACER_WRITE_AT_END": "0"})
        check_like_plain(c, r, plain4)
        files = tree(r.top)
        c.equal([f for f in files if f != "out/traces.otf2"],
                ["cwd/", "out/", "out/journals/"] + ["out/journals/rank%d.journal" % k for k in range(4)],
                "%s: what the run left (besides the claim out/traces.otf2)" % r.what)
        c.check(not os.path.exists(r.anchor) or os.path.getsize(r.anchor) == 0,
                "%s: the run wrote an archive %s although TRACER_WRITE_AT_END=0" % (r.what, r.anchor))
        rp = recover(c, r.what, r.output)
        check_recover_line(c, r.what, rp, r.output, 4)
        got = check_job_archive(c, r.anchor, r.what + " recovered", 4, src, library4)
        check_job_stderr(c, r, got)
        if got is not None and live is not None:
            for k in range(4):
                c.equal(got[k], live[k], "%s: rank %d (counts, data ops, transfers, locations), recovered "
                        "vs written at MPI_Finalize" % (r.what, k))

        # 5. MPI_Abort on one rank, then tracer recover
        abort_env = {"TEST_ABORT_RANK": str(ABORT_RANK)}
        for attempt in range(3):
            plain_ab = runner.run("plain-abort" if not attempt else "plain-abort-%d" % (attempt + 1), n(4),
                                  env=abort_env)
            # The same Hydra race as below, without tracer: the reference run
            # itself can lose MPICH's "Abort(...)" line (seen once in CI, where
            # the traced run then had the line the reference lacked). The
            # reference is the run that kept it.
            if any(line.startswith("Abort(") for line in plain_ab.err.splitlines()):
                break
            c.note("%s: mpiexec lost MPICH's abort line; run again" % plain_ab.what)
        c.equal(plain_ab.rc, ABORT_CODE, "%s: exit status" % plain_ab.what)
        c.equal(plain_ab.out, "mpit_offload: rank %d aborts\n" % ABORT_RANK, "%s: stdout" % plain_ab.what)
        want_err = sorted(plain_ab.err.splitlines())
        for attempt in range(3):
            r = runner.run("abort" if not attempt else "abort-%d" % (attempt + 1), n(4), preload="ranks",
                           env=dict(abort_env, TRACER_FLUSH_INTERVAL="%dms" % FLUSH_MS))
            # mpiexec (Hydra) may kill the job before it forwards the aborting
            # rank's stderr, so MPICH's own "Abort(...)" line can be missing
            # (seen twice in about 15 full-suite runs on 2 loaded cores; never
            # in 70 runs of this case alone, traced or not). Only that
            # difference is run again; any other, or a line tracer adds, fails.
            got_err = sorted(r.err.splitlines())
            lost = set(want_err) - set(got_err)
            if got_err == want_err or not lost or set(got_err) - set(want_err) or \
                    not all(line.startswith("Abort(") for line in lost):
                break
            c.note("%s: mpiexec lost MPICH's abort line %r; run again" % (r.what, sorted(lost)))
        c.equal(r.rc, plain_ab.rc, "%s: exit status (vs without tracer)" % r.what)
        c.equal(r.out, plain_ab.out, "%s: stdout (vs without tracer)" % r.what)
        c.equal(sorted(r.err.splitlines()), sorted(plain_ab.err.splitlines()),
                "%s: stderr lines (vs without tracer: mpiexec's abort message)" % r.what)
        files = tree(r.top)
        c.equal([f for f in files if f != "out/traces.otf2"],
                ["cwd/", "out/", "out/journals/"] + ["out/journals/rank%d.journal" % k for k in range(4)],
                "%s: what the run left (besides the claim out/traces.otf2)" % r.what)
        rp = recover(c, r.what, r.output)
        check_recover_line(c, r.what, rp, r.output, 4)
        check_job_archive(c, r.anchor, r.what + " recovered", 4, src, library4, finalized=False,
                          want_end=None)
        if os.path.isfile(r.anchor) and os.path.getsize(r.anchor) > 0:
            # The waiting ranks are killed (SIGKILL from mpiexec): "recovered".
            # The aborting one saved its journal in tracer's MPI_Abort before
            # the real one ran (issue 20): it says so.
            end = ct.properties(c, r.anchor, r.what).get("TRACER::RUN::END", "")
            ends = dict(re.findall(r"(?:^|; )rank (\d+): ([^;]*)", end))
            ends = {int(k): v for k, v in ends.items()}
            want_ends = {k: "recovered" for k in range(4)}
            want_ends[ABORT_RANK] = "ended in MPI_Abort(%d)" % ABORT_CODE
            c.equal(ends, want_ends, "%s: TRACER::RUN::END %r per rank" % (r.what, end))

        # 5b. a rank killed between MPI_Finalize and its exit: no rank is the
        # last out, so nobody writes; the journals stay and `tracer recover`
        # writes the whole job, and removes the exit marks
        kill_env = {"TEST_KILL_AFTER_FINALIZE": str(KILL_RANK)}
        plain_k = runner.run("plain-kill-after-finalize", n(4), env=kill_env)
        r = runner.run("kill-after-finalize", n(4), preload="ranks",
                       env=dict(kill_env, TRACER_FLUSH_INTERVAL="%dms" % FLUSH_MS))
        c.equal(r.rc, plain_k.rc, "%s: exit status (vs without tracer)" % r.what)
        def lines(out):  # mpiexec's message names the killed process's pid
            return sorted(re.sub(r"PID \d+", "PID <pid>", ln) for ln in out.splitlines())
        c.equal(lines(r.out), lines(plain_k.out), "%s: stdout lines (vs without tracer)" % r.what)
        c.equal([ln for ln in r.err.splitlines() if ln.startswith("tracer:")], [], "%s: tracer: lines" % r.what)
        files = tree(r.top)
        c.equal(sorted(f for f in files if f.startswith("out/journals/rank")),
                ["out/journals/rank%d.journal" % k for k in range(4)], "%s: journals kept" % r.what)
        c.check(not os.path.exists(r.anchor) or os.path.getsize(r.anchor) == 0,
                "%s: an archive was written although rank %d never counted itself out" % (r.what, KILL_RANK))
        rp = recover(c, r.what, r.output)
        check_recover_line(c, r.what, rp, r.output, 4)
        check_job_archive(c, r.anchor, r.what + " recovered", 4, src, library4, full=False, want_end=None)
        c.equal([f for f in tree(r.top) if ".exit-" in f], [],
                "%s: exit marks left after tracer recover" % r.what)
        if os.path.isfile(r.anchor) and os.path.getsize(r.anchor) > 0:
            end = ct.properties(c, r.anchor, r.what).get("TRACER::RUN::END", "")
            c.check(re.search(r"(?:^|; )rank %d: recovered" % KILL_RANK, end),
                    "%s: TRACER::RUN::END %r does not say rank %d was recovered" % (r.what, end, KILL_RANK))

        # 6. singleton
        plain1 = runner.run("plain-singleton", [binary])
        library1 = check_plain(c, plain1, 1)
        r = runner.run("singleton", [binary], preload="env")
        check_like_plain(c, r, plain1)
        got = None
        if check_one_archive(c, r):
            got = check_job_archive(c, r.anchor, r.what, 1, src, library1)
        elif os.path.isfile(os.path.join(r.top, "out.1", "traces.otf2")):
            # Reported above; its content is checked all the same.
            got = check_job_archive(c, os.path.join(r.top, "out.1", "traces.otf2"), r.what + " out.1", 1,
                                    src, library1)
        check_job_stderr(c, r, got)

        # 7. under mpiexec without MPI_Init: each process keeps D.rank<N>
        no_mpi = {"TEST_NO_MPI": "1"}
        plain_nm = runner.run("plain-no-mpi", n(2), env=no_mpi)
        c.equal((plain_nm.rc, sorted(plain_nm.out.splitlines()), plain_nm.err),
                (EXIT, ["mpit_offload: rank %d of 2 local=%d" % (k, local_sum(k)) for k in range(2)], ""),
                "%s: (exit status, stdout lines, stderr)" % plain_nm.what)
        r = runner.run("no-mpi", n(2), preload="ranks", env=no_mpi)
        check_like_plain(c, r, plain_nm)
        c.equal(r.err, "", "%s: stderr" % r.what)
        check_no_mpi_archives(c, r, 2, src)
    finally:
        for r in runner.runs:
            timings.append("%s %.1fs" % (r.what, r.seconds))
        if c.failures:
            for r in runner.runs:
                print(r.describe())
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.note("run times: " + "; ".join(timings) + "; whole test %.1fs" % (time.monotonic() - t_start))
    c.finish()


if __name__ == "__main__":
    main()
