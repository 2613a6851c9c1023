#!/usr/bin/python3
"""`declare target link` mapping events (programs/link_*.c).

Spec (what the trace holds):
  * "link map" (ARTIFICIAL, OPENMP), zero length, on the host thread of the
    alloc, right after the alloc's Leave at the same timestamp, for every
    alloc of device storage for a link variable V.  Enter attributes:
    variable, host_addr (= alloc src_addr), device_addr (= alloc dst_addr),
    bytes, device, ref_ptr (device address of V's reference pointer when the
    runtime wrote it for this mapping, else 0), ref_ptr_written (1/0),
    partial (1: array section).
  * "link unmap", same attributes, right after the Leave of the delete of
    that storage; still mapped at the end: at the end with incomplete = 1.
  * "stale link pointer" (zero length, same timestamp, after the link map)
    when ref_ptr_written = 0 and the new storage differs from what the
    reference pointer last received; attributes variable, device,
    device_addr (new storage), ref_value (last value, 0 = never).
  * data ops on an ordinary named global carry variable = its name; data
    ops on heap / stack memory carry none.
  * `tracer summary`: "link maps: a x2, c x1" (sorted) and "stale link
    pointers: N ...: s x1, u x1" (per variable, sorted) when N > 0; --json
    "link_maps", "stale_link_pointers" and "stale_link_pointers_by_variable".

Ground truth.  Each program writes "addr <phase> name=<hex> ..." lines on
stderr: the host addresses of its variables and the device storage it saw
(&V inside the target region, through V's reference pointer, or
omp_get_mapped_ptr after enter data).  The expected events are derived from
these numbers and from LLVM 19's mapping rules (learned with the independent
OMPT probe; see each program's header):
  * every construct that names link variable V in a map clause (target,
    target data, target enter data) maps V together with V's reference
    pointer; the runtime writes the reference pointer (an 8-byte transfer to
    the device right after V's own transfer) only when the value changes
    (LLVM's shadow-pointer check), so a mapping that gets the storage the
    reference pointer already holds writes nothing and is not stale;
  * a map through a plain pointer (p = s; map(p[0:n])) allocates storage for
    V's host range without the reference pointer: the stale case;
  * the host plugin hands out device memory with malloc, so freed storage is
    often reused; where a phase's storage may or may not be new, the
    expectation follows the addresses the traced run reports.
Programs:
  link_main     link(a), to(b), link(c, d) (GCC's target-link-1.c): target
                region map/unmap, enter data + update from, exit data delete,
                a mapped again, target data { target } = one association
  link_stale    storage of s moves (old storage taken by t), enter data through
                a pointer: stale link pointer with ref_value = old storage,
                device_addr = new; u mapped only through a pointer: stale with
                ref_value 0; s stays mapped: link unmap with incomplete = 1
  link_partial  map(to: c[10:20]) -> partial = 1, bytes = 160
  link_dl       link variable lib_tab in a dlopen'd offload library
  link_none     no link variable: no link event, variable = g / gi on data
                ops of the globals, none on the heap buffer
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import otf2          # noqa: E402
from otf2.enums import RegionRole, Paradigm  # noqa: E402

A = h.Trace.attr
LINK_EVENTS = ("link map", "link unmap", "stale link pointer")
for _name in LINK_EVENTS:
    h.OMPT_REGIONS[_name] = (RegionRole.ARTIFICIAL, None, "host")

ANY = object()          # data op whose `variable` attribute is not checked
INT, PTR, DBL = 4, 8, 8
REF = 8                 # the reference pointer write: an 8-byte transfer

TO, FROM = "transfer to device", "transfer from device"


def op(name, nbytes, var=None):
    """A data op Enter; var: None = no `variable` attribute, str = that value,
    ANY = not checked."""
    return (name, nbytes, var)


def wrap(name):
    return (name, None, None)


def ev(name, var):
    return (name, None, var)


class Prog:
    """Runs one program without and with the tracer."""

    def __init__(self, name, bin_env, args=()):
        self.name = name
        self.bin = h.env_path(bin_env)
        self.tmp = tempfile.mkdtemp(prefix="tracer-test-%s-" % name)
        self.cwd = os.path.join(self.tmp, "cwd")
        os.mkdir(self.cwd)
        self.output = os.path.join(self.tmp, "trace")
        cmd = [self.bin] + list(args)
        self.plain = h.run(cmd, self.cwd, traced=False)
        self.traced = h.run(cmd, self.cwd, traced=True, output=self.output)
        self.trace = None

    def addrs(self):
        """{(phase, name): int} from the traced run's "addr" lines."""
        out = {}
        for line in self.traced.stderr.decode(errors="replace").splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[0] == "addr":
                for kv in parts[2:]:
                    k, _, v = kv.partition("=")
                    out[(parts[1], k)] = int(v, 16)
        return out

    def cleanup(self):
        if os.environ.get("TEST_KEEP"):
            print("kept", self.tmp)
            return
        shutil.rmtree(self.tmp, ignore_errors=True)

    def show(self):
        print("===== %s" % self.name)
        for label, p in (("plain", self.plain), ("traced", self.traced)):
            print("--- %s run: rc=%d" % (label, p.returncode))
            print("stdout:", p.stdout.decode(errors="replace"))
            print("stderr:", p.stderr.decode(errors="replace")[-4000:])


