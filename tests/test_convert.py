#!/usr/bin/python3
"""`tracer convert` (issue 8): OTF2 archives to Perfetto's protobuf trace and
to Chrome trace-event JSON, checked against the archives themselves, read
independently with python3-otf2.

Archives (each made here, by a real traced run):
  basic    the offload program basic.c (transfers, kernels, device memory)
  link     link_main.c (zero-length "link map"/"link unmap" regions)
  mpi      `mpiexec -n 2 env LD_PRELOAD=... mpit_offload`: one job archive,
           groups "rank 0" / "rank 1", each with its devices
  mpit     mpit_events.c with the MPI_T provider TEST DOUBLE preloaded
           (MPI_T events as zero-length regions, the "MPI_T dropped events"
           metric)
  user     many_events.c, 2 threads x 3000 iterations, a mark every 7:
           nested user regions and marks
  omp      omp_states.c's critical case (host OpenMP states, user mode:
           nested OpenMP regions, <OMP-...> states, OMP work/wait metrics)
  omp-machine  omp_states.c's tasks case in machine mode (raw OMPT
           regions, zero-length task events, regions open at the end)
  foreign  an archive written by python3-otf2's writer (another tool's,
           not tracer's): microsecond clock, two processes of two
           threads, nested functions, a zero-length function (a slice),
           an ARTIFICIAL zero-length region with attributes (an instant),
           an MPI barrier, a metric
Each part is skipped, with a NOTE, where this build lacks its program.

Ground truth, per location of the archive (python3-otf2, events in file
order per location; clock offsets applied by OTF2's reader), following the
rules of tools/convert_read.c; "seen" events are those the converter reads
(Enter, Leave, RmaPut/Get, RmaOpComplete*, Metric, MeasurementOnOff):
  instant    an Enter of an ARTIFICIAL region whose next seen event on its
             location is the Leave of the same region at the same timestamp
             (a zero-length region: MPI_T event, link map, mark, device
             event), with the Enter's attributes as its arguments; a
             MeasurementOnOff ("measurement off"/"on"). A zero-length
             region of another role (a user region that took no time) is a
             slice
  slice      every other Enter (named by the region's name or canonical
             name, the Enter's attributes among its arguments), ending at
             the Leave that closes it (or an enclosing one)
  transfer   an RmaPut / RmaGet that is the next seen event after an Enter,
             at its timestamp, whose remote is a location of an ACCELERATOR
             group: a flow from that Enter's slice to a slice of
             "<device> transfers[ k]" (<device>: the group's name without
             the process's, "device 0") from the RMA op to its
             RmaOpComplete* (or the end of the host slice), with args
             bytes, matching_id, direction ("to device" / "from device")
  counter    a series per Metric member and location (device memory in
             use, MPI_T dropped events), and per (process, MPI_T event type,
             element) for the numeric non-"mpit_" attributes of an instant
             on an "MPI_T source" location
The converter's track of a location is found by its process (the OTF2
PROCESS group the location's group descends from: "process <pid>",
"rank <r>") and its name ("host thread 0", "device 0 stream",
"MPI_T source ompi").

1. Perfetto (`--format perfetto`, and the default for -o *.pftrace): the file
   decodes with `protoc --decode=perfetto.protos.Trace -I <shared>/perfetto
   perfetto_trace.proto` (<shared> = the project's ../shared,
   TEST_PERFETTO_PROTO). Parsed from protoc's text output:
   - every TrackEvent's track (track_uuid, or the sequence's
     TracePacketDefaults) was declared by a TrackDescriptor in an earlier
     packet; every parent_uuid names a declared track; uuids are unique;
   - every TYPE_SLICE_END closes a TYPE_SLICE_BEGIN on its track (a stack
     per track) no later than it; no slice is left open;
   - packet timestamps never go back within a trusted_packet_sequence_id;
   - interned names resolve: every name_iid, category iid, debug
     annotation name_iid and string_value_iid was interned earlier on the
     same sequence, after its last incremental-state clear;
   - per location: the slices of its track equal the archive's slices in
     order (count, name, begin, end, the Enter's attributes among the
     arguments) and its instants the archive's instants; all timestamps =
     archive time + one constant for the whole file; tracks that are no
     location hold only transfer slices;
   - flows connect slices: every flow id leaves exactly one slice
     (flow_ids) and ends on exactly one slice (terminating_flow_ids); the
     number of flows = the archive's RmaPut + RmaGet events, and the flows
     equal its transfers (host location, begin and name of the host slice,
     device, and the device slice's begin, end, bytes, matching_id,
     direction);
   - every counter series of the archive is the series (timestamps and
     values) of exactly one counter track of its process, and there are no
     other counters;
   - slices = the archive's slices + one per transfer, instants, counter
     values and flows as in the archive;
   - the stdout line "converted ARCHIVE -> FILE (perfetto): N events, S
     slices, I instants, C counter values, F flows" has N = the archive's
     event count and S, I, C, F = what the decoded file holds; stderr empty.
2. JSON (`--format json`): parses with json; {"displayTimeUnit": "ns",
   "traceEvents": [...]}; every ts has exactly 3 decimals (microseconds);
   B/E nest per (pid, tid); every "s" flow has one "f" with its id and vice
   versa, each bound to a slice of its thread; then, with (pid, tid) named
   by the "M" process_name / thread_name records and "C" series by (pid,
   name), the same comparison with the archive as for Perfetto (B/E =
   slices, "i" = instants, s/f = flows, "C" = counter values); the counts
   of B, i, C and flows equal the Perfetto file's and both stdout lines
   give the same numbers.
2b. Read in turns: `--locations 1` (Perfetto) and `--locations 2` (JSON)
   read the locations one and two at a time (each run its own Perfetto
   sequence); the same comparisons with the archive hold, flows from a
   thread to a device read in another run included, and the stdout line
   gives the same numbers.
3. Errors: a damaged archive (an .evt file truncated to half, traces.def
   deleted, the anchor file overwritten with garbage, a path that does
   not exist) -> exit 1, stderr exactly one line "tracer: convert: ...",
   no traceback or sanitizer report, no output file left; an existing
   output file -> refused (exit != 0, one line, file untouched) unless
   --force; -o *.pftrace / *.json without --format give Perfetto / JSON;
   usage errors (--locations outside 1..65536 among them) -> exit 2 with
   one line and no output file;
   --help / -h -> exit 0, text on stdout mentioning ui.perfetto.dev.
4. A large synthetic archive: many_events.c, 2 threads x 2,000,000
   iterations = 10,080,004 user events (+ ProgramBegin/End), made through
   include/tracer.h with libtracer preloaded. Its conversion to Perfetto
   must stream: peak RSS of the converter (ru_maxrss from wait4, run by a
   minimal forking wrapper whose own few MiB count too) < 64 MiB
   (RSS_BOUND_KIB), while the archive is larger than that (about 110 MiB)
   and the output more than twice as large (about 210 MiB).
   The line's event count = the program's events + the events the archive
   adds around them (measured on the "user" archive of the same program);
   slices + instants = the program's regions + marks. Measured peak RSS
   and events/s are printed as a NOTE. Sanitizer builds
   (TEST_SANITIZER_PRELOAD set): 2 x 100,000 iterations and no RSS bound
   (the sanitizer runtimes' own memory), said in a NOTE.

Where the .proto file is absent, everything else still runs; the test then
ends as SKIPPED (exit 77) saying why, or FAILS if another check failed.
"""
import collections
import decimal
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import otf2  # noqa: E402
from otf2.enums import LocationGroupType, RegionRole  # noqa: E402

SANITIZED = bool(os.environ.get("TEST_SANITIZER_PRELOAD", "").strip())
RSS_BOUND_KIB = 64 * 1024
BIG_THREADS = 2
BIG_ITERATIONS = 100000 if SANITIZED else 2000000
SMALL_ITERATIONS, SMALL_MARK_EVERY = 3000, 7
LINE_RE = re.compile(r"converted (.+) -> (.+) \((perfetto|json)\): (\d+) events, (\d+) slices, "
                     r"(\d+) instants, (\d+) counter values, (\d+) flows")
