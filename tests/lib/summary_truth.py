"""What `tracer summary` must report about an archive, counted here with the
Python OTF2 reader (lib/otf2_trace.py) from the same archive, independently
of tracer's C reader (src/summary/). Used by test_cli and test_summary.

The rules (src/summary/summary.h):
  regions  per (display name, canonical name, location kind): Enter count;
           inclusive time = Leave - Enter summed, except instances nested in
           an open instance of the same region on the location; exclusive
           time = inclusive - the inclusive time of the regions directly
           inside; a Leave closes the innermost open instance of its region
           (and whatever is open above it); regions still open at a
           location's end close at its last event. Kinds: "MPI_T source"
           (CPU_THREAD named "MPI_T source ..."), "host thread" (other
           CPU_THREADs), "device stream" (ACCELERATOR_STREAM), "other".
           Order: kind, exclusive time (largest first), count (largest
           first), name, canonical name.
  devices  the transfer regions ("transfer to/from device" [async]) on host
           threads: count, bytes (attribute), time (Leave - Enter), per
           device (dst_device / src_device, of the thread's process);
           peak memory = largest device_memory_in_use on the device's streams
  MPI_T    per source name (all ranks): event types = regions on its
           locations except "MPI_T events dropped", whose mpit_dropped count
           per mpit_event_type are the drops
"""
import collections
import re
import subprocess

import otf2
from otf2.enums import LocationType, LocationGroupType

KIND_ORDER = ["host thread", "device stream", "MPI_T source", "other"]
TRANSFERS = {"transfer to device": "to_device", "transfer to device async": "to_device",
             "transfer from device": "from_device", "transfer from device async": "from_device"}


def location_kind(loc):
    if loc.type == LocationType.CPU_THREAD:
        return "MPI_T source" if loc.name.startswith("MPI_T source ") else "host thread"
    if loc.type == LocationType.ACCELERATOR_STREAM:
        return "device stream"
    return "other"


def region_key(region):
    name, canon = region.name or "", region.canonical_name or ""
    if not name:
        name = canon or "?"
    if not canon:
        canon = name
    return name, canon


def attr(ev, name, default=None):
    if not ev.attributes:
        return default
    for k, v in ev.attributes.items():
        if k.name == name:
            return v
    return default


def device_label(group, device):
    """The name tracer gives device DEVICE of the process group GROUP."""
    if group.name.startswith("rank "):
        return "%s device %d" % (group.name, device)
    return "device %d" % device


