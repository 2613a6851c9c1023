"""Small reader for tracer's OTF2 archives, built on the `otf2` Python module.

Only /usr/bin/python3 (Debian's python3-otf2) provides `otf2`.  The whole
trace is loaded into memory once; the helpers below work on that copy and
use canonical region names and roles (docs/trace-model.md), never display
names.
"""

import collections
import os

import re

import otf2
from otf2.enums import LocationType

Transfer = collections.namedtuple(
    "Transfer",
    "kind location time win remote_location bytes matching_id")
"""kind is 'to device' (RmaPut) or 'from device' (RmaGet)."""


def anchor_path(path):
    """Accept either the archive directory or the .otf2 anchor file."""
    if os.path.isdir(path):
        return os.path.join(path, "traces.otf2")
    return path


def _enum_name(value):
    return getattr(value, "name", str(value))


class Trace:
    def __init__(self, path):
        self.path = anchor_path(path)
        self.events = collections.OrderedDict()   # location -> [event, ...]
        with otf2.reader.open(self.path) as trace:
            self.definitions = trace.definitions
            self.locations = list(trace.definitions.locations)
            self.regions = list(trace.definitions.regions)
            self.attributes = list(trace.definitions.attributes)
            self.rma_wins = list(trace.definitions.rma_wins)
            self.clock_properties = trace.definitions.clock_properties
            for loc in self.locations:
                self.events[loc] = []
            for location, event in trace.events:
                self.events.setdefault(location, []).append(event)

    # ---- definitions ---------------------------------------------------
    def locations_of_type(self, loc_type):
        return [loc for loc in self.locations if loc.type == loc_type]

    def cpu_threads(self):
        return self.locations_of_type(LocationType.CPU_THREAD)

    @staticmethod
    def stream_device(loc):
        """Device number of a 'device <d> stream' or 'device <d> stream <k>'
        location (extra streams hold kernels that overlap in time), else None."""
        m = re.fullmatch(r"device (\d+) stream(?: (\d+))?", loc.name)
        return int(m.group(1)) if m else None

    def streams_of_device(self):
        """{device number: [stream locations]} over all ACCELERATOR_STREAMs."""
        result = {}
        for loc in self.locations_of_type(LocationType.ACCELERATOR_STREAM):
            d = self.stream_device(loc)
            if d is not None:
                result.setdefault(d, []).append(loc)
        return result

    def device_streams(self):
        """{device number: location} for ACCELERATOR_STREAM locations named
        'device <d> stream'."""
        result = {}
        for loc in self.locations_of_type(LocationType.ACCELERATOR_STREAM):
            parts = loc.name.split()
            if len(parts) == 3 and parts[0] == "device" and parts[2] == "stream":
                result[int(parts[1])] = loc
        return result

    def regions_by_canonical(self, canonical_name):
        return [r for r in self.regions if r.canonical_name == canonical_name]

    # The RMA window of device d is "device <d> memory"; in one rank's view
    # of an MPI job's archive (RankView) "rank <r> device <d> memory".
    window_prefix = ""

    def window_name(self, device):
        return "%sdevice %s memory" % (self.window_prefix, device)

    def window_device(self, win):
        """Device number of a device memory window, else None."""
        m = re.fullmatch(re.escape(self.window_prefix) + r"device (\d+) memory", win.name)
        return int(m.group(1)) if m else None

    def win_by_name(self, name):
        for w in self.rma_wins:
            if w.name == name:
                return w
        return None

    # ---- events ----------------------------------------------------------
    def events_per_location(self):
        return self.events

    def all_events(self):
        for loc, evs in self.events.items():
            for ev in evs:
                yield loc, ev

    def events_of(self, cls, location=None):
        locs = [location] if location is not None else list(self.events)
        return [(loc, ev) for loc in locs for ev in self.events[loc]
                if isinstance(ev, cls)]

    @staticmethod
    def attr(event, name, default=None):
        """Value of the attribute called `name` on the event."""
        if not event.attributes:
            return default
        for key, value in event.attributes.items():
            if key.name == name:
                return value
        return default

    @staticmethod
    def attr_names(event):
        if not event.attributes:
            return set()
        return {key.name for key in event.attributes}

    def enters(self, canonical_name=None, location=None):
        return [(loc, ev) for loc, ev in self.events_of(otf2.events.Enter, location)
                if canonical_name is None or ev.region.canonical_name == canonical_name]

    def leaves(self, canonical_name=None, location=None):
        return [(loc, ev) for loc, ev in self.events_of(otf2.events.Leave, location)
                if canonical_name is None or ev.region.canonical_name == canonical_name]

    def count_enters(self, location=None):
        """Counter canonical name -> number of Enter events."""
        return collections.Counter(ev.region.canonical_name
                                   for _, ev in self.enters(location=location))

    def count_enters_per_location(self):
        return {loc: self.count_enters(loc) for loc in self.events}

    def transfers(self, location=None):
        """RmaPut (to device) and RmaGet (from device) events."""
        out = []
        for loc, ev in self.all_events():
            if location is not None and loc != location:
                continue
            if isinstance(ev, otf2.events.RmaPut):
                kind = "to device"
            elif isinstance(ev, otf2.events.RmaGet):
                kind = "from device"
            else:
                continue
            try:
                remote = ev.win.location(ev.remote)
            except Exception:   # pragma: no cover - reported by the checks
                remote = None
            out.append(Transfer(kind, loc, ev.time, ev.win, remote, ev.bytes,
                                ev.matching_id))
        return out

    def metric_values(self, metric_name, location=None):
        """[(location, time, value)] of Metric events whose (single) member
        is called metric_name."""
        out = []
        for loc, ev in self.events_of(otf2.events.Metric, location):
            try:
                members = ev.metric.members
            except AttributeError:
                members = ev.metric.metric_class.members
            if len(members) == 1 and members[0].name == metric_name:
                out.append((loc, ev.time, ev.values[0]))
        return out

    # ---- consistency checks: each returns a list of error strings --------
    def check_timestamps(self):
        errors = []
        for loc, evs in self.events.items():
            last = None
            for i, ev in enumerate(evs):
                if last is not None and ev.time < last:
                    errors.append("%s: event %d (%s) at %d before previous %d"
                                  % (loc.name, i, type(ev).__name__, ev.time, last))
                last = ev.time
        return errors

    def check_nesting(self):
        """Every Leave closes the innermost open Enter of the same region on
        that location, and nothing stays open at the end."""
        errors = []
        for loc, evs in self.events.items():
            stack = []
            for i, ev in enumerate(evs):
                if isinstance(ev, otf2.events.Enter):
                    stack.append((i, ev.region))
                elif isinstance(ev, otf2.events.Leave):
                    if not stack:
                        errors.append("%s: event %d Leave(%s) without Enter"
                                      % (loc.name, i, ev.region.canonical_name))
                    elif stack[-1][1] != ev.region:
                        errors.append("%s: event %d Leave(%s) but innermost open is %s"
                                      % (loc.name, i, ev.region.canonical_name,
                                         stack[-1][1].canonical_name))
                        stack.pop()
                    else:
                        stack.pop()
            for i, region in stack:
                errors.append("%s: Enter(%s) at event %d never left"
                              % (loc.name, region.canonical_name, i))
        return errors

    def incomplete_leaves(self):
        """[(location, Leave)] with attribute incomplete == 1."""
        return [(loc, ev) for loc, ev in self.events_of(otf2.events.Leave)
                if self.attr(ev, "incomplete") == 1]

    def intervals(self, canonical_name=None, location=None):
        """[(location, enter_event, leave_event)] pairs, matched by nesting."""
        out = []
        locs = [location] if location is not None else list(self.events)
        for loc in locs:
            stack = []
            for ev in self.events[loc]:
                if isinstance(ev, otf2.events.Enter):
                    stack.append(ev)
                elif isinstance(ev, otf2.events.Leave) and stack:
                    enter = stack.pop()
                    if canonical_name is None or enter.region.canonical_name == canonical_name:
                        out.append((loc, enter, ev))
        return out

    def summary(self):
        lines = ["archive %s" % self.path]
        for loc, evs in self.events.items():
            lines.append("  location %r (%s, group %r): %d events; enters %s"
                         % (loc.name, _enum_name(loc.type), loc.group.name, len(evs),
                            dict(self.count_enters(loc))))
        return "\n".join(lines)