TRANSFERS_RE = re.compile(r"(.+?) transfers(?: \d+)?")
MPIT_SCRIPT = ("@tinit;weird:1;@init;unordered_burst:5;released:3:300;drain;"
               "drop:ompi.mca.memory.patcher.released:2;@finalize;weird:9")


# --- protoc's text format ------------------------------------------------------

class Msg:
    """A decoded message: field name -> [values] (a value is a Msg, an int,
    a float, a str (string fields, decoded as UTF-8) or an enum name)."""
    __slots__ = ("f",)

    def __init__(self):
        self.f = {}

    def add(self, k, v):
        self.f.setdefault(k, []).append(v)

    def get(self, k, default=None):
        v = self.f.get(k)
        return v[0] if v else default

    def all(self, k):
        return self.f.get(k, [])

    def has(self, k):
        return k in self.f


_ESC = {"n": b"\n", "t": b"\t", "r": b"\r", "\\": b"\\", "'": b"'", '"': b'"', "a": b"\a",
        "b": b"\b", "f": b"\f", "v": b"\v", "?": b"?"}


def _unquote(s):
    """A C-escaped double-quoted string as protoc prints it -> str."""
    assert s[0] == '"' and s[-1] == '"', s
    body, out, i = s[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out += ch.encode()
            i += 1
            continue
        n = body[i + 1]
        if n in "01234567":
            j = i + 1
            while j < len(body) and j < i + 4 and body[j] in "01234567":
                j += 1
            out.append(int(body[i + 1:j], 8) & 0xFF)
            i = j
        elif n == "x":
            j = i + 2
            while j < len(body) and body[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(body[i + 2:j], 16) & 0xFF)
            i = j
        else:
            out += _ESC.get(n, n.encode())
            i += 2
    return out.decode("utf-8", errors="replace")


def _scalar(v):
    if v.startswith('"'):
        return _unquote(v)
    if re.fullmatch(r"-?\d+", v):
        return int(v)
    if re.fullmatch(r"-?(\d+\.?\d*([eE][-+]?\d+)?|inf|nan)", v):
        return float(v)
    return v     # enum name, true / false


def parse_text_format(text):
    """protoc --decode's output: `name {` ... `}` blocks and `name: value`
    lines, one per line. Returns the root Msg; raises ValueError."""
    root = Msg()
    stack = [root]
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line == "}":
            if len(stack) == 1:
                raise ValueError("line %d: unbalanced }" % n)
            stack.pop()
            continue
        m = re.fullmatch(r"([\w\[\].]+) \{", line)
        if m:
            child = Msg()
            stack[-1].add(m.group(1), child)
            stack.append(child)
            continue
        m = re.fullmatch(r"([\w\[\].]+): (.*)", line)
        if not m:
            raise ValueError("line %d: cannot parse %r" % (n, raw))
        stack[-1].add(m.group(1), _scalar(m.group(2)))
    if len(stack) != 1:
        raise ValueError("%d unclosed blocks at the end" % (len(stack) - 1))
    return root


# --- the archive's ground truth ----------------------------------------------------

def _norm(v):
    """An argument value, comparable across OTF2, Perfetto and JSON."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, str)):
        return v
    if isinstance(v, float):
        return v
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    return str(v)


def _attrs(ev):
    if not ev.attributes:
        return {}
    return {k.name: _norm(v) for k, v in ev.attributes.items()}


def process_of_group(g):
    """Name of the PROCESS group a location group belongs to."""
    seen = 0
    while g is not None and g.location_group_type != LocationGroupType.PROCESS and seen < 64:
        g = getattr(g, "creating_location_group", None)
        seen += 1
    return g.name if g is not None else None


# The events whose arrival on a location ends "nothing in between" (the
# converter reads these; the others, e.g. ProgramBegin or RmaWinCreate, it
# does not look at).
SEEN = (otf2.events.Enter, otf2.events.Leave, otf2.events.RmaPut, otf2.events.RmaGet,
        otf2.events.RmaOpCompleteBlocking, otf2.events.RmaOpCompleteNonBlocking,
        otf2.events.RmaOpCompleteRemote, otf2.events.Metric, otf2.events.MeasurementOnOff)


def strip_process(name, proc):
    """"device 0" of group "rank 1 device 0" in process "rank 1"."""
    if proc and name.startswith(proc + " ") and len(name) > len(proc) + 1:
        return name[len(proc) + 1:]
    return name


class Truth:
    """What the converter must make of an archive, read with python3-otf2
    (the rules of the module docstring)."""

    def __init__(self, anchor):
        # (proc, loc) -> [[t, name, canonical, attrs, end or None (never left)]]
        self.slices = collections.defaultdict(list)
        self.instants = collections.defaultdict(list)
        # [[proc, loc, host slice t, its name, canonical, device label, bytes, matching id, put,
        #   t of the RMA op, t of its completion (or of the host slice's end; None: never)]]
        self.transfers = []
        self.rma = 0                                    # RmaPut + RmaGet events
        self.counters = collections.defaultdict(list)   # (proc, what, name) -> [(t, value)]
        self.events = 0
        self.errors = []
        per_loc = collections.OrderedDict()
        with otf2.reader.open(anchor) as tr:
            self.global_offset = tr.definitions.clock_properties.global_offset
            resolution = tr.definitions.clock_properties.timer_resolution
            for loc in tr.definitions.locations:
                per_loc[loc] = []
            for loc, ev in tr.events:
                per_loc.setdefault(loc, []).append(ev)
                self.events += 1
        for loc, evs in per_loc.items():
            proc = process_of_group(loc.group)
            key = (proc, loc.name)
            mpit = loc.name.startswith("MPI_T source ")
            stack = []             # open slices: [t, name, canonical, attrs, end]
            xfers = []             # open transfers: (depth of the host slice, win, matching, record)
            held = None            # the Enter not yet known to be a slice or an instant
            for ev in evs:
                if not isinstance(ev, SEEN):
                    continue
                if held is not None:
                    h_ev = held
                    held = None
                    rec = [h_ev.time, h_ev.region.name, h_ev.region.canonical_name, _attrs(h_ev), None]
                    if (isinstance(ev, otf2.events.Leave) and ev.region == h_ev.region
                            and ev.time == h_ev.time and h_ev.region.region_role == RegionRole.ARTIFICIAL):
                        rec[4] = ev.time
                        self.instants[key].append(rec)
                        if mpit:
                            self._mpit_counters(proc, h_ev)
                        continue
                    self.slices[key].append(rec)
                    stack.append((h_ev.region, rec))
                    if isinstance(ev, (otf2.events.RmaPut, otf2.events.RmaGet)) and ev.time == h_ev.time:
                        dev = self._device(ev, proc)
                        if dev is not None:
                            x = [proc, loc.name, rec[0], rec[1], rec[2], dev, ev.bytes, ev.matching_id,
                                 isinstance(ev, otf2.events.RmaPut), ev.time, None]
                            self.transfers.append(x)
                            xfers.append((len(stack), ev.win, ev.matching_id, x))
                if isinstance(ev, otf2.events.Enter):
                    held = ev
                elif isinstance(ev, otf2.events.Leave):
                    # the innermost open slice of this region, and what it encloses
                    d = len(stack)
                    while d > 0 and stack[d - 1][0] != ev.region:
                        d -= 1
                    if d == 0:
                        self.errors.append("%s: Leave(%s) of no open slice" % (key, ev.region.name))
                        continue
                    if d != len(stack):
                        self.errors.append("%s: Leave(%s) closes %d inner slices" % (key, ev.region.name,
                                                                                      len(stack) - d))
                    for x in [x for x in xfers if x[0] >= d]:
                        x[3][10] = ev.time
                        xfers.remove(x)
                    for _, r in stack[d - 1:]:
                        r[4] = ev.time
                    del stack[d - 1:]
                elif isinstance(ev, (otf2.events.RmaPut, otf2.events.RmaGet)):
                    self.rma += 1
                elif isinstance(ev, (otf2.events.RmaOpCompleteBlocking, otf2.events.RmaOpCompleteNonBlocking,
                                     otf2.events.RmaOpCompleteRemote)):
                    for x in xfers:
                        if x[1] == ev.win and x[2] == ev.matching_id:
                            x[3][10] = ev.time
                            xfers.remove(x)
                            break
                elif isinstance(ev, otf2.events.Metric):
                    try:
                        members = ev.metric.members
                    except AttributeError:
                        members = ev.metric.metric_class.members
                    for mem, val in zip(members, ev.values):
                        self.counters[(proc, loc.name, mem.name)].append((ev.time, _norm(val)))
                elif isinstance(ev, otf2.events.MeasurementOnOff):
                    name = "measurement off" if ev.measurement_mode == otf2.enums.MeasurementMode.OFF \
                        else "measurement on"
                    self.instants[key].append([ev.time, name, name, _attrs(ev), ev.time])
            if held is not None:
                self.slices[key].append([held.time, held.region.name, held.region.canonical_name, _attrs(held),
                                         None])
        if resolution != 10 ** 9:
            self._to_ns(resolution)

    def _to_ns(self, resolution):
        """Archive ticks -> ns, as the converter must scale them (exactly,
        for the whole-microsecond or -millisecond clocks of other tools)."""
        def ns(t):
            return None if t is None else t * 10 ** 9 // resolution
        self.global_offset = ns(self.global_offset)
        for table in (self.slices, self.instants):
            for recs in table.values():
                for r in recs:
                    r[0], r[4] = ns(r[0]), ns(r[4])
        for x in self.transfers:
            x[2], x[9], x[10] = ns(x[2]), ns(x[9]), ns(x[10])
        for k, series in self.counters.items():
            self.counters[k] = [(ns(t), v) for t, v in series]

    @staticmethod
    def _device(ev, proc):
        """The device label ("device 0") of an RMA op's remote, when it is a
        location of an ACCELERATOR group, else None."""
        try:
            remote = ev.win.location(ev.remote)
        except Exception:  # noqa: BLE001 - not a device
            return None
        g = getattr(remote, "group", None)
        if g is None or g.location_group_type != LocationGroupType.ACCELERATOR:
            return None
        return strip_process(g.name, proc)

    def _mpit_counters(self, proc, ev):
        """The numeric elements of an MPI_T event instant: one counter per
        (process, event type, element), named "<type>[i]"."""
        region = ev.region.name
        for an, av in _attrs(ev).items():
            if isinstance(av, str) or an.startswith("mpit_"):
                continue
            name = an if an.startswith(region) else "%s.%s" % (region, an)
            self.counters[(proc, "MPI_T", name)].append((ev.time, av))

    def counts(self):
        """slices (host and device side), instants, counter values, flows."""
        return (sum(len(v) for v in self.slices.values()) + len(self.transfers),
                sum(len(v) for v in self.instants.values()),
                sum(len(v) for v in self.counters.values()), len(self.transfers))


# --- running the converter -------------------------------------------------------------

def cli():
    return h.env_path("TEST_TRACER_CLI")


def convert(args, timeout=300):
    """Runs `tracer convert ARGS` (stderr is not a terminal: no progress)."""
    env = h.base_env()
    return subprocess.run([cli(), "convert"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=env, timeout=timeout)


# Runs a command and reports its peak RSS (ru_maxrss from wait4) and wall
# time. A fresh, minimal interpreter forks (not vfork: a vfork child would
# be charged the test's own memory at exec) and the child execs the
# command, so the figure is max(the command's peak, this wrapper's image
# before exec, a few MiB: measured with /bin/true and printed too).
RSS_WRAPPER = """
import os, sys, time
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 2)
    os.execv(sys.argv[3], sys.argv[3:])