def collect(t):
    """{"regions": [...], "per_device": {name: {...}}, "device_order": [...],
    "mpit_by_source": {...}} as `tracer summary --json` has them (per_device
    as a dict by name; device_order: the names in the report's order)."""
    stats = {}                      # (name, canon, kind) -> [count, incl, excl]
    devices = {}                    # name -> {"to_device": [count, bytes, time], ...}
    order = {}                      # name -> sort key
    for g in t.definitions.location_groups:
        if g.location_group_type == LocationGroupType.ACCELERATOR:
            m = re.search(r"device (\d+)$", g.name)
            creator = g.creating_location_group
            order[g.name] = (creator._ref if creator is not None else 1 << 32, int(m.group(1)) if m else 1 << 31)
            devices[g.name] = {"to_device": [0, 0, 0], "from_device": [0, 0, 0], "peak": None}

    def dev_entry(name, key):
        if name not in devices:
            devices[name] = {"to_device": [0, 0, 0], "from_device": [0, 0, 0], "peak": None}
            order[name] = key
        return devices[name]

    mpit = {}                       # source -> {"locations", "types": {type: [events, dropped]}, "metric"}
    for loc, evs in t.events.items():
        kind = location_kind(loc)
        src = None
        if kind == "MPI_T source":
            src = mpit.setdefault(loc.name[len("MPI_T source "):],
                                  {"locations": 0, "types": {}, "metric": 0})
            src["locations"] += 1
        last = max((ev.time for ev in evs), default=0)
        stack = []                  # [region, key, enter, child, nested, transfer]

        def close(time):
            region, key, enter, child, nested, xfer = stack.pop()
            incl = max(time - enter, 0)
            s = stats[key]
            s[2] += max(incl - child, 0)
            if not nested:
                s[1] += incl
            if stack:
                stack[-1][3] += incl
            if xfer is not None:
                direction, label, nbytes = xfer
                if label is not None:
                    d = devices[label]
                    d[direction][0] += 1
                    d[direction][1] += nbytes
                    d[direction][2] += incl

        drop_metric = 0
        for ev in evs:
            if isinstance(ev, otf2.events.Enter):
                key = region_key(ev.region) + (kind,)
                stats.setdefault(key, [0, 0, 0])[0] += 1
                nested = any(f[1] == key for f in stack)
                xfer = None
                canon = ev.region.canonical_name
                if canon in TRANSFERS:
                    direction = TRANSFERS[canon]
                    dev = attr(ev, "dst_device" if direction == "to_device" else "src_device")
                    label = None
                    if dev is not None and dev >= 0:
                        label = device_label(loc.group, dev)
                        dev_entry(label, (loc.group._ref, dev))
                    xfer = (direction, label, attr(ev, "bytes", 0))
                stack.append([ev.region, key, ev.time, 0, nested, xfer])
                if src is not None:
                    if canon == "MPI_T events dropped":
                        ty = attr(ev, "mpit_event_type") or "unknown"
                        src["types"].setdefault(ty, [0, 0])[1] += attr(ev, "mpit_dropped", 0)
                    else:
                        src["types"].setdefault(key[0], [0, 0])[0] += 1
            elif isinstance(ev, otf2.events.Leave):
                idx = None
                for i in range(len(stack) - 1, -1, -1):
                    if stack[i][0] == ev.region:
                        idx = i
                        break
                if idx is None:
                    continue
                while len(stack) > idx:
                    close(ev.time)
            elif isinstance(ev, otf2.events.Metric):
                try:
                    members = ev.metric.members
                except AttributeError:
                    members = ev.metric.metric_class.members
                for m, v in zip(members, ev.values):
                    if m.name == "device_memory_in_use" and kind == "device stream":
                        d = devices.get(loc.group.name)
                        if d is not None:
                            d["peak"] = v if d["peak"] is None else max(d["peak"], v)
                    elif m.name == "MPI_T dropped events" and src is not None:
                        drop_metric = max(drop_metric, v)
        while stack:
            close(last)
        if src is not None:
            src["metric"] += drop_metric

    regions = [{"name": k[0], "canonical": k[1], "location_kind": k[2], "count": v[0],
                "inclusive_ns": v[1], "exclusive_ns": v[2]} for k, v in stats.items()]
    regions.sort(key=lambda r: (KIND_ORDER.index(r["location_kind"]), -r["exclusive_ns"], -r["count"],
                                r["name"], r["canonical"]))
    per_device = {}
    for name, d in devices.items():
        e = {"device": name, "peak_memory_bytes": d["peak"]}
        for direction in ("to_device", "from_device"):
            c, b, tm = d[direction]
            e[direction] = {"count": c, "bytes": b, "time_ns": tm,
                            "bytes_per_s": (b * 1e9 / tm) if tm else None}
        per_device[name] = e
    by_source = {}
    for name, s in mpit.items():
        types = {ty: {"events": v[0], "dropped": v[1]} for ty, v in s["types"].items()}
        dropped = sum(v["dropped"] for v in types.values())
        by_source[name] = {"locations": s["locations"],
                           "events": sum(v["events"] for v in types.values()),
                           "dropped": max(dropped, s["metric"]), "types": types}
    return {"regions": regions, "per_device": per_device,
            "device_order": sorted(per_device, key=lambda n: order[n]),
            "mpit_by_source": by_source}


def per_device_list(truth):
    """per_device as --json lists it, bandwidth left out (a float)."""
    out = []
    for name in truth["device_order"]:
        e = dict(truth["per_device"][name])
        for direction in ("to_device", "from_device"):
            e[direction] = {k: v for k, v in e[direction].items() if k != "bytes_per_s"}
        out.append(e)
    return out


def json_per_device_without_bandwidth(js):
    out = []
    for e in js.get("per_device", []):
        e = dict(e)
        for direction in ("to_device", "from_device"):
            if isinstance(e.get(direction), dict):
                e[direction] = {k: v for k, v in e[direction].items() if k != "bytes_per_s"}
        out.append(e)
    return out