class RankView(Trace):
    """One rank of an MPI job's archive: the locations of its "rank <r>"
    group and of its "rank <r> device <d>" groups, and its RMA windows
    ("rank <r> device <d> memory"). Regions and attributes are the
    archive's. The per-process checks of harness then apply to one rank."""

    def __init__(self, trace, rank):  # pylint: disable=super-init-not-called
        self.rank = rank
        self.path = trace.path
        self.definitions = trace.definitions
        self.clock_properties = trace.clock_properties
        self.regions = trace.regions
        self.attributes = trace.attributes
        self.window_prefix = "rank %d " % rank

        def mine(loc):
            g = loc.group.name
            return g == "rank %d" % rank or g.startswith("rank %d device " % rank)
        self.locations = [loc for loc in trace.locations if mine(loc)]
        self.events = collections.OrderedDict((loc, evs) for loc, evs in trace.events.items() if mine(loc))
        self.rma_wins = [w for w in trace.rma_wins if w.name.startswith(self.window_prefix)]

    def mark_values(self, region="step"):
        """The values of the rank's marks of @region on its host threads, in
        order (tests/programs/mpi_marks.c, mpi_abort.c mark "step")."""
        return [Trace.attr(ev, "value") for loc in self.cpu_threads() for ev in self.events[loc]
                if isinstance(ev, otf2.events.Enter) and ev.region.canonical_name == region]


def group_properties(t):
    """{group name: {property name: value}} of an archive's
    LocationGroupProperty definitions (@t: a Trace or an otf2 reader): an MPI
    job's per-rank properties (TRACER::PROCESS, TRACER::MPIT::*), on the
    rank's group "rank <N>". A value that is not a STRING is recorded as
    "<TYPE: value>", which no check accepts."""
    from otf2.enums import Type
    out = {}
    for p in t.definitions.location_group_properties:
        value = p.value if p.type == Type.STRING else "<%s: %r>" % (p.type, p.value)
        out.setdefault(p.location_group.name, {})[str(p.name)] = value
    return out

def open_trace(path):
    return Trace(path)