_, status, ru = os.wait4(pid, 0)
print("%d %.6f %d" % (os.waitstatus_to_exitcode(status), time.monotonic() - t0, ru.ru_maxrss))
"""


def measured(argv, tmp, timeout=600):
    """(returncode, stdout, stderr, wall s, peak RSS KiB) of argv."""
    out, err = os.path.join(tmp, "measured.out"), os.path.join(tmp, "measured.err")
    p = subprocess.run(["/usr/bin/python3", "-I", "-S", "-c", RSS_WRAPPER, out, err] + list(argv),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=h.base_env(), timeout=timeout)
    try:
        rc, wall, rss = p.stdout.decode().split()
    except ValueError:
        return None, "", p.stderr.decode(errors="replace"), 0.0, 0
    with open(out, "rb") as f:
        so = f.read().decode(errors="replace")
    with open(err, "rb") as f:
        se = f.read().decode(errors="replace")
    return int(rc), so, se, float(wall), int(rss)


def no_crash_output(c, what, err):
    for marker in h.SANITIZER_MARKERS + ("Traceback", "AddressSanitizer", "UndefinedBehaviorSanitizer",
                                         "Segmentation fault", "core dumped"):
        c.check(marker not in err, "%s: %r in stderr: %s" % (what, marker, err[-2000:]))


def parse_line(c, what, out, archive, path, fmt):
    """The stdout line -> (N, S, I, C, F) or None."""
    lines = out.splitlines()
    if not c.check(len(lines) == 1, "%s: stdout is not one line: %r" % (what, out[-2000:])):
        return None
    m = LINE_RE.fullmatch(lines[0])
    if not c.check(m, "%s: stdout line %r does not read 'converted ARCHIVE -> FILE (FORMAT): N events, "
                   "S slices, I instants, C counter values, F flows'" % (what, lines[0])):
        return None
    c.equal(m.group(1), archive, "%s: ARCHIVE in the line" % what)
    c.equal(m.group(2), path, "%s: FILE in the line" % what)
    c.equal(m.group(3), fmt, "%s: FORMAT in the line" % what)
    return tuple(int(m.group(k)) for k in range(4, 9))


# --- Perfetto -----------------------------------------------------------------------------

def protoc_decode(c, what, path, proto):
    protoc = os.environ.get("TEST_PROTOC") or shutil.which("protoc")
    if not c.check(protoc, "protoc not found (Debian: protobuf-compiler, installed by scripts/dev)"):
        return None
    with open(path, "rb") as f:
        p = subprocess.run([protoc, "--decode=perfetto.protos.Trace", "-I", os.path.dirname(proto),
                            os.path.basename(proto)], stdin=f, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=300)
    err = p.stderr.decode(errors="replace")
    if not c.check(p.returncode == 0, "%s: protoc --decode=perfetto.protos.Trace failed (exit %d): %s"
                   % (what, p.returncode, err[-2000:])):
        return None
    c.check(not err.strip(), "%s: protoc said: %s" % (what, err[-2000:]))
    try:
        return parse_text_format(p.stdout.decode("utf-8", errors="replace"))
    except ValueError as e:
        c.check(False, "%s: protoc's text output: %s" % (what, e))
        return None


def annotation_value(a, interned):
    for k in ("int_value", "uint_value", "double_value", "string_value", "pointer_value"):
        if a.has(k):
            return _norm(a.get(k))
    if a.has("bool_value"):
        return 1 if a.get("bool_value") in ("true", 1) else 0
    if a.has("string_value_iid"):
        return interned.get("debug_annotation_string_values", {}).get(a.get("string_value_iid"))
    if a.has("legacy_json_value"):
        return a.get("legacy_json_value")
    return None


class Perfetto:
    """The checked content of a decoded Perfetto trace."""

    def __init__(self, c, what, trace):
        self.tracks = {}                                   # uuid -> descriptor Msg
        self.slices = collections.defaultdict(list)        # uuid -> [dict]
        self.instants = collections.defaultdict(list)
        self.counters = collections.defaultdict(list)      # uuid -> [(ts, value)]
        self.flow_out = collections.defaultdict(list)      # id -> [(uuid, slice)]
        self.flow_in = collections.defaultdict(list)
        self.nslices = self.ninstants = self.ncounters = 0
        seq_ts = {}
        interned = collections.defaultdict(lambda: collections.defaultdict(dict))
        defaults = {}
        stacks = collections.defaultdict(list)
        for n, pkt in enumerate(trace.all("packet")):
            seq = pkt.get("trusted_packet_sequence_id", 0)
            flags = pkt.get("sequence_flags", 0)
            if (isinstance(flags, int) and flags & 1) or pkt.get("incremental_state_cleared") == "true":
                interned[seq] = collections.defaultdict(dict)
                defaults.pop(seq, None)
            if pkt.has("trace_packet_defaults"):
                defaults[seq] = pkt.get("trace_packet_defaults")
            for idata in pkt.all("interned_data"):
                for kind, vals in idata.f.items():
                    for v in vals:
                        interned[seq][kind][v.get("iid")] = v.get("name", v.get("str"))
            if pkt.has("timestamp"):
                ts = pkt.get("timestamp")
                last = seq_ts.get(seq)
                c.check(last is None or ts >= last, "%s: packet %d on sequence %d: timestamp %d before %d"
                        % (what, n, seq, ts, last if last is not None else -1))
                seq_ts[seq] = ts
            if pkt.has("track_descriptor"):
                d = pkt.get("track_descriptor")
                u = d.get("uuid")
                c.check(u is not None, "%s: packet %d: TrackDescriptor without uuid" % (what, n))
                c.check(u not in self.tracks, "%s: track uuid %r declared twice" % (what, u))
                self.tracks[u] = d
            if not pkt.has("track_event"):
                continue
            te = pkt.get("track_event")
            ts = pkt.get("timestamp")
            c.check(ts is not None, "%s: packet %d: TrackEvent without timestamp" % (what, n))
            uuid = te.get("track_uuid")
            if uuid is None and seq in defaults:
                ted = defaults[seq].get("track_event_defaults")
                uuid = ted.get("track_uuid") if ted else None
            if not c.check(uuid in self.tracks, "%s: packet %d: TrackEvent on track %r not declared before"
                           % (what, n, uuid)):
                continue
            typ = te.get("type")
            name = te.get("name")
            if name is None and te.has("name_iid"):
                name = interned[seq]["event_names"].get(te.get("name_iid"))
                c.check(name is not None, "%s: packet %d: name_iid %r not interned on sequence %d"
                        % (what, n, te.get("name_iid"), seq))
            for ci in te.all("category_iids"):
                c.check(ci in interned[seq]["event_categories"], "%s: packet %d: category iid %r not interned"
                        % (what, n, ci))
            args = {}
            for a in te.all("debug_annotations"):
                an = a.get("name")
                if an is None and a.has("name_iid"):
                    an = interned[seq]["debug_annotation_names"].get(a.get("name_iid"))
                    c.check(an is not None, "%s: packet %d: debug annotation name_iid %r not interned"
                            % (what, n, a.get("name_iid")))
                if a.has("string_value_iid"):
                    c.check(a.get("string_value_iid") in interned[seq]["debug_annotation_string_values"],
                            "%s: packet %d: string_value_iid not interned" % (what, n))
                args[an] = annotation_value(a, interned[seq])
            outs = te.all("flow_ids") + te.all("flow_ids_old")
            ins = te.all("terminating_flow_ids") + te.all("terminating_flow_ids_old")
            if typ == "TYPE_SLICE_BEGIN":
                s = {"ts": ts, "name": name, "args": args, "end": None}
                self.slices[uuid].append(s)
                stacks[uuid].append(s)
                self.nslices += 1
                for f in outs:
                    self.flow_out[f].append((uuid, s))
                for f in ins:
                    self.flow_in[f].append((uuid, s))
            elif typ == "TYPE_SLICE_END":
                if c.check(stacks[uuid], "%s: packet %d: SLICE_END on track %r with no open slice"
                           % (what, n, uuid)):
                    s = stacks[uuid].pop()
                    s["end"] = ts
                    c.check(ts >= s["ts"], "%s: slice %r ends at %d before its begin %d"
                            % (what, s["name"], ts, s["ts"]))
                c.check(not outs and not ins, "%s: packet %d: flow ids on a SLICE_END" % (what, n))
            elif typ == "TYPE_INSTANT":
                self.instants[uuid].append({"ts": ts, "name": name, "args": args})
                self.ninstants += 1
                c.check(not outs and not ins, "%s: packet %d: flow ids on an instant (flows connect slices)"
                        % (what, n))
            elif typ == "TYPE_COUNTER":
                c.check(self.tracks[uuid].has("counter"),
                        "%s: packet %d: counter value on track %r, which has no CounterDescriptor"
                        % (what, n, uuid))
                v = te.get("counter_value", te.get("double_counter_value"))
                c.check(v is not None, "%s: packet %d: TYPE_COUNTER without a value" % (what, n))
                self.counters[uuid].append((ts, _norm(v)))
                self.ncounters += 1
            else:
                c.check(False, "%s: packet %d: TrackEvent type %r" % (what, n, typ))
        for u, st in stacks.items():
            c.check(not st, "%s: track %r (%s): %d slices never ended" % (what, u, self.track_name(u), len(st)))
        for u, d in self.tracks.items():
            p = d.get("parent_uuid")
            c.check(p is None or p in self.tracks, "%s: track %r: parent_uuid %r not declared" % (what, u, p))
        # flows
        ids = set(self.flow_out) | set(self.flow_in)
        for f in ids:
            o, i = self.flow_out.get(f, []), self.flow_in.get(f, [])
            c.check(len(o) == 1, "%s: flow %r leaves %d slices (want 1)" % (what, f, len(o)))
            c.check(len(i) == 1, "%s: flow %r ends on %d slices (want 1: terminating_flow_ids)" % (what, f, len(i)))
            if len(o) == 1 and len(i) == 1:
                c.check(o[0][1]["ts"] <= i[0][1]["ts"], "%s: flow %r ends before it starts" % (what, f))
        self.nflows = len(ids)

    def track_name(self, u):
        d = self.tracks.get(u)
        if d is None:
            return None
        if d.has("name"):
            return d.get("name")
        if d.has("thread"):
            return d.get("thread").get("thread_name")
        if d.has("process"):
            return d.get("process").get("process_name")
        return None

    def process_of(self, u):
        """The process name of a track (its own process descriptor, its
        thread's pid, or its parents'), else None."""
        pid_names = self.__dict__.get("_pid_names")
        if pid_names is None:
            pid_names = self._pid_names = {}
            for d in self.tracks.values():
                if d.has("process"):
                    pr = d.get("process")
                    pid_names[pr.get("pid")] = pr.get("process_name", d.get("name"))
        seen = 0
        while u is not None and seen < 64:
            d = self.tracks.get(u)
            if d is None:
                return None
            if d.has("process"):
                return pid_names.get(d.get("process").get("pid"))
            if d.has("thread"):
                return pid_names.get(d.get("thread").get("pid"))
            u = d.get("parent_uuid")
            seen += 1
        return None

    def track_keys(self):
        """(process name, track name) -> [uuid]"""
        out = collections.defaultdict(list)
        for u in self.tracks:
            out[(self.process_of(u), self.track_name(u))].append(u)
        return out


class View:
    """One output file, format-independent: tracks (id -> (process, name)),
    their slices {"ts", "end", "name", "args"} and instants, counter series
    (id -> (process, name, [(ts, value)])) and flows [(from track, from
    slice, to track, to slice)], timestamps in ns."""

    def __init__(self):
        self.tracks = {}
        self.slices = collections.defaultdict(list)
        self.instants = collections.defaultdict(list)
        self.counters = {}
        self.flows = []
        self.nflows = 0

    def numbers(self):
        return (sum(len(v) for v in self.slices.values()), sum(len(v) for v in self.instants.values()),
                sum(len(v[2]) for v in self.counters.values()), self.nflows)


def perfetto_view(pf):
    v = View()
    for u in pf.tracks:
        v.tracks[u] = (pf.process_of(u), pf.track_name(u))
    v.slices, v.instants = pf.slices, pf.instants
    for u, s in pf.counters.items():
        v.counters[u] = (pf.process_of(u), pf.track_name(u), s)
    for f, o in pf.flow_out.items():
        i = pf.flow_in.get(f, [])
        if len(o) == 1 and len(i) == 1:
            v.flows.append((o[0][0], o[0][1], i[0][0], i[0][1]))
    v.nflows = pf.nflows
    return v


def compare_events(c, what, kind, key, want, got, delta):
    """want: [(t, name, canonical, attrs, end)]; got: [{"ts", "name", "args"
    (, "end": slices)}]. A slice's end is checked where the archive has one.
    Returns the delta (got ts - archive time) seen."""
    if not c.equal(len(got), len(want), "%s: %s / %s: number of %s" % (what, key[0], key[1], kind)):
        return delta
    for (t, name, canonical, attrs, end), g in zip(want, got):
        if delta is None:
            delta = g["ts"] - t
        c.check(g["ts"] - t == delta, "%s: %s / %s: %s %r at archive time %d is at %d: not archive time + %d "
                "like the rest" % (what, key[0], key[1], kind, name, t, g["ts"], delta))
        if "end" in g and end is not None:
            c.check(g["end"] is not None and g["end"] - end == delta, "%s: %s / %s: %s %r left at archive time %d "
                    "ends at %r: not archive time + %d" % (what, key[0], key[1], kind, name, end, g["end"], delta))
        c.check(g["name"] in (name, canonical), "%s: %s / %s: %s named %r, the region is %r (canonical %r)"
                % (what, key[0], key[1], kind, g["name"], name, canonical))
        for an, av in attrs.items():
            gv = g["args"].get(an, "<absent>")
            c.check(same_value(gv, av), "%s: %s / %s: %s %r: argument %r = %r, the attribute is %r"
                    % (what, key[0], key[1], kind, name, an, gv, av))
    return delta


def same_value(got, want):
    if isinstance(want, float) or isinstance(got, float):
        return (isinstance(got, (int, float)) and isinstance(want, (int, float))
                and abs(float(got) - float(want)) <= 1e-9 * max(1.0, abs(float(want))))
    return got == want


def compare(c, what, truth, v, line, want_line=None):
    """The archive's truth against a View. Returns the time delta."""
    by_key = collections.defaultdict(list)
    for u, k in v.tracks.items():
        by_key[k].append(u)
    delta = None
    locs = set(truth.slices) | set(truth.instants)
    for key in sorted(locs, key=str):
        uu = [u for u in by_key.get(key, [])]
        if not c.check(len(uu) == 1, "%s: location %r of process %r: %d tracks of that name in that process "
                       "(want 1); tracks: %r" % (what, key[1], key[0], len(uu), sorted(map(str, by_key)))):
            continue
        u = uu[0]
        delta = compare_events(c, what, "slices", key, truth.slices.get(key, []), v.slices.get(u, []), delta)
        delta = compare_events(c, what, "instants", key, truth.instants.get(key, []), v.instants.get(u, []),
                               delta)
    # tracks with events that are no location: the device transfer tracks
    known = {by_key[k][0] for k in locs if len(by_key.get(k, [])) == 1}
    for u in set(v.slices) | set(v.instants):
        if u in known or not (v.slices.get(u) or v.instants.get(u)):
            continue
        proc, name = v.tracks.get(u, (None, None))
        c.check(TRANSFERS_RE.fullmatch(name or ""), "%s: track %r of process %r has slices or instants but is "
                "no location of the archive and no '<device> transfers' track" % (what, name, proc))
        c.equal(len(v.instants.get(u, [])), 0, "%s: instants on %r of %r" % (what, name, proc))
    # flows: per transfer one flow, from the host data op slice to a slice
    # of "<device> transfers[ k]" of the same process, from the RMA op to
    # its completion, with the op's bytes, matching id and direction
    c.equal(v.nflows, truth.rma, "%s: flows (vs RmaPut + RmaGet events in the archive)" % what)
    d0 = delta or 0
    got = collections.Counter()
    for ou, os_, iu, is_ in v.flows:
        op, on = v.tracks.get(ou, (None, None))
        ip, iname = v.tracks.get(iu, (None, None))
        m = TRANSFERS_RE.fullmatch(iname or "")
        c.check(m, "%s: a flow ends on track %r, not a '<device> transfers' track" % (what, iname))
        c.check(ip == op, "%s: a flow goes from process %r to %r" % (what, op, ip))
        c.check(os_["ts"] <= is_["ts"], "%s: a flow ends (%d) before it starts (%d)" % (what, is_["ts"], os_["ts"]))
        a = is_["args"]
        got[(op, on, os_["ts"] - d0, os_["name"], m.group(1) if m else None, a.get("bytes"), a.get("matching_id"),
             a.get("direction"), is_["ts"] - d0, None if is_.get("end") is None else is_["end"] - d0)] += 1
    want = collections.Counter()
    alias = {}
    for proc, loc, t, name, canonical, dev, nbytes, matching, put, t_op, t_done in truth.transfers:
        k = (proc, loc, t, name, dev, nbytes, matching, "to device" if put else "from device", t_op, t_done)
        want[k] += 1
        alias[k[:3] + (canonical,) + k[4:]] = k
    got = collections.Counter({alias.get(k, k): n for k, n in got.items()})
    diff_got, diff_want = got - want, want - got
    c.check(not diff_got and not diff_want, "%s: flows (process, host location, begin and name of the host slice, "
            "device; the device slice's bytes, matching_id, direction, begin, end) vs the archive's transfers: "
            "only in the file %r; only in the archive %r" % (what, sorted(diff_got.items(), key=str)[:6],
                                                             sorted(diff_want.items(), key=str)[:6]))
    # counters: every archive series is exactly one counter of its process
    used = set()
    for (proc, where, name), series in sorted(truth.counters.items(), key=str):
        want_s = [(t + (delta or 0), float(x)) for t, x in series]
        cands = [u for u, (p, _, s) in v.counters.items() if u not in used and p == proc
                 and [(ts, None if x is None else float(x)) for ts, x in s] == want_s]
        if c.check(cands, "%s: %r of %s / %s (%d values, first %r): no counter of that process has these values "
                   "at these times; counters: %r"
                   % (what, name, proc, where, len(series), series[:3],
                      sorted((p, n, len(s), s[:2]) for p, n, s in v.counters.values()))):
            used.add(cands[0])
    extra = [(p, n) for u, (p, n, _) in v.counters.items() if u not in used]
    c.check(not extra, "%s: counters that are no metric or MPI_T element of the archive: %r" % (what, extra[:10]))
    # the numbers
    c.equal(v.numbers(), truth.counts(), "%s: slices (regions that are not instants + one per transfer), "
            "instants, counter values, flows vs the archive" % what)
    if line:
        c.equal(line, (truth.events,) + v.numbers(), "%s: numbers of the stdout line (events, slices, instants, "
                "counter values, flows) vs the archive's events and the file" % what)
    if line and want_line:
        c.equal(line, want_line, "%s: numbers of the stdout line vs the perfetto conversion's" % what)
    return delta