def anchor_properties(otf2_print, anchor):
    """{name: value} of the anchor file's properties, in order, from
    `otf2-print -I`; None when it fails."""
    p = subprocess.run([otf2_print, "-I", anchor], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        return None
    props, name = collections.OrderedDict(), None
    for line in p.stdout.decode(errors="replace").splitlines():
        m = re.match(r"Property name\s+(.*)$", line)
        if m:
            name = m.group(1).strip()
            continue
        m = re.match(r"Property value\s+(.*)$", line)
        if m and name is not None:
            props[name] = m.group(1).strip()
            name = None
    return props


def config_of(props):
    """TRACER::CONFIG::* of the anchor properties ({name: value}, in order)."""
    return collections.OrderedDict((k[len("TRACER::CONFIG::"):], v) for k, v in props.items()
                                   if k.startswith("TRACER::CONFIG::"))


# ---- the text report's new sections, as they must read ------------------------

PLURAL = {"host thread": "host threads", "device stream": "device streams",
          "MPI_T source": "MPI_T sources", "other": "other locations"}


def us(ns):
    return "%.3f" % (ns / 1e3)


def text_regions(regions, top):
    lines = []
    for kind in KIND_ORDER:
        rs = [r for r in regions if r["location_kind"] == kind]
        if not rs:
            continue
        shown = len(rs) if top == 0 or top >= len(rs) else top
        if shown < len(rs):
            lines.append("regions on %s: %d, top %d by exclusive time:" % (PLURAL[kind], len(rs), shown))
        else:
            lines.append("regions on %s: %d, by exclusive time:" % (PLURAL[kind], len(rs)))
        lines.append("  %10s %14s %14s  %s" % ("count", "inclusive us", "exclusive us", "region"))
        for r in rs[:shown]:
            lines.append("  %10d %14s %14s  %s" % (r["count"], us(r["inclusive_ns"]), us(r["exclusive_ns"]),
                                                  r["name"]))
        if shown < len(rs):
            lines.append("  ... %d more" % (len(rs) - shown))
    return lines


def text_devices(per_device):
    """PER_DEVICE: the --json list (with bytes_per_s)."""
    lines, idle = [], []
    for d in per_device:
        to, fr = d["to_device"], d["from_device"]
        if d["peak_memory_bytes"] is None and not to["count"] and not fr["count"]:
            idle.append(d["device"])
            continue
        head = d["device"] + (": peak memory in use %d bytes" % d["peak_memory_bytes"]
                              if d["peak_memory_bytes"] is not None else ": no memory in use recorded")
        if not to["count"] and not fr["count"]:
            head += "; no transfers"
        lines.append(head)
        for what, x in (("to device", to), ("from device", fr)):
            if not x["count"]:
                continue
            line = "  %s: %d transfer%s, %d bytes in %s us" % (what, x["count"], "" if x["count"] == 1 else "s",
                                                               x["bytes"], us(x["time_ns"]))
            line += (", %.3f GB/s" % (x["bytes"] / x["time_ns"])) if x["time_ns"] else ", bandwidth not measured"
            lines.append(line)
    if idle:
        lines.append("devices without transfers or memory in use: " + ", ".join(idle))
    return lines


def text_mpit(by_source):
    if not by_source:
        return []
    lines = ["MPI_T events by source and type:"]
    for name in sorted(by_source):
        s = by_source[name]
        line = "  %s: %d event%s, %d dropped" % (name, s["events"], "" if s["events"] == 1 else "s", s["dropped"])
        if s["locations"] > 1:
            line += " (%d locations)" % s["locations"]
        lines.append(line)
        for ty in sorted(s["types"]):
            v = s["types"][ty]
            line = "    %s: %d event%s" % (ty, v["events"], "" if v["events"] == 1 else "s")
            if v["dropped"]:
                line += ", %d dropped" % v["dropped"]
            lines.append(line)
    return lines


def text_config(config):
    if not config:
        return []
    nondefault = [(k, v) for k, v in config.items() if not v.endswith(" (default)")]
    if not nondefault:
        return ["configuration: all %d variables at their defaults" % len(config)]
    return (["configuration: %d of %d variables set, the others at their defaults:"
             % (len(nondefault), len(config))] + ["  %s = %s" % kv for kv in nondefault])


def text_tail(js, top=10):
    """The lines after the existing report's, from a --json report."""
    return (text_regions(js.get("regions", []), top) + text_devices(js.get("per_device", []))
            + text_mpit(js.get("mpit_by_source", {})) + text_config(js.get("config", {})))


def advice_groups(t):
    """What `tracer summary --json` must list as "advice", from the archive's
    flagged data ops (attribute "advice"), with the Python reader: per
    (category, the enclosing region's name, variable) the count, bytes and
    time; an unused allocation's delete (paired by device address) adds its
    time to its allocation's group. Costliest first, as the report orders."""
    groups = collections.OrderedDict()
    open_unused = {}
    for loc in t.events:
        if location_kind(loc) != "host thread":
            continue
        stack = []
        for ev in t.events[loc]:
            if isinstance(ev, otf2.events.Enter):
                stack.append(ev)
            elif isinstance(ev, otf2.events.Leave) and stack:
                enter = stack.pop()
                cat = attr(enter, "advice")
                if cat is None:
                    continue
                ticks = ev.time - enter.time
                canon = enter.region.canonical_name
                if cat == "unused_allocation" and canon in ("delete", "delete async"):
                    key = open_unused.pop(attr(enter, "src_addr"), None)
                    if key is not None:
                        groups[key]["time_ns"] += ticks
                    continue
                source = region_key(stack[-1].region)[0] if stack else None
                m = re.match(r"rank (\d+)$", loc.group.name or "")
                rank = int(m.group(1)) if m else None
                key = (cat, source, attr(enter, "variable"), rank)
                g = groups.setdefault(key, {"category": cat, "count": 0, "bytes": 0, "time_ns": 0,
                                            "source": source, "variable": key[2], "rank": rank})
                g["count"] += 1
                g["bytes"] += attr(enter, "bytes", 0)
                g["time_ns"] += ticks
                if cat == "unused_allocation" and attr(enter, "dst_addr"):
                    open_unused[attr(enter, "dst_addr")] = key
    out = []
    for g in groups.values():
        g["saved_time_ns"], g["saved_bytes"] = g["time_ns"], g["bytes"]
        out.append(g)
    out.sort(key=lambda g: (-g["time_ns"], -g["bytes"], -1 if g["rank"] is None else g["rank"],
                            g["category"], g["source"] or ""))
    return out