class Sub:
    """Failures of one program, prefixed with its name."""

    def __init__(self, c, prefix):
        self.c, self.prefix = c, prefix
        self.failures = c.failures

    def check(self, cond, msg):
        return self.c.check(cond, "%s: %s" % (self.prefix, msg))

    def equal(self, got, want, what):
        return self.check(got == want, "%s: got %r, want %r" % (what, got, want))

    def note(self, msg):
        self.c.note("%s: %s" % (self.prefix, msg))

    def extend(self, errors, prefix):
        self.c.extend(errors, "%s: %s" % (self.prefix, prefix))


def fmt(x):
    return "%#x" % x if isinstance(x, int) else repr(x)


def host_tokens(t, loc):
    """[(index in the location's events, Enter)] for every Enter."""
    return [(i, e) for i, e in enumerate(t.events[loc]) if isinstance(e, otf2.events.Enter)]


def check_sequence(s, t, want):
    """The Enter events on host thread 0 are exactly `want` (name, bytes,
    variable); data ops are compared with their `bytes`."""
    threads = t.cpu_threads()
    s.equal(len(threads), 1, "host thread locations")
    if not threads:
        return None
    loc = threads[0]
    toks = host_tokens(t, loc)
    got = []
    for _, e in toks:
        cn = e.region.canonical_name
        got.append((cn, A(e, "bytes") if cn in h.DATA_OPS else None))
    want_nb = [(n, b) for n, b, _ in want]
    if not s.equal(got, want_nb, "host thread 0 Enter sequence (name, bytes)"):
        return loc
    for (i, e), (name, nbytes, var) in zip(toks, want):
        got_var = A(e, "variable")
        if var is ANY:
            continue
        if name in LINK_EVENTS:
            s.equal(got_var, var, "variable of %s #%d" % (name, i))
        elif var is None:
            s.check(got_var is None, "%s %d bytes (event %d) on heap/stack memory has "
                    "variable=%r" % (name, nbytes or 0, i, got_var))
        else:
            s.equal(got_var, var, "variable of %s %d bytes (event %d)" % (name, nbytes or 0, i))
    return loc