# --- JSON ---------------------------------------------------------------------------------

def json_view(c, what, path):
    """Parses and checks the JSON file's own structure; its View or None."""
    try:
        with open(path) as f:
            doc = json.load(f, parse_float=decimal.Decimal)
    except (ValueError, OSError) as e:
        c.check(False, "%s: not JSON: %s" % (what, e))
        return None
    if not c.check(isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list),
                   "%s: top level is not {\"traceEvents\": [...]}" % what):
        return None
    c.equal(doc.get("displayTimeUnit"), "ns", "%s: displayTimeUnit" % what)
    evs = doc["traceEvents"]
    pnames, tnames = {}, {}
    for e in evs:
        if e.get("ph") == "M":
            if e.get("name") == "process_name":
                pnames[e.get("pid")] = (e.get("args") or {}).get("name")
            elif e.get("name") == "thread_name":
                tnames[(e.get("pid"), e.get("tid"))] = (e.get("args") or {}).get("name")

    def ns(e):
        ts = e.get("ts")
        c.check(isinstance(ts, decimal.Decimal) and ts.as_tuple().exponent == -3,
                "%s: ts %r of a %r event is not microseconds with 3 decimals" % (what, ts, e.get("ph")))
        try:
            return int(decimal.Decimal(ts) * 1000)
        except (TypeError, ValueError, decimal.InvalidOperation):
            return 0

    v = View()
    stacks = collections.defaultdict(list)
    fs, ff = collections.defaultdict(list), collections.defaultdict(list)
    for e in evs:
        ph = e.get("ph")
        if ph == "M":
            continue
        t = ns(e)
        key = (e.get("pid"), e.get("tid"))
        if ph in ("B", "i", "I", "s", "f"):
            v.tracks.setdefault(key, (pnames.get(key[0]), tnames.get(key)))
        args = {k: _norm(x) for k, x in (e.get("args") or {}).items()}
        if ph == "B":
            s = {"ts": t, "name": e.get("name"), "args": args, "end": None}
            v.slices[key].append(s)
            stacks[key].append(s)
        elif ph == "E":
            if c.check(stacks[key], "%s: E on pid %r tid %r with no open B" % (what, key[0], key[1])):
                s = stacks[key].pop()
                s["end"] = t
                c.check(t >= s["ts"], "%s: E at %d before its B at %d" % (what, t, s["ts"]))
        elif ph in ("i", "I"):
            v.instants[key].append({"ts": t, "name": e.get("name"), "args": args})
        elif ph == "C":
            ck = (e.get("pid"), e.get("name"))
            nums = [x for x in args.values() if isinstance(x, (int, float))]
            c.check(len(nums) == 1, "%s: C event %r with args %r (want one number)" % (what, e.get("name"), args))
            v.counters.setdefault(ck, (pnames.get(ck[0]), e.get("name"), []))[2].append(
                (t, nums[0] if len(nums) == 1 else None))
        elif ph == "s":
            fs[(e.get("cat"), e.get("id"))].append((key, t, e))
        elif ph == "f":
            ff[(e.get("cat"), e.get("id"))].append((key, t, e))
        else:
            c.check(False, "%s: event phase %r" % (what, ph))
    for key, st in stacks.items():
        c.check(not st, "%s: pid %r tid %r: %d B never ended" % (what, key[0], key[1], len(st)))

    def slice_at(key, t, bp):
        """The slice of @key a flow event at @t binds to: the innermost one
        enclosing t ("s", and "f" with "bp": "e"), else one beginning at t."""
        best = None
        for s in v.slices.get(key, []):
            if s["end"] is not None and s["ts"] <= t <= s["end"]:
                if bp != "e" and s["ts"] == t:
                    return s
                best = s
        return best

    ids = set(fs) | set(ff)
    for fid in sorted(ids, key=str):
        a, b = fs.get(fid, []), ff.get(fid, [])
        if not c.check(len(a) == 1 and len(b) == 1, "%s: flow %r: %d 's' and %d 'f' events (want 1 and 1)"
                       % (what, fid, len(a), len(b))):
            continue
        (ka, ta, _), (kb, tb, eb) = a[0], b[0]
        sa, sb = slice_at(ka, ta, "e"), slice_at(kb, tb, eb.get("bp"))
        c.check(sa is not None, "%s: flow %r starts at %d on pid %r tid %r outside any slice" % (what, fid, ta,
                                                                                               ka[0], ka[1]))
        c.check(sb is not None, "%s: flow %r ends at %d on pid %r tid %r outside any slice" % (what, fid, tb,
                                                                                             kb[0], kb[1]))
        if sa is not None and sb is not None:
            v.flows.append((ka, sa, kb, sb))
    v.nflows = len(ids)
    return v


def check_json(c, what, truth, path, pv, line_pf, line):
    v = json_view(c, what, path)
    if v is None:
        return
    compare(c, what, truth, v, line, line_pf)
    if pv is not None:
        c.equal(v.numbers(), pv.numbers(), "%s: B, i, C events and flows vs the perfetto file's slices, instants, "
                "counter values and flows" % what)


# --- archives -------------------------------------------------------------------------------

def make_archives(c, tmp):
    """[(label, anchor)] of the archives this build can make, and the
    stdout of many_events for the "user" archive."""
    out = []
    lib = ":".join(h.preload_list())

    def done(label, p, want_rc, d):
        anchor = os.path.join(d, "traces.otf2")
        ok = c.check(p.returncode == want_rc and os.path.isfile(anchor),
                     "%s: the traced run failed (exit %d, want %d; archive %s): %s"
                     % (label, p.returncode, want_rc, "present" if os.path.isfile(anchor) else "absent",
                        p.stderr.decode(errors="replace")[-2000:]))
        if ok:
            out.append((label, anchor))

    many = h.env_path("TEST_MANY_EVENTS_BIN")
    d = os.path.join(tmp, "user")
    p = h.run([many, "2", str(SMALL_ITERATIONS), str(SMALL_MARK_EVERY)], tmp, traced=True, output=d)
    done("user", p, 0, d)
    user_stdout = p.stdout.decode(errors="replace")

    basic = os.environ.get("TEST_BASIC_BIN")
    link = os.environ.get("TEST_LINK_MAIN_BIN")
    if not basic:
        c.note("no offload compiler: the basic and link archives are not made")
    if basic:
        d = os.path.join(tmp, "basic")
        done("basic", h.run([basic], tmp, traced=True, output=d), 0, d)
    if link:
        d = os.path.join(tmp, "link")
        done("link", h.run([link], tmp, traced=True, output=d), 0, d)
    omp = os.environ.get("TEST_OMP_STATES_BIN")
    if omp:
        # host OpenMP states: nested parallel/critical regions, <OMP-...>
        # states, the OMP work / OMP wait metrics; machine mode adds
        # zero-length ARTIFICIAL task events, ThreadFork/Join and regions
        # still open at the end
        for label, case, mode in (("omp", "critical", "user"), ("omp-machine", "tasks", "machine")):
            d = os.path.join(tmp, label)
            done(label, h.run([omp, case], tmp, traced=True, output=d,
                              extra_env={"TRACER_MODE": mode, "OMP_WAIT_POLICY": "passive"}), 0, d)
    mpio, mpiexec = os.environ.get("TEST_MPIT_OFFLOAD_BIN"), os.environ.get("TEST_MPIEXEC")
    if mpio and mpiexec:
        d = os.path.join(tmp, "mpi")
        env = h.base_env()
        env["HYDRA_LAUNCHER"] = "fork"
        env["TRACER_OUTPUT"] = d
        p = subprocess.run([mpiexec, "-n", "2", "env", "LD_PRELOAD=" + lib, mpio], cwd=tmp, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180)
        done("mpi", p, 4, d)
    else:
        c.note("no MPICH mpiexec or mpit_offload: the MPI job archive is not made")
    mpit, double = os.environ.get("TEST_MPIT_EVENTS_BIN"), os.environ.get("TEST_MPIT_DOUBLE_LIB")
    if mpit and double:
        d = os.path.join(tmp, "mpit")
        os.makedirs(os.path.join(tmp, "mpit-log"))
        env = {"LD_PRELOAD": lib + ":" + double, "MPIT_DOUBLE_SCRIPT": MPIT_SCRIPT,
               "MPIT_DOUBLE_LOG": os.path.join(tmp, "mpit-log", "double.%p.log")}
        done("mpit", h.run([mpit, "main", "5"], tmp, traced=False, output=d, extra_env=env), 5, d)
    else:
        c.note("no MPI_T test double or mpit_events: the MPI_T archive is not made")
    d = os.path.join(tmp, "foreign")
    out.append(("foreign", write_foreign(d)))
    return out, user_stdout