def check_link_events(s, t, loc, want_maps, want_stale, open_at_end=()):
    """want_maps: [dict] in order of "link map" Enters with every attribute
    (ref_ptr: 'nonzero' -> checked against the following 8-byte transfer).
    want_stale: [dict] in order.  open_at_end: indices into want_maps of the
    mappings never deleted (their unmap: at the end, incomplete = 1).
    Checks placement (after the alloc / delete
    Leave, same timestamp, zero length) and the unmaps' attributes."""
    evs = t.events[loc]
    maps, unmaps, stales = [], [], []
    for i, e in enumerate(evs):
        if isinstance(e, otf2.events.Enter) and e.region.canonical_name in LINK_EVENTS:
            {"link map": maps, "link unmap": unmaps,
             "stale link pointer": stales}[e.region.canonical_name].append(i)
            nxt = evs[i + 1] if i + 1 < len(evs) else None
            if s.check(isinstance(nxt, otf2.events.Leave) and nxt.region == e.region,
                       "%s at event %d: not immediately left (zero-length region)"
                       % (e.region.canonical_name, i)):
                s.equal(nxt.time, e.time, "%s at event %d: Leave time" % (e.region.canonical_name, i))
    s.equal(len(maps), len(want_maps), "number of link map events")
    s.equal(len(stales), len(want_stale), "number of stale link pointer events")
    s.equal(len(unmaps), len(want_maps), "number of link unmap events")

    def enter_before(j):
        """The Enter matching the Leave at index j."""
        depth = 0
        for k in range(j - 1, -1, -1):
            if isinstance(evs[k], otf2.events.Leave):
                depth += 1
            elif isinstance(evs[k], otf2.events.Enter):
                if depth == 0:
                    return evs[k]
                depth -= 1
        return None

    # link map: placement and attributes
    by_storage = {}
    ref_ptr_of = {}
    for n, (i, want) in enumerate(zip(maps, want_maps)):
        e = evs[i]
        what = "link map #%d (%s)" % (n, want["variable"])
        prev = evs[i - 1]
        if s.check(isinstance(prev, otf2.events.Leave) and prev.region.canonical_name == "alloc",
                   "%s: not right after an alloc Leave (previous %s %s)"
                   % (what, type(prev).__name__, getattr(getattr(prev, "region", None),
                                                         "canonical_name", ""))):
            s.equal(e.time, prev.time, "%s: timestamp vs the alloc's Leave" % what)
            al = enter_before(i - 1)
            if al is not None:
                s.equal(A(e, "host_addr"), A(al, "src_addr"), "%s: host_addr vs alloc src_addr" % what)
                s.equal(A(e, "device_addr"), A(al, "dst_addr"), "%s: device_addr vs alloc dst_addr" % what)
                s.equal(A(e, "bytes"), A(al, "bytes"), "%s: bytes vs alloc bytes" % what)
        for k in ("variable", "host_addr", "device_addr", "bytes", "device", "ref_ptr_written",
                  "partial"):
            got = A(e, k)
            s.check(got == want[k], "%s: %s = %s, want %s" % (what, k, fmt(got), fmt(want[k])))
        rp = A(e, "ref_ptr")
        if want["ref_ptr_written"]:
            # the reference pointer write: the next data ops are V's own
            # transfer (if any) and an 8-byte transfer to the device whose
            # destination is the reference pointer
            ref_dst = None
            for k in range(i + 1, len(evs)):
                x = evs[k]
                if isinstance(x, otf2.events.Enter) and x.region.canonical_name == TO \
                        and A(x, "bytes") == REF and A(x, "src_addr") != want["host_addr"]:
                    ref_dst = A(x, "dst_addr")
                    break
                if isinstance(x, otf2.events.Enter) and x.region.canonical_name in (
                        "alloc", "kernel", "link map"):
                    break
            s.check(rp not in (None, 0), "%s: ref_ptr is %s although written" % (what, fmt(rp)))
            s.check(ref_dst is not None and rp == ref_dst,
                    "%s: ref_ptr %s is not the destination %s of the 8-byte reference "
                    "pointer transfer that follows" % (what, fmt(rp), fmt(ref_dst)))
            var = want["variable"]
            if var in ref_ptr_of:
                s.equal(rp, ref_ptr_of[var], "%s: ref_ptr vs the earlier mapping of %s"
                        % (what, var))
            ref_ptr_of[var] = rp
        else:
            s.equal(rp, 0, "%s: ref_ptr (not written)" % what)
        by_storage.setdefault(want["device_addr"], []).append(want)
    vals = list(ref_ptr_of.values())
    s.check(len(set(vals)) == len(vals), "different variables share a ref_ptr: %r" % ref_ptr_of)

    # stale link pointer
    for n, (i, want) in enumerate(zip(stales, want_stale)):
        e = evs[i]
        what = "stale link pointer #%d (%s)" % (n, want["variable"])
        s.check(i >= 2 and isinstance(evs[i - 2], otf2.events.Enter)
                and evs[i - 2].region.canonical_name == "link map"
                and isinstance(evs[i - 1], otf2.events.Leave),
                "%s: does not follow a link map's Enter/Leave directly" % what)
        if i >= 2:
            s.equal(e.time, evs[i - 2].time, "%s: timestamp vs the link map" % what)
            s.equal(A(evs[i - 2], "variable"), want["variable"], "%s: variable of the link map before"
                    % what)
        for k in ("variable", "device", "device_addr", "ref_value"):
            got = A(e, k)
            s.check(got == want[k], "%s: %s = %s, want %s" % (what, k, fmt(got), fmt(want[k])))

    # link unmap: after the delete of the storage, same attributes
    open_maps = list(want_maps)
    for n, i in enumerate(unmaps):
        e = evs[i]
        leave = evs[i + 1] if i + 1 < len(evs) else None
        inc = A(e, "incomplete") == 1 or (leave is not None and A(leave, "incomplete") == 1)
        dev_addr = A(e, "device_addr")
        match = [m for m in open_maps if m["device_addr"] == dev_addr
                 and m["variable"] == A(e, "variable")]
        what = "link unmap #%d (%s)" % (n, A(e, "variable"))
        if not s.check(match, "%s: device_addr %s matches no open link map"
                       % (what, fmt(dev_addr))):
            continue
        want = match[0]
        open_maps.remove(want)
        for k in ("variable", "host_addr", "device_addr", "bytes", "device", "ref_ptr_written",
                  "partial"):
            got = A(e, k)
            s.check(got == want[k], "%s: %s = %s, want %s" % (what, k, fmt(got), fmt(want[k])))
        if any(want is want_maps[k] for k in open_at_end):
            s.check(inc, "%s: still mapped at the end but not incomplete = 1" % what)
            later = [x for x in evs[i + 2:] if isinstance(x, (otf2.events.Enter, otf2.events.Leave))]
            s.check(not later, "%s: region events after the end-of-run unmap: %r"
                    % (what, [x.region.canonical_name for x in later]))
            continue
        s.check(not inc, "%s: incomplete = 1 although its delete came" % what)
        prev = evs[i - 1]
        if s.check(isinstance(prev, otf2.events.Leave) and prev.region.canonical_name == "delete",
                   "%s: not right after a delete Leave" % what):
            s.equal(e.time, prev.time, "%s: timestamp vs the delete's Leave" % what)
            de = enter_before(i - 1)
            if de is not None:
                s.equal(A(de, "src_addr"), dev_addr, "%s: delete src_addr vs device_addr" % what)
    # no link event anywhere else
    for l2 in t.events:
        if l2 is loc:
            continue
        bad = [x.region.canonical_name for x in t.events[l2]
               if isinstance(x, otf2.events.Enter) and x.region.canonical_name in LINK_EVENTS]
        s.check(not bad, "link events on %s: %r" % (l2.name, bad))