def write_foreign(d):
    """An archive tracer did not write (python3-otf2's writer, as another
    tool's would be): a microsecond clock with a global offset, two
    processes of two threads, nested FUNCTION regions (one of them taking no
    time: a slice, not an instant), an ARTIFICIAL zero-length region with a
    string and a double attribute (an instant), an MPI region, a metric.
    Returns its anchor."""
    from otf2.enums import LocationType, Paradigm, RegionRole, Type
    with otf2.writer.open(d, timer_resolution=1000000) as trace:
        root = trace.definitions.system_tree_node("cluster")
        regions = {
            "main": trace.definitions.region("main", region_role=RegionRole.FUNCTION, paradigm=Paradigm.USER),
            "solve": trace.definitions.region("solve", region_role=RegionRole.FUNCTION, paradigm=Paradigm.USER),
            "nothing": trace.definitions.region("nothing", region_role=RegionRole.FUNCTION,
                                                paradigm=Paradigm.USER),
            "MPI_Barrier": trace.definitions.region("MPI_Barrier", region_role=RegionRole.BARRIER,
                                                    paradigm=Paradigm.MPI),
            "phase": trace.definitions.region("phase", region_role=RegionRole.ARTIFICIAL, paradigm=Paradigm.USER),
        }
        what = trace.definitions.attribute("what", "a string", Type.STRING)
        load = trace.definitions.attribute("load", "a double", Type.DOUBLE)
        metric = trace.definitions.metric("flops", unit="flop/s")
        t0 = 1000000
        for p in range(2):
            group = trace.definitions.location_group("foreign process %d" % p, system_tree_parent=root)
            for k in range(2):
                loc = trace.definitions.location("thread %d" % k, group=group, type=LocationType.CPU_THREAD)
                w = trace.event_writer_from_location(loc)
                t = t0 + 10 * p + k
                w.enter(t, regions["main"])
                for i in range(3 + p + k):
                    w.enter(t + 100 * i + 1, regions["solve"])
                    w.enter(t + 100 * i + 2, regions["nothing"])
                    w.leave(t + 100 * i + 2, regions["nothing"])
                    w.enter(t + 100 * i + 3, regions["phase"], attributes={what: "step %d" % i, load: 0.5 * i})
                    w.leave(t + 100 * i + 3, regions["phase"])
                    w.metric(t + 100 * i + 4, metric, float(i * 1000 + k))
                    w.leave(t + 100 * i + 50, regions["solve"])
                w.enter(t + 900, regions["MPI_Barrier"])
                w.leave(t + 950, regions["MPI_Barrier"])
                w.leave(t + 1000, regions["main"])
    return os.path.join(d, "traces.otf2")


def check_archive(c, tmp, label, anchor, proto):
    """Parts 1 and 2 for one archive. Returns its Truth."""
    truth = Truth(anchor)
    c.extend(truth.errors, "%s: archive" % label)
    line_pf = pf = None
    pft = os.path.join(tmp, label + ".pftrace")
    p = convert(["--format", "perfetto", "-o", pft, anchor])
    what = "%s perfetto" % label
    err = p.stderr.decode(errors="replace")
    no_crash_output(c, what, err)
    if c.check(p.returncode == 0, "%s: exit %d: %s" % (what, p.returncode, err[-2000:])):
        c.equal(err, "", "%s: stderr" % what)
        line_pf = parse_line(c, what, p.stdout.decode(errors="replace"), anchor, pft, "perfetto")
        if proto:
            dec = protoc_decode(c, what, pft, proto)
            if dec is not None:
                pf = perfetto_view(Perfetto(c, what, dec))
                compare(c, what, truth, pf, line_pf)
    js = os.path.join(tmp, label + ".json")
    p = convert(["--format", "json", "-o", js, anchor])
    what = "%s json" % label
    err = p.stderr.decode(errors="replace")
    no_crash_output(c, what, err)
    if c.check(p.returncode == 0, "%s: exit %d: %s" % (what, p.returncode, err[-2000:])):
        c.equal(err, "", "%s: stderr" % what)
        line = parse_line(c, what, p.stdout.decode(errors="replace"), anchor, js, "json")
        check_json(c, what, truth, js, pf, line_pf, line)
    # Read in turns (--locations 1 and 2): every location, or every pair,
    # a run of its own, each run its own sequence in the Perfetto file;
    # flows from a thread read in one run to a device read in another.
    for n, fmt, ext in ((1, "perfetto", ".pftrace"), (2, "json", ".json")):
        out = os.path.join(tmp, "%s.at%d%s" % (label, n, ext))
        p = convert(["--locations", str(n), "--format", fmt, "-o", out, anchor])
        what = "%s %s, --locations %d" % (label, fmt, n)
        err = p.stderr.decode(errors="replace")
        no_crash_output(c, what, err)
        if not c.check(p.returncode == 0, "%s: exit %d: %s" % (what, p.returncode, err[-2000:])):
            continue
        c.equal(err, "", "%s: stderr" % what)
        got = parse_line(c, what, p.stdout.decode(errors="replace"), anchor, out, fmt)
        if fmt == "json":
            check_json(c, what, truth, out, pf, line_pf, got)
        elif proto:
            dec = protoc_decode(c, what, out, proto)
            if dec is not None:
                compare(c, what, truth, perfetto_view(Perfetto(c, what, dec)), got, line_pf)
    c.note("%s: %d events -> %d slices, %d instants, %d counter values, %d flows"
           % ((label, truth.events) + truth.counts()))
    return truth


# --- 3. errors -----------------------------------------------------------------------------

def check_errors(c, tmp, src_dir, proto):
    def one_line_error(what, p, want_rc, out_path):
        err = p.stderr.decode(errors="replace")
        no_crash_output(c, what, err)
        if want_rc is None:
            c.check(p.returncode not in (0, None) and p.returncode > 0,
                    "%s: exit %r, want a refusal (1 or 2)" % (what, p.returncode))
        else:
            c.equal(p.returncode, want_rc, "%s: exit status" % what)
        lines = err.splitlines()
        c.check(len(lines) == 1 and lines[0].startswith("tracer: convert: "),
                "%s: stderr is not one 'tracer: convert: ...' line: %r" % (what, err[-2000:]))
        c.equal(p.stdout.decode(errors="replace"), "", "%s: stdout" % what)

    damages = []

    def damaged(name):
        d = os.path.join(tmp, "damaged-" + name)
        shutil.copytree(src_dir, d)
        return d

    d = damaged("evt")
    evts = sorted(f for f in os.listdir(os.path.join(d, "traces")) if f.endswith(".evt"))
    big = max(evts, key=lambda f: os.path.getsize(os.path.join(d, "traces", f)))
    path = os.path.join(d, "traces", big)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    damages.append(("truncated traces/%s" % big, d))
    d = damaged("def")
    os.unlink(os.path.join(d, "traces.def"))
    damages.append(("traces.def deleted", d))
    d = damaged("anchor")
    with open(os.path.join(d, "traces.otf2"), "wb") as f:
        f.write(b"this is not an OTF2 anchor file\n" + bytes(range(256)) * 4)
    damages.append(("garbage anchor", d))
    damages.append(("no such archive", os.path.join(tmp, "no-such-archive")))
    for what, d in damages:
        for fmt, ext in (("perfetto", ".pftrace"), ("json", ".json")):
            out = os.path.join(tmp, "damaged-out" + ext)
            p = convert(["--format", fmt, "-o", out, d], timeout=120)
            one_line_error("damaged archive (%s), %s" % (what, fmt), p, 1, out)
            c.check(not os.path.exists(out), "damaged archive (%s), %s: output file %s left behind"
                    % (what, fmt, out))
            if os.path.exists(out):
                os.unlink(out)
            c.check(not [f for f in os.listdir(tmp) if f.startswith("damaged-out")],
                    "damaged archive (%s), %s: temporary files left in the output directory: %r"
                    % (what, fmt, [f for f in os.listdir(tmp) if f.startswith("damaged-out")]))

    # existing output file
    out = os.path.join(tmp, "exists.pftrace")
    with open(out, "w") as f:
        f.write("keep me\n")
    p = convert(["-o", out, src_dir])
    one_line_error("existing output file without --force", p, None, out)
    with open(out, "rb") as f:
        kept = f.read()
    c.check(kept == b"keep me\n", "existing output file without --force: overwritten (%d bytes now, starting %r)"
            % (len(kept), kept[:40]))
    p = convert(["--force", "-o", out, src_dir])
    c.equal(p.returncode, 0, "existing output file with --force: exit status (%s)"
            % p.stderr.decode(errors="replace")[-500:])
    with open(out, "rb") as f:
        c.check(f.read(8) != b"keep me\n", "existing output file with --force: not overwritten")
    # -o *.pftrace without --format: Perfetto
    if proto:
        dec = protoc_decode(c, "-o *.pftrace without --format", out, proto)
        if dec is not None:
            c.check(dec.all("packet"), "-o *.pftrace without --format: no packets")

    # -o *.json without --format: JSON
    js = os.path.join(tmp, "inferred.json")
    p = convert(["-o", js, src_dir])
    if c.check(p.returncode == 0, "-o *.json without --format: exit %d: %s"
               % (p.returncode, p.stderr.decode(errors="replace")[-500:])):
        c.check(p.stdout.decode(errors="replace").rstrip("\n").endswith("flows")
                and " (json): " in p.stdout.decode(errors="replace"),
                "-o *.json without --format: stdout %r does not say json" % p.stdout[-300:])
        try:
            with open(js) as f:
                c.check("traceEvents" in json.load(f), "-o *.json without --format: no traceEvents")
        except ValueError as e:
            c.check(False, "-o *.json without --format: not JSON: %s" % e)

    # usage errors
    o = os.path.join(tmp, "usage.pftrace")
    for args in ([], [src_dir], ["-o", o], ["-o"], [src_dir, "-o"], ["--bogus", "-o", o, src_dir],
                 ["--format", "xml", "-o", o, src_dir], ["--format"], [src_dir, src_dir, "-o", o],
                 ["--locations", "0", "-o", o, src_dir], ["--locations=65537", "-o", o, src_dir],
                 ["--locations", "4x", "-o", o, src_dir], ["--locations"]):
        p = convert(args)
        one_line_error("usage error `tracer convert %s`" % " ".join(a.replace(tmp, "TMP") for a in args), p, 2, o)
        c.check(not os.path.exists(o), "usage error %r: output file created" % (args,))
        if os.path.exists(o):
            os.unlink(o)
    for flag in ("--help", "-h"):
        p = convert([flag])
        c.equal(p.returncode, 0, "convert %s: exit status" % flag)
        c.check("ui.perfetto.dev" in p.stdout.decode(errors="replace"),
                "convert %s: stdout does not mention ui.perfetto.dev: %r" % (flag, p.stdout[-500:]))
        c.equal(p.stderr.decode(errors="replace"), "", "convert %s: stderr" % flag)