def check_region_defs(s, t, present):
    for name in LINK_EVENTS:
        regs = t.regions_by_canonical(name)
        if name in present:
            s.check(regs, "no region %r defined" % name)
        for r in regs:
            s.equal(r.region_role, RegionRole.ARTIFICIAL, "role of %r" % name)
            s.equal(r.paradigm, Paradigm.OPENMP, "paradigm of %r" % name)


def check_summary(s, p, want_maps, stales):
    """`tracer summary`: link maps per variable, stale pointers (STALES:
    the expected stale link pointer events) in total and per variable."""
    want_stale = len(stales)
    want_stale_vars = {}
    for st in stales:
        want_stale_vars[st["variable"]] = want_stale_vars.get(st["variable"], 0) + 1
    cli = os.environ.get("TEST_TRACER_CLI")
    if not s.check(cli, "TEST_TRACER_CLI not set"):
        return
    r = subprocess.run([cli, "summary", p.output], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    out = r.stdout.decode(errors="replace")
    s.equal(r.returncode, 0, "tracer summary exit code")
    lines = out.splitlines()
    link_lines = [l.strip() for l in lines if l.strip().startswith("link maps:")]
    stale_lines = [l.strip() for l in lines if l.strip().startswith("stale link pointers:")]
    if want_maps:
        want = "link maps: " + ", ".join("%s x%d" % (k, want_maps[k]) for k in sorted(want_maps))
        s.equal(link_lines, [want], "tracer summary 'link maps:' line")
    else:
        s.check(all(re.fullmatch(r"link maps:\s*(none|0)?", l) for l in link_lines),
                "tracer summary shows link maps in a program without any: %r" % link_lines)
    if want_stale:
        # the count, optionally followed by an explanation in words, then
        # the count per variable (sorted), as the link maps
        s.check(len(stale_lines) == 1 and re.fullmatch(
            r"stale link pointers: %d(\s.*)?" % want_stale, stale_lines[0]),
            "tracer summary 'stale link pointers:' line: got %r, want "
            "'stale link pointers: %d'" % (stale_lines, want_stale))
        per_var = ", ".join("%s x%d" % (k, want_stale_vars[k]) for k in sorted(want_stale_vars))
        s.check(len(stale_lines) == 1 and stale_lines[0].endswith(": " + per_var),
                "tracer summary 'stale link pointers:' line: got %r, want it to end with the "
                "count per variable %r" % (stale_lines, per_var))
    else:
        s.equal(stale_lines, [], "tracer summary 'stale link pointers:' line (none expected)")
    r = subprocess.run([cli, "summary", "--json", p.output], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    s.equal(r.returncode, 0, "tracer summary --json exit code")
    try:
        js = json.loads(r.stdout.decode())
    except ValueError as e:
        s.check(False, "summary --json is not JSON: %r (%r)" % (r.stdout[:300], e))
        return
    s.equal(js.get("link_maps", {}), dict(want_maps), "summary --json link_maps")
    s.equal(js.get("stale_link_pointers", 0), want_stale, "summary --json stale_link_pointers")
    s.equal(js.get("stale_link_pointers_by_variable", {}), want_stale_vars,
            "summary --json stale_link_pointers_by_variable")
    if want_maps:
        s.check("link_maps" in js, "summary --json has no link_maps key")
        s.check("stale_link_pointers" in js, "summary --json has no stale_link_pointers key")


def check_common(s, p, want_stdout, incomplete_ok=False, memory=True):
    """Exit code, stdout, otf2-print, trace structure."""
    os.environ["TEST_BIN"] = p.bin      # check_structure names ProgramBegin by it
    t = h.check_run_basics(s, p, 0, want_stdout)
    if t is None:
        return None
    sub = h.Checker(p.name)
    h.check_structure(sub, t, 0)
    for f in sub.failures:
        if incomplete_ok and f.startswith("Leaves with incomplete=1"):
            inc = [(l.name, e.region.canonical_name) for l, e in t.incomplete_leaves()]
            s.check(all(cn == "link unmap" for _, cn in inc),
                    "incomplete Leaves other than the end-of-run link unmap: %r" % inc)
            continue
        s.check(False, f)
    if memory:
        h.check_memory(s, t, single_thread=True)
    return t


def lm(var, host, dev, nbytes, written, partial=0):
    return {"variable": var, "host_addr": host, "device_addr": dev, "bytes": nbytes,
            "device": 0, "ref_ptr_written": written, "partial": partial}


def stale(var, dev, ref_value):
    return {"variable": var, "device": 0, "device_addr": dev, "ref_value": ref_value}


# --------------------------------------------------------------------------
def case_main(c):
    s = Sub(c, "link_main")
    p = Prog("link_main", "TEST_LINK_MAIN_BIN")
    try:
        t = check_common(s, p, "link_main: r1=46 r2=5 r3=0 r4=1008 c1=41 b=2\n")
        ad = p.addrs()
        need = [("host", "a"), ("host", "c"), ("host", "d"), ("P1", "a"), ("P1", "c"),
                ("P1", "d"), ("P2", "a"), ("P4", "a"), ("P5", "c"), ("P5", "in")]
        if not s.check(all(k in ad for k in need), "addr lines missing on stderr: %r" % ad):
            return
        s.equal(ad[("P5", "c")], ad[("P5", "in")],
                "P5: storage of c seen by omp_get_mapped_ptr vs by the device code")
        ha, hc, hd = ad[("host", "a")], ad[("host", "c")], ad[("host", "d")]
        CB, DB = 64 * DBL, 2 * INT
        last = {"a": ad[("P1", "a")], "c": ad[("P1", "c")], "d": ad[("P1", "d")]}
        maps, stales = [], []
        seq = []
        # P1: target map(to: a, b, c, d) map(from: res, da, dc, dd)
        seq += [wrap("target"), op("alloc", INT), op("alloc", PTR), op("alloc", PTR),
                op("alloc", PTR)]
        for v, nb in (("a", INT), ("c", CB), ("d", DB)):
            seq += [op("alloc", nb, ANY), ev("link map", v), op(TO, nb, ANY), op(TO, REF, ANY)]
        maps += [lm("a", ha, last["a"], INT, 1), lm("c", hc, last["c"], CB, 1),
                 lm("d", hd, last["d"], DB, 1)]
        seq += [op(FROM, PTR), op(FROM, PTR), op(FROM, PTR), op(FROM, INT),
                op("delete", DB, ANY), ev("link unmap", "d"),
                op("delete", CB, ANY), ev("link unmap", "c"),
                op("delete", INT, ANY), ev("link unmap", "a"),
                op("delete", PTR), op("delete", PTR), op("delete", PTR), op("delete", INT)]
        # P2: enter data map(to: a) (reference pointer written if a moved);
        # update from(a)
        y = ad[("P2", "a")]
        w2 = int(y != last["a"])
        seq += [wrap("target enter data"), op("alloc", INT, ANY), ev("link map", "a"),
                op(TO, INT, ANY)]
        if w2:
            seq.append(op(TO, REF, ANY))
            last["a"] = y
        else:
            s.note("P2: enter data got the storage a's reference pointer already holds "
                   "(%#x): not rewritten, not stale" % y)
        maps.append(lm("a", ha, y, INT, w2))
        seq += [wrap("target update"), op(FROM, INT, ANY)]
        # P3: exit data map(delete: a)
        seq += [wrap("target exit data"), op("delete", INT, ANY), ev("link unmap", "a")]
        # P4: target map(tofrom: a) map(from: res, da4): a mapped again
        z = ad[("P4", "a")]
        w4 = int(z != last["a"])
        seq += [wrap("target"), op("alloc", INT), op("alloc", PTR),
                op("alloc", INT, ANY), ev("link map", "a"), op(TO, INT, ANY)]
        if w4:
            seq.append(op(TO, REF, ANY))
            last["a"] = z
        else:
            s.note("P4: a got the storage its reference pointer already holds (%#x): "
                   "LLVM does not rewrite it (ref_ptr_written 0, not stale)" % z)
        maps.append(lm("a", ha, z, INT, w4))
        seq += [op(FROM, INT, ANY), op(FROM, PTR), op(FROM, INT),
                op("delete", INT, ANY), ev("link unmap", "a"), op("delete", PTR),
                op("delete", INT)]
        # P5: target data map(tofrom: c) { target map(tofrom: c) map(from: dc5in) }
        # (c present in the inner region: no alloc, no reference pointer write)
        yc = ad[("P5", "c")]
        w5 = int(yc != last["c"])
        seq += [wrap("target enter data"), op("alloc", CB, ANY), ev("link map", "c"),
                op(TO, CB, ANY)]
        if w5:
            seq.append(op(TO, REF, ANY))
            last["c"] = yc
        maps.append(lm("c", hc, yc, CB, w5))
        seq += [wrap("target"), op("alloc", PTR), op(FROM, PTR), op("delete", PTR),
                wrap("target exit data"), op(FROM, CB, ANY), op("delete", CB, ANY),
                ev("link unmap", "c")]
        if t is None:
            return
        check_region_defs(s, t, {"link map", "link unmap"})
        loc = check_sequence(s, t, seq)
        if loc is not None:
            check_link_events(s, t, loc, maps, stales)
        check_summary(s, p, {"a": 3, "c": 2, "d": 1}, stales)
    finally:
        if c.failures:
            p.show()
        p.cleanup()


def case_stale(c):
    s = Sub(c, "link_stale")
    p = Prog("link_stale", "TEST_LINK_STALE_BIN")
    try:
        t = check_common(s, p, "link_stale: sum=6441 s0=3 s5=3\n", incomplete_ok=True,
                         memory=False)
        ad = p.addrs()
        need = [("host", "s"), ("host", "t"), ("host", "u"), ("P1", "s"), ("P2", "t"),
                ("P3", "s"), ("P4", "u")]
        if not s.check(all(k in ad for k in need), "addr lines missing on stderr: %r" % ad):
            return
        SB = 113 * DBL
        x, xt, y = ad[("P1", "s")], ad[("P2", "t")], ad[("P3", "s")]
        # the precondition of the case, from the program alone
        s.check(xt == x, "PRECONDITION: t did not get s's freed storage (s at %#x, t at %#x): "
                "the allocator did not reuse it in the traced run" % (x, xt))
        s.check(y != x, "PRECONDITION: s's new storage %#x equals the old one" % y)
        hs, ht, hu = ad[("host", "s")], ad[("host", "t")], ad[("host", "u")]
        UB = 7 * DBL
        seq = [wrap("target"), op("alloc", PTR), op("alloc", PTR),
               op("alloc", SB, ANY), ev("link map", "s"), op(TO, SB, ANY), op(TO, REF, ANY),
               op(FROM, SB, ANY), op(FROM, PTR), op(FROM, PTR),
               op("delete", SB, ANY), ev("link unmap", "s"), op("delete", PTR), op("delete", PTR),
               wrap("target enter data"), op("alloc", SB, "t"), op(TO, SB, "t"),
               wrap("target enter data"), op("alloc", SB, ANY), ev("link map", "s"),
               ev("stale link pointer", "s"), op(TO, SB, ANY),
               wrap("target enter data"), op("alloc", UB, ANY), ev("link map", "u"),
               ev("stale link pointer", "u"), op(TO, UB, ANY),
               wrap("target exit data"), op("delete", UB, ANY), ev("link unmap", "u"),
               wrap("target update"), op(FROM, SB, ANY),
               wrap("target exit data"), op("delete", SB, "t"),
               ev("link unmap", "s")]          # end of run, incomplete = 1
        maps = [lm("s", hs, x, SB, 1), lm("s", hs, y, SB, 0),
                lm("u", hu, ad[("P4", "u")], UB, 0)]
        stales = [stale("s", y, x), stale("u", ad[("P4", "u")], 0)]
        if t is None:
            return
        check_region_defs(s, t, set(LINK_EVENTS))
        loc = check_sequence(s, t, seq)
        if loc is not None:
            check_link_events(s, t, loc, maps, stales, open_at_end=(1,))
            # the data ops on t carry variable "t"; its transfer's source is &t
            for _, e in t.enters("alloc"):
                if A(e, "src_addr") == ht:
                    s.equal(A(e, "variable"), "t", "variable of t's alloc")
        check_summary(s, p, {"s": 2, "u": 1}, stales)
    finally:
        if c.failures:
            p.show()
        p.cleanup()


def case_partial(c):
    s = Sub(c, "link_partial")
    p = Prog("link_partial", "TEST_LINK_PARTIAL_BIN")
    try:
        t = check_common(s, p, "link_partial: sum=390 sum_e=828 e7=108\n")
        ad = p.addrs()
        need = [("host", "c10"), ("host", "e"), ("P1", "c10"), ("P2", "e")]
        if not s.check(all(k in ad for k in need), "addr lines missing on stderr: %r" % ad):
            return
        CS, EB = 20 * DBL, 8 * DBL
        seq = [wrap("target"), op("alloc", PTR), op("alloc", PTR),
               op("alloc", CS, ANY), ev("link map", "c"), op(TO, CS, ANY), op(TO, REF, ANY),
               op(FROM, PTR), op(FROM, PTR),
               op("delete", CS, ANY), ev("link unmap", "c"), op("delete", PTR), op("delete", PTR),
               wrap("target"), op("alloc", PTR), op("alloc", PTR),
               op("alloc", EB, ANY), ev("link map", "e"), op(TO, EB, ANY), op(TO, REF, ANY),
               op(FROM, EB, ANY), op(FROM, PTR), op(FROM, PTR),
               op("delete", EB, ANY), ev("link unmap", "e"), op("delete", PTR), op("delete", PTR)]
        maps = [lm("c", ad[("host", "c10")], ad[("P1", "c10")], CS, 1, partial=1),
                lm("e", ad[("host", "e")], ad[("P2", "e")], EB, 1, partial=0)]
        if t is None:
            return
        check_region_defs(s, t, {"link map", "link unmap"})
        loc = check_sequence(s, t, seq)
        if loc is not None:
            check_link_events(s, t, loc, maps, [])
        check_summary(s, p, {"c": 1, "e": 1}, [])
    finally:
        if c.failures:
            p.show()
        p.cleanup()


def case_dl(c):
    s = Sub(c, "link_dl")
    p = Prog("link_dl", "TEST_LINK_DL_BIN", [h.env_path("TEST_LINK_LIB")])
    try:
        t = check_common(s, p, "link_dl: lib_run=992\n")
        ad = p.addrs()
        need = [("host", "lib_tab"), ("P1", "lib_tab")]
        if not s.check(all(k in ad for k in need), "addr lines missing on stderr: %r" % ad):
            return
        LB = 32 * DBL
        seq = [wrap("target"), op("alloc", PTR), op("alloc", PTR),
               op("alloc", LB, ANY), ev("link map", "lib_tab"), op(TO, LB, ANY), op(TO, REF, ANY),
               op(FROM, PTR), op(FROM, PTR),
               op("delete", LB, ANY), ev("link unmap", "lib_tab"),
               op("delete", PTR), op("delete", PTR)]
        maps = [lm("lib_tab", ad[("host", "lib_tab")], ad[("P1", "lib_tab")], LB, 1)]
        if t is None:
            return
        check_region_defs(s, t, {"link map", "link unmap"})
        loc = check_sequence(s, t, seq)
        if loc is not None:
            check_link_events(s, t, loc, maps, [])
        check_summary(s, p, {"lib_tab": 1}, [])
    finally:
        if c.failures:
            p.show()
        p.cleanup()


def case_none(c):
    s = Sub(c, "link_none")
    p = Prog("link_none", "TEST_LINK_NONE_BIN")
    try:
        t = check_common(s, p, "link_none: gi=1278 g0=42\n")
        G, GI, HB = 100 * DBL, INT, 50 * DBL
        seq = [wrap("target enter data"), op("alloc", G, "g"), op(TO, G, "g"),
               wrap("target"), op("alloc", HB), op(TO, HB), op("alloc", GI, "gi"),
               op(TO, GI, "gi"), op(FROM, GI, "gi"), op("delete", GI, "gi"), op("delete", HB),
               wrap("target update"), op(FROM, G, "g"),
               wrap("target exit data"), op("delete", G, "g")]
        if t is None:
            return
        check_region_defs(s, t, set())
        for name in LINK_EVENTS:
            s.equal(len(t.enters(name)), 0, "number of %r events" % name)
        check_sequence(s, t, seq)
        check_summary(s, p, {}, [])
    finally:
        if c.failures:
            p.show()
        p.cleanup()


def main():
    c = h.Checker("link")
    for case in (case_main, case_stale, case_partial, case_dl, case_none):
        before = len(c.failures)
        try:
            case(c)
        except SystemExit:
            raise
        except Exception as e:       # a crash in one case must not hide the others
            import traceback
            traceback.print_exc()
            c.check(False, "%s raised %r" % (case.__name__, e))
        print("%s: %s" % (case.__name__, "ok" if len(c.failures) == before
                          else "%d failure(s)" % (len(c.failures) - before)))
    c.finish()


if __name__ == "__main__":
    main()