# --- 4. the large synthetic archive ----------------------------------------------------------

def check_large(c, tmp, user_truth, user_plan):
    many = h.env_path("TEST_MANY_EVENTS_BIN")
    d = os.path.join(tmp, "big")
    t0 = time.monotonic()
    p = h.run([many, str(BIG_THREADS), str(BIG_ITERATIONS)], tmp, traced=True, output=d, timeout=300)
    t_make = time.monotonic() - t0
    out = p.stdout.decode(errors="replace")
    if not c.check(p.returncode == 0 and os.path.isfile(os.path.join(d, "traces.otf2")),
                   "large: many_events failed (exit %d): %s %s" % (p.returncode, out,
                                                                   p.stderr.decode(errors="replace")[-2000:])):
        return
    plan = parse_plan(c, "large", out)
    if plan is None:
        return
    extra = None
    if user_truth is not None and user_plan is not None:
        extra = user_truth.events - user_plan["events"]
    pft = os.path.join(tmp, "big.pftrace")
    rc, so, se, wall, rss = measured([cli(), "convert", "--format", "perfetto", "-o", pft, d], tmp)
    base_rss = measured(["/bin/true"], tmp)[4]
    no_crash_output(c, "large", se)
    if not c.check(rc == 0, "large: convert exit %r: %s" % (rc, se[-2000:])):
        return
    c.equal(se, "", "large: convert stderr")
    line = parse_line(c, "large", so, d, pft, "perfetto")
    if line is None:
        return
    n, s, i, cv, f = line
    if extra is not None:
        c.equal(n, plan["events"] + extra, "large: events converted (the program's %d + the %d the archive "
                "adds, as in the small archive)" % (plan["events"], extra))
    c.check(n >= plan["events"], "large: events converted %d < the program's %d" % (n, plan["events"]))
    c.equal(s + i, plan["regions"] + plan["marks"], "large: slices + instants vs the program's regions + marks")
    c.check(i >= plan["marks"], "large: instants %d < marks %d" % (i, plan["marks"]))
    c.equal((cv, f), (0, 0), "large: counter values and flows")
    arch = sum(os.path.getsize(os.path.join(r, x)) for r, _, fs in os.walk(d) for x in fs)
    size = os.path.getsize(pft)
    c.note("large archive: %d events (%d threads x %d iterations) made in %.1f s, archive %.0f MiB; "
           "convert to perfetto: %.2f s = %.2fM events/s, peak RSS %.1f MiB (bound %d MiB%s; the measuring "
           "wrapper alone: %.1f MiB), output %.0f MiB"
           % (n, BIG_THREADS, BIG_ITERATIONS, t_make, arch / 1048576, wall, n / wall / 1e6, rss / 1024,
              RSS_BOUND_KIB // 1024, ", not applied: sanitizer build" if SANITIZED else "", base_rss / 1024,
              size / 1048576))
    if SANITIZED:
        c.note("sanitizer build: the large archive has %d iterations instead of 2,000,000 and the RSS bound "
               "is not checked (the sanitizer runtimes' own memory)" % BIG_ITERATIONS)
        return
    c.check(n >= 10000000, "large: %d events, want >= 10,000,000" % n)
    c.check(rss < RSS_BOUND_KIB, "large: peak RSS of tracer convert %.1f MiB >= %d MiB: it does not stream "
            "(archive %.0f MiB, output %.0f MiB)" % (rss / 1024, RSS_BOUND_KIB // 1024, arch / 1048576,
                                                     size / 1048576))
    c.check(arch > RSS_BOUND_KIB * 1024 and size > 2 * RSS_BOUND_KIB * 1024,
            "large: the archive (%d B) must be larger than the bound and the output (%d B) twice as large"
            % (arch, size))


def parse_plan(c, what, out):
    m = re.fullmatch(r"many_events: threads (\d+) iterations (\d+) regions (\d+) marks (\d+) events (\d+) "
                     r"failed (\d+)\n", out)
    if not c.check(m, "%s: many_events stdout %r" % (what, out)):
        return None
    plan = {k: int(m.group(j)) for j, k in enumerate(("threads", "iterations", "regions", "marks", "events",
                                                      "failed"), 1)}
    c.equal(plan["failed"], 0, "%s: many_events failed calls" % what)
    return plan


def main():
    c = h.Checker("convert")
    proto = os.environ.get("TEST_PERFETTO_PROTO", "")
    have_proto = bool(proto) and os.path.isfile(proto)
    if not have_proto:
        c.note("the Perfetto schema %r is absent: the Perfetto files are not decoded" % proto)
    tmp = tempfile.mkdtemp(prefix="tracer-test-convert-")
    t0 = time.monotonic()
    try:
        archives, user_stdout = make_archives(c, tmp)
        truths = {}
        for label, anchor in archives:
            truths[label] = check_archive(c, tmp, label, anchor, proto if have_proto else None)
        user = dict(archives).get("user")
        user_plan = None
        if user:
            user_plan = parse_plan(c, "user", user_stdout)
            if user_plan:
                ts_, ti, _, _ = truths["user"].counts()
                c.equal(ts_ + ti, user_plan["regions"] + user_plan["marks"],
                        "user: regions + marks in the archive vs the program's")
            check_errors(c, tmp, os.path.dirname(user), proto if have_proto else None)
        check_large(c, tmp, truths.get("user"), user_plan)
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.note("took %.1f s" % (time.monotonic() - t0))
    if not have_proto and not c.failures:
        for n in c.notes:
            print("NOTE:", n)
        print("SKIP: %s is absent (the project's ../shared/perfetto/perfetto_trace.proto): the Perfetto output "
              "could not be decoded; the other checks passed" % proto)
        sys.exit(h.SKIP)
    c.finish()


if __name__ == "__main__":
    main()
