#!/usr/bin/python3
"""An MPI job's unified definitions and each rank's OTF2 mapping tables:
programs/mpi_regions.c under real MPICH (mpiexec.mpich, HYDRA_LAUNCHER=fork),
tracer preloaded into the ranks (mpiexec -n N env LD_PRELOAD=<lib> prog).

At MPI_Finalize every rank writes its own locations' events with its own
local string / region / attribute ids; the definitions are unified up a
binomial tree to rank 0, which writes the global definitions, and each rank
writes OTF2 mapping tables (local -> global) into its locations' local
definition files (OTF2 omits a table that is the identity). This test fails
when those ids are mapped wrongly.

Ground truth (see programs/mpi_regions.c; rebuilt here by `sequence`): rank
r registers the user regions "common A", "common B", "only rank r" and the
marks "mark common", "mark rank r" in an order rotated by r, then enters
them in an order rotated by r (and by the iteration), r + 2 iterations, one
of the three regions only every other iteration, "mark common" with value
1000 r + it, "mark rank r" (value 2^40 + r) first on even ranks and last on
odd ones. Each rank's local ids (first use) therefore differ from the
unified ones, except rank 0's. It prints its sequence on one line.

Every run but those of case 9 sets TRACER_JOB_WRITE=finalize: the ranks
write the archive together inside MPI_Finalize, which this test is about.

For N in (4, 7) (7: an uneven binomial tree), two runs each: plain, and
TRACER_KEEP_JOURNAL=1. Each run:
 1. exit status 0, stdout = one "mpi_regions: rank r of N sequence: ..."
    line per rank (sorted), stderr empty (no `tracer:` line, no sanitizer
    report); the run's directory holds one archive, D/traces.otf2 (+
    traces.def, traces/<id>.evt|def; with TRACER_KEEP_JOURNAL=1 also
    journals/rank<k>.journal for every rank), nothing beside D or in the cwd;
 2. the archive reads (otf2-print and the `otf2` module; timestamps per
    location do not go back, regions nest); location groups "rank 0" ..
    "rank N-1" (PROCESS), each with exactly "host thread 0";
    TRACER::JOB::RANKS = "N/N"; per rank, the Enter events of USER regions
    on host thread 0 give exactly the ground truth (names, order, count; a
    mark as "name=value" with its `value` attribute); MPI_Init and
    MPI_Finalize entered once each;
 3. global definitions: no two regions with the same (name, canonical
    name, role, paradigm, source file, line), no two strings with the same
    content (`otf2-print -G`, string ids 0..n-1), no two attributes with the
    same name; the USER regions are exactly "common A", "common B", "mark
    common" once each and "only rank k", "mark rank k" once per rank, with
    name = canonical name, role FUNCTION (regions) / ARTIFICIAL (marks);
 4. mapping tables (`otf2-print -M`, dense "[g0,g1,...]" or sparse
    "{l=>g,...}"): a rank whose events use a set of global region ids that
    is not {0..k-1} cannot have the identity as its region map, so each of
    its locations must have a REGION and a STRING table; this holds for at
    least the N-1 ranks other than rank 0 (the test would otherwise prove
    nothing); every table is injective and points at existing global
    definitions; a REGION table's image is exactly the regions the rank
    uses; a STRING table's image holds the name, canonical name,
    description and file of each of them and the program name; an
    ATTRIBUTE table (none expected: the attributes used are tracer's fixed
    ones) is injective into the attribute ids. A table for a location
    outside the archive fails;
 5. (TRACER_KEEP_JOURNAL=1 runs) `tracer recover` of the kept journals
    copied into a fresh directory E (E/journals/rank<k>.journal): exit 0,
    its one-line summary, empty stderr; E/traces.otf2 passes 2-4, and per
    rank its events, as (location group, location, event type, region
    (name, canonical name, role, paradigm), time, other fields, attributes
    by name) in each location's order, equal those of the archive written
    at MPI_Finalize. A NOTE says whether the two global region orders are
    equal (not required: the tree and the serial merge may order them
    differently).
 6. rank 0 alone with TRACER_WRITE_AT_END=0 (MPMD mpiexec, 4 ranks): the
    write is collective, so no rank writes it and none hangs; exit 0,
    stdout as always, stderr exactly rank 0's one `tracer:` line saying so;
    every rank's journal stays, no traces.def; `tracer recover` of them
    passes 2-4.
 7. TRACER_RANKS=0,2,3 (4 ranks): rank 1 has no journal but takes part in
    every collective step; exit 0, stdout, empty stderr; the archive holds
    groups "rank 0", "rank 2", "rank 3", TRACER::JOB::RANKS "3/4",
    MISSING_RANKS "1", and each traced rank's USER Enter events equal its
    ground truth.
 8. TEST_CLOBBER_JOURNAL=1 (4 ranks): rank 1's journal path names junk at
    MPI_Finalize, so its part cannot be read; every rank gives up together
    (no hang), exit 0, stdout as always, stderr exactly two `tracer:` lines
    (rank 1: why; rank 0: the journals are kept), every other rank's
    journal stays, D holds no traces.def and an empty traces.otf2.
 9. TRACER_JOB_WRITE=exit (the default): 7 ranks with TRACER_KEEP_JOURNAL=1:
    the archive that the last rank to exit wrote passes 2-4 and equals `tracer
    recover` of the same journals event by event and in its global region
    order; no journals/.exit-<k> mark is left; case 7 again (the untraced
    rank counts itself out at MPI_Finalize); case 8 again: the last rank
    writes the other ranks (each equal to its ground truth, RANKS 3/4,
    MISSING_RANKS the lost one) with one `tracer: job: writer: 1 rank
    journal lost, ...` line; every journal stays, no mark is left.
A NOTE lists the time of every run.
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import cfgtest as ct  # noqa: E402
from mpit_offload_truth import tree  # noqa: E402
from otf2_trace import RankView  # noqa: E402
import otf2  # noqa: E402
from otf2.enums import LocationGroupType, Paradigm, RegionRole  # noqa: E402

SIZES = (4, 7)
PROG = "mpi_regions"


# ---------------------------------------------------------------------------
# ground truth (programs/mpi_regions.c)

def region_names(r):
    return ["common A", "common B", "only rank %d" % r]


def mark_names(r):
    return ["mark common", "mark rank %d" % r]


def sequence(r):
    """The Enter events of rank r's user regions and marks, in order: a
    region as its name, a mark as "name=value"."""
    regs = region_names(r)
    seq = []
    rank_mark = "mark rank %d=%d" % (r, (1 << 40) + r)
    if r % 2 == 0:
        seq.append(rank_mark)
    for it in range(r + 2):
        s = (r + it) % 3
        seq += [regs[s], regs[(s + 1) % 3]]
        if (r + it) % 2 == 0:
            seq.append(regs[(s + 2) % 3])
        seq.append("mark common=%d" % (1000 * r + it))
    if r % 2 == 1:
        seq.append(rank_mark)
    return seq


def want_stdout_lines(n):
    return sorted("%s: rank %d of %d sequence: %s" % (PROG, r, n, "; ".join(sequence(r))) for r in range(n))


def want_user_regions(n):
    """{name: role} of every USER region the job's archive defines."""
    out = {"common A": RegionRole.FUNCTION, "common B": RegionRole.FUNCTION,
           "mark common": RegionRole.ARTIFICIAL}
    for r in range(n):
        out["only rank %d" % r] = RegionRole.FUNCTION
        out["mark rank %d" % r] = RegionRole.ARTIFICIAL
    return out


# ---------------------------------------------------------------------------
# running

class Run:
    def __init__(self, what, top, cwd, output, proc, seconds):
        self.what = what
        self.top = top              # the run's own directory: cwd/ and out/
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

    def run(self, label, n, env=None, timeout=120, first_env=None):
        """mpiexec -n n env LD_PRELOAD=<lib> TEST_BIN, TRACER_OUTPUT=<run>/out;
        with @first_env, rank 0 gets those variables besides (MPMD: -n 1 ...
        : -n n-1 ...)."""
        top = os.path.join(self.tmp, label)
        cwd = os.path.join(top, "cwd")
        os.makedirs(cwd)
        out = os.path.join(top, "out")
        e = h.base_env()
        e["HYDRA_LAUNCHER"] = "fork"       # mpiexec: this machine only
        e["TRACER_OUTPUT"] = out
        # The parallel write inside MPI_Finalize is what this test is about;
        # case 9 overrides it with the default, TRACER_JOB_WRITE=exit.
        e["TRACER_JOB_WRITE"] = "finalize"
        for k, v in (env or {}).items():
            e[k] = v
        one = ["env", "LD_PRELOAD=" + ":".join(h.preload_list()), h.env_path("TEST_BIN")]
        cmd = [h.env_path("TEST_MPIEXEC"), "-n", str(n)] + one
        if first_env:
            cmd = ([h.env_path("TEST_MPIEXEC"), "-n", "1", "env"] + ["%s=%s" % kv for kv in first_env.items()] +
                   one[1:] + [":", "-n", str(n - 1)] + one)
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, cwd=cwd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            p = None
        what = "%s (%smpiexec -n %d env LD_PRELOAD=lib %s%s)" % (
            label, "".join("%s=%s " % kv for kv in (env or {}).items()), n, PROG,
            "; rank 0 also " + " ".join("%s=%s" % kv for kv in first_env.items()) if first_env else "")
        r = Run(what, top, cwd, out, p, time.monotonic() - t0)
        self.runs.append(r)
        return r


# ---------------------------------------------------------------------------
# 1. the run

def check_run(c, r, n, keep):
    c.equal(r.rc, 0, "%s: exit status" % r.what)
    c.equal(sorted(r.out.splitlines()), want_stdout_lines(n), "%s: stdout lines" % r.what)
    c.equal([ln for ln in r.err.splitlines() if ln.strip()], [], "%s: stderr" % r.what)
    for m in h.SANITIZER_MARKERS:
        c.check(m not in r.err, "%s: sanitizer report %r in stderr" % (r.what, m))
    c.equal(os.listdir(r.cwd), [], "%s: files in the cwd" % r.what)
    files = tree(r.top)
    c.equal([f for f in files if not (f == "cwd/" or f.startswith("out/"))], [],
            "%s: left beside TRACER_OUTPUT (D.rank<N>, D.1, ...)" % r.what)
    inside = [f[len("out/"):] for f in files if f.startswith("out/") and f != "out/"]
    journals = ["journals/"] + ["journals/rank%d.journal" % k for k in range(n)] if keep else []
    odd = [f for f in inside if f not in ["traces.otf2", "traces.def", "traces/"] + journals
           and not re.fullmatch(r"traces/\d+\.(evt|def)", f)]
    c.equal(odd, [], "%s: in D besides traces.otf2, traces.def, traces/<id>.evt|def%s"
            % (r.what, " and journals/rank<k>.journal" if keep else ""))
    if keep:
        c.equal([f for f in journals if f not in inside], [], "%s: journals missing with TRACER_KEEP_JOURNAL=1"
                % r.what)
    return c.check(os.path.isfile(r.anchor) and os.path.getsize(r.anchor) > 0, "%s: no archive %s"
                   % (r.what, r.anchor))


# ---------------------------------------------------------------------------
# otf2-print -G / -M

def otf2_print(c, args, anchor, what):
    exe = h.otf2_print_cmd()
    if not c.check(exe, "otf2-print not found"):
        return None
    p = subprocess.run([exe] + args + [anchor], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if not c.equal(p.returncode, 0, "%s: otf2-print %s exit status (stderr %r)"
                   % (what, " ".join(args), p.stderr.decode(errors="replace")[-1000:])):
        return None
    return p.stdout.decode(errors="replace")


def global_strings(c, anchor, what):
    """[(id, content)] of the global String definitions (otf2-print -G)."""
    text = otf2_print(c, ["-G"], anchor, what)
    if text is None:
        return None
    out = []
    for line in text.splitlines():
        if line.startswith("STRING "):
            m = re.match(r'STRING\s+(\d+)\s+"(.*)"$', line)
            if c.check(m, "%s: otf2-print -G: unparsed String line %r" % (what, line)):
                out.append((int(m.group(1)), m.group(2)))
    return out


def mapping_tables(c, anchor, what):
    """{location id: {"STRING"|"REGION"|"ATTRIBUTE"|...: (dense, {local:
    global})}} from otf2-print -M: dense "[g0,g1,...]" lists every local id,
    sparse "{l=>g,...}" only those not mapped to themselves."""
    text = otf2_print(c, ["-M"], anchor, what)
    if text is None:
        return None
    out = collections.defaultdict(dict)
    for line in text.splitlines():
        if not line.startswith("MAPPING_TABLE"):
            continue
        m = re.match(r"MAPPING_TABLE\s+(\d+)\s+Type: (\w+), (\[[0-9,]*\]|\{[0-9,=>]*\})$", line.strip())
        if not c.check(m, "%s: otf2-print -M: unparsed line %r" % (what, line)):
            continue
        loc, kind, body = int(m.group(1)), m.group(2), m.group(3)
        if body.startswith("["):
            table = {i: int(g) for i, g in enumerate(x for x in body[1:-1].split(",") if x)}
        else:
            table = {}
            for pair in (x for x in body[1:-1].split(",") if x):
                lo, gl = pair.split("=>")
                table[int(lo)] = int(gl)
        c.check(kind not in out[loc], "%s: two %s mapping tables for location %d" % (what, kind, loc))
        out[loc][kind] = (body.startswith("["), table)
    return out


# ---------------------------------------------------------------------------
# 2.-4. the archive

def describe_value(v):
    if hasattr(v, "_ref"):
        if isinstance(v, otf2.definitions.Region):
            return ("region", v.name, v.canonical_name, getattr(v.region_role, "name", v.region_role),
                    getattr(v.paradigm, "name", v.paradigm))
        return (type(v).__name__, getattr(v, "name", repr(v)))
    if isinstance(v, (list, tuple)):
        return tuple(describe_value(x) for x in v)
    return getattr(v, "name", v) if hasattr(v, "value") and hasattr(v, "name") else v


def event_tuple(loc, ev):
    """(group, location, type, time, other fields, attributes by name)."""
    fields = []
    for k in sorted(dir(ev)):
        if k.startswith("_") or k in ("time", "attributes"):
            continue
        v = getattr(ev, k)
        if callable(v):
            continue
        fields.append((k, describe_value(v)))
    attrs = tuple(sorted((a.name, describe_value(v)) for a, v in (ev.attributes or {}).items()))
    return (loc.group.name, loc.name, type(ev).__name__, ev.time, tuple(fields), attrs)


def user_tokens(v, host0):
    """The Enter events of USER regions on host0 as ground-truth tokens."""
    out = []
    for _, ev in v.enters(location=host0):
        reg = ev.region
        if reg.paradigm != Paradigm.USER:
            continue
        if reg.region_role == RegionRole.ARTIFICIAL:
            out.append("%s=%s" % (reg.name, h.Trace.attr(ev, "value")))
        else:
            out.append(reg.name)
    return out


def check_definitions(c, t, strings, what, n):
    def dups(keys):
        return sorted(k for k, cnt in collections.Counter(keys).items() if cnt > 1)
    c.equal(dups((r.name, r.canonical_name, r.region_role, r.paradigm, r.source_file, r.begin_line_number)
                 for r in t.regions), [],
            "%s: Region definitions with the same (name, canonical name, role, paradigm, file, line)" % what)
    c.equal(dups(a.name for a in t.attributes), [], "%s: Attribute definitions with the same name" % what)
    if strings is not None:
        c.equal(dups(s for _, s in strings), [], "%s: String definitions with the same content (otf2-print -G)"
                % what)
        c.equal([i for i, _ in strings], list(range(len(strings))), "%s: String ids (otf2-print -G)" % what)
    user = collections.Counter(r.name for r in t.regions if r.paradigm == Paradigm.USER)
    want = want_user_regions(n)
    c.equal(dict(user), {k: 1 for k in want}, "%s: USER regions (name: times defined)" % what)
    for name in ("common A", "common B", "mark common"):
        c.equal(sum(1 for r in t.regions if r.name == name), 1, "%s: regions named %r" % (what, name))
    for r in t.regions:
        if r.paradigm == Paradigm.USER:
            c.equal((r.canonical_name, r.region_role), (r.name, want.get(r.name)),
                    "%s: (canonical name, role) of USER region %r" % (what, r.name))


def check_mappings(c, t, strings, tables, what, n):
    """4.: which ranks must have mapping tables, and that each table is sane."""
    if tables is None or strings is None:
        return
    sid = {s: i for i, s in strings}
    locs = {loc._ref: loc for loc in t.locations}
    c.equal(sorted(l for l in tables if l not in locs), [], "%s: mapping tables of locations not in the archive"
            % what)
    nregions = len(t.regions)
    nattrs = len(t.attributes)
    c.equal(sorted(r._ref for r in t.regions), list(range(nregions)), "%s: Region ids" % what)
    remapped = []
    for k in range(n):
        v = RankView(t, k)
        rw = "%s rank %d" % (what, k)
        used = sorted({ev.region._ref for _, ev in v.enters()})
        used_regions = [r for r in t.regions if r._ref in used]
        need = used != list(range(len(used)))
        if need:
            remapped.append(k)
        prog = {str(ev.program_name) for _, ev in v.events_of(otf2.events.ProgramBegin)}
        want_strings = set()
        for r in used_regions:
            for s in (r.name, r.canonical_name, r.description, r.source_file):
                want_strings.add("" if s is None else str(s))
        want_strings |= prog
        want_sids = {sid.get(s, -1) for s in want_strings}
        c.check(-1 not in want_sids, "%s: strings of its regions not among the global strings: %r"
                % (rw, sorted(s for s in want_strings if s not in sid)))
        for loc in v.locations:
            lw = "%s location %d (%s)" % (rw, loc._ref, loc.name)
            tb = tables.get(loc._ref, {})
            if need:
                c.check("REGION" in tb, "%s: no REGION mapping table although its regions have the global ids %r "
                        "(not 0..%d: the identity cannot be right)" % (lw, used, len(used) - 1))
                c.check("STRING" in tb, "%s: no STRING mapping table although its regions were remapped" % lw)
            if "REGION" in tb:
                dense, m = tb["REGION"]
                if dense:
                    c.equal(sorted(m), list(range(len(m))), "%s: REGION mapping's local ids" % lw)
                else:
                    # the local table has one region per region used; the
                    # ones not listed map to themselves
                    c.check(all(0 <= lo < len(used) for lo in m), "%s: sparse REGION mapping of local ids "
                            "outside 0..%d: %r" % (lw, len(used) - 1, m))
                    m = {lo: m.get(lo, lo) for lo in range(len(used))}
                img = list(m.values())
                c.equal(len(set(img)), len(img), "%s: REGION mapping not injective: %r" % (lw, m))
                c.equal(sorted(img), used, "%s: REGION mapping image vs the global ids of the regions its events "
                        "use" % lw)
            if "STRING" in tb:
                dense, m = tb["STRING"]
                img = list(m.values())
                c.equal(len(set(img)), len(img), "%s: STRING mapping not injective" % lw)
                c.check(all(0 <= g < len(strings) for g in img), "%s: STRING mapping to ids outside 0..%d: %r"
                        % (lw, len(strings) - 1, sorted(g for g in img if not 0 <= g < len(strings))))
                if dense:   # the whole table
                    missing = sorted(s for s in want_strings if sid.get(s) not in set(img))
                    c.equal(missing, [], "%s: strings of its regions / program name no local string maps to"
                            % lw)
            if "ATTRIBUTE" in tb:
                img = list(tb["ATTRIBUTE"][1].values())
                c.equal(len(set(img)), len(img), "%s: ATTRIBUTE mapping not injective" % lw)
                c.check(all(0 <= g < nattrs for g in img), "%s: ATTRIBUTE mapping to ids outside 0..%d"
                        % (lw, nattrs - 1))
            c.equal(sorted(x for x in tb if x not in ("STRING", "REGION", "ATTRIBUTE")), [],
                    "%s: other mapping tables" % lw)
    # The ground truth gives every rank but 0 a region of its own: at least
    # those must have been remapped, or the test proves nothing.
    c.check(len(remapped) >= n - 1, "%s: ranks whose region ids cannot be the identity: %r, want at least %d"
            % (what, remapped, n - 1))
    return remapped


def check_archive(c, anchor, what, n):
    """2.-4.; returns ({rank: [event tuples]}, [global region keys in id
    order], [remapped ranks]) or None."""
    t = h.open_checked_trace(c, what, anchor)
    if t is None:
        return None
    props = ct.properties(c, anchor, what)
    c.equal(props.get("TRACER::JOB::RANKS"), "%d/%d" % (n, n), "%s: property TRACER::JOB::RANKS" % what)
    groups = sorted(g.name for g in t.definitions.location_groups)
    c.equal(groups, sorted("rank %d" % k for k in range(n)), "%s: location groups" % what)
    for g in t.definitions.location_groups:
        c.equal(g.location_group_type, LocationGroupType.PROCESS, "%s: type of group %s" % (what, g.name))
    events = {}
    for k in range(n):
        v = RankView(t, k)
        rw = "%s rank %d" % (what, k)
        c.equal(sorted(loc.name for loc in v.locations), ["host thread 0"], "%s: locations" % rw)
        host0 = [loc for loc in v.locations if loc.name == "host thread 0"]
        if host0:
            c.equal(user_tokens(v, host0[0]), sequence(k), "%s: USER Enter events on host thread 0 (name, or "
                    "name=value for a mark) vs the ground truth" % rw)
            counts = v.count_enters(host0[0])
            c.equal((counts.get("MPI_Init", 0), counts.get("MPI_Finalize", 0)), (1, 1),
                    "%s: Enters of (MPI_Init, MPI_Finalize)" % rw)
        events[k] = [event_tuple(loc, ev) for loc in sorted(v.locations, key=lambda l: l.name)
                     for ev in v.events[loc]]
    strings = global_strings(c, anchor, what)
    check_definitions(c, t, strings, what, n)
    tables = mapping_tables(c, anchor, what)
    remapped = check_mappings(c, t, strings, tables, what, n)
    order = [describe_value(r) for r in sorted(t.regions, key=lambda r: r._ref)]
    return events, order, remapped


# ---------------------------------------------------------------------------
# 5. tracer recover

def recover_copy(c, r, n, runner):
    """Copies D/journals into a fresh E and runs `tracer recover E`;
    returns E's anchor or None."""
    e = os.path.join(r.top, "recovered")
    src = os.path.join(r.output, "journals")
    if not c.check(os.path.isdir(src), "%s: no %s to recover from" % (r.what, src)):
        return None
    shutil.copytree(src, os.path.join(e, "journals"))
    t0 = time.monotonic()
    p = subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover", e], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=h.base_env(), timeout=120)
    runner.recover_times.append("%s recover %.1fs" % (r.what.split()[0], time.monotonic() - t0))
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    what = "%s: tracer recover (copy of the journals)" % r.what
    c.equal(p.returncode, 0, "%s: exit status (stdout %r, stderr %r)" % (what, out, err))
    c.equal(err, "", "%s: stderr" % what)
    c.check(re.fullmatch(r"recovered %s/traces\.otf2: %d of %d ranks, \d+ events of %d host threads and 0 "
                         r"devices \(every rank ended normally\)\n" % (re.escape(e), n, n, n), out),
            "%s: stdout %r" % (what, out))
    anchor = os.path.join(e, "traces.otf2")
    return anchor if c.check(os.path.isfile(anchor), "%s: no %s" % (what, anchor)) else None


# ---------------------------------------------------------------------------
# 6. the ranks must all write, or none

def check_disagreement(c, runner, n=4):
    """Rank 0 alone has TRACER_WRITE_AT_END=0: no rank writes (the write is
    collective), nobody waits forever, rank 0 says so in one line, every
    journal stays, and `tracer recover` writes the whole job from them."""
    r = runner.run("disagree", n, first_env={"TRACER_WRITE_AT_END": "0"}, timeout=60)
    if not c.check(r.rc is not None, "%s: timed out (a rank waits for the others)" % r.what):
        return
    c.equal(r.rc, 0, "%s: exit status" % r.what)
    c.equal(sorted(r.out.splitlines()), want_stdout_lines(n), "%s: stdout lines" % r.what)
    want_line = ("tracer: job: TRACER_WRITE_AT_END or TRACER_JOB_WRITE differs between ranks, so no rank writes "
                 "the archive; the journals in %s/journals stay: 'tracer recover %s' writes it" % (r.output, r.output))
    c.equal([ln for ln in r.err.splitlines() if ln.strip()], [want_line], "%s: stderr" % r.what)
    inside = sorted(f for f in tree(r.output) if f)
    c.equal([f for f in inside if f.startswith("journals/rank")], ["journals/rank%d.journal" % k for k in range(n)],
            "%s: journals kept" % r.what)
    c.check(not os.path.exists(os.path.join(r.output, "traces.def")), "%s: a global definition file was written"
            % r.what)
    anchor = recover_copy(c, r, n, runner)
    if anchor is not None:
        check_archive(c, anchor, r.what + " recovered", n)


def check_all_but(c, r, n, missing):
    """The archive holds every rank but @missing, each with its own ground
    truth, and names the missing rank."""
    t = h.open_checked_trace(c, r.what, r.anchor)
    if t is None:
        return
    props = ct.properties(c, r.anchor, r.what)
    c.equal((props.get("TRACER::JOB::RANKS"), props.get("TRACER::JOB::MISSING_RANKS")),
            ("%d/%d" % (n - 1, n), str(missing)), "%s: TRACER::JOB::RANKS, MISSING_RANKS" % r.what)
    c.equal(sorted(g.name for g in t.definitions.location_groups),
            sorted("rank %d" % k for k in range(n) if k != missing), "%s: location groups" % r.what)
    for k in range(n):
        if k == missing:
            continue
        v = RankView(t, k)
        host0 = [loc for loc in v.locations if loc.name == "host thread 0"]
        if c.check(host0, "%s rank %d: no host thread 0" % (r.what, k)):
            c.equal(user_tokens(v, host0[0]), sequence(k), "%s rank %d: USER Enter events vs the ground truth"
                    % (r.what, k))


def check_untraced_rank(c, runner, n=4, untraced=1, label="untraced-rank", env=None):
    """TRACER_RANKS leaves one rank untraced: it has no journal but takes
    part in every collective step (and counts itself out at MPI_Finalize,
    TRACER_JOB_WRITE=exit); the archive holds the others, each with its own
    ground truth, and names the missing rank."""
    sel = ",".join(str(k) for k in range(n) if k != untraced)
    r = runner.run(label, n, env=dict(env or {}, TRACER_RANKS=sel), timeout=60)
    if not c.check(r.rc is not None, "%s: timed out" % r.what):
        return
    c.equal(r.rc, 0, "%s: exit status" % r.what)
    c.equal(sorted(r.out.splitlines()), want_stdout_lines(n), "%s: stdout lines" % r.what)
    c.equal([ln for ln in r.err.splitlines() if ln.strip()], [], "%s: stderr" % r.what)
    check_all_but(c, r, n, untraced)


def check_failed_rank(c, runner, n=4, bad=1):
    """One rank cannot read its journal at MPI_Finalize: all ranks give up
    together and keep their journals."""
    r = runner.run("bad-journal", n, env={"TEST_CLOBBER_JOURNAL": str(bad)}, timeout=60)
    if not c.check(r.rc is not None, "%s: timed out (a rank waits for the others)" % r.what):
        return
    c.equal(r.rc, 0, "%s: exit status" % r.what)
    c.equal(sorted(r.out.splitlines()), want_stdout_lines(n), "%s: stdout lines" % r.what)
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    jdir = os.path.join(r.output, "journals")
    want0 = ("tracer: job: writer: a rank failed (its own line says why); the journals in %s are kept: "
             "'tracer recover %s' retries" % (jdir, r.output))
    c.equal(len(lines), 2, "%s: stderr lines %r" % (r.what, lines))
    c.check(want0 in lines, "%s: rank 0's line %r in %r" % (r.what, want0, lines))
    c.check(any(ln.startswith("tracer: job: rank %d: " % bad) and "rank%d.journal" % bad in ln for ln in lines),
            "%s: rank %d's line naming its journal in %r" % (r.what, bad, lines))
    inside = sorted(f for f in tree(r.output) if f)
    c.equal([f for f in inside if f.startswith("journals/rank")], ["journals/rank%d.journal" % k for k in range(n)],
            "%s: journals kept" % r.what)
    c.equal([f for f in inside if f.startswith("traces")], ["traces.otf2"], "%s: archive files left" % r.what)
    c.equal(os.path.getsize(r.anchor) if os.path.exists(r.anchor) else None, 0,
            "%s: traces.otf2 is the empty claim" % r.what)


# ---------------------------------------------------------------------------
# 9. the default: the last rank to exit writes the archive

EXIT = {"TRACER_JOB_WRITE": "exit"}


def check_exit_write(c, runner, n=7):
    """TRACER_JOB_WRITE=exit with TRACER_KEEP_JOURNAL=1: the archive the last
    rank wrote passes 2-4 and equals, rank by rank and event by event, what
    `tracer recover` makes of the same journals; no .exit-<k> mark is left."""
    r = runner.run("exit-%d-keep" % n, n, env=dict(EXIT, TRACER_KEEP_JOURNAL="1"))
    if not check_run(c, r, n, True):
        return
    c.equal([f for f in tree(r.output) if ".exit-" in f], [], "%s: exit marks left" % r.what)
    got = check_archive(c, r.anchor, r.what, n)
    anchor = recover_copy(c, r, n, runner)
    rec = check_archive(c, anchor, r.what + " recovered", n) if anchor else None
    if got is not None and rec is not None:
        for k in range(n):
            c.equal(rec[0][k], got[0][k], "%s: rank %d's events, recovered vs written at exit" % (r.what, k))
        c.equal(rec[1], got[1], "%s: global region order, recovered vs written at exit (the same code)" % r.what)


def check_exit_failed(c, runner, n=4, bad=1):
    """TRACER_JOB_WRITE=exit, rank `bad`'s journal path names junk: the last
    rank writes the other ranks (issue 34, item 2: a journal cut short
    before it names its rank is lost, not the job), says in one line which
    was lost, keeps every journal and leaves no exit mark; the archive holds
    the others, each with its own ground truth, and names the lost rank."""
    r = runner.run("exit-bad-journal", n, env=dict(EXIT, TEST_CLOBBER_JOURNAL=str(bad)), timeout=60)
    if not c.check(r.rc is not None, "%s: timed out" % r.what):
        return
    c.equal(r.rc, 0, "%s: exit status" % r.what)
    c.equal(sorted(r.out.splitlines()), want_stdout_lines(n), "%s: stdout lines" % r.what)
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    head = "tracer: job: writer: 1 rank journal lost, rank %d (" % bad
    tail = "; the other ranks are in %s/traces.otf2 and the journals are kept" % r.output
    c.check(len(lines) == 1 and lines[0].startswith(head) and lines[0].endswith(tail)
            and "rank%d.journal" % bad in lines[0],
            "%s: stderr %r, want one '%s...%s' line" % (r.what, lines, head, tail))
    inside = sorted(f for f in tree(r.output) if f)
    c.equal([f for f in inside if f.startswith("journals/rank")], ["journals/rank%d.journal" % k for k in range(n)],
            "%s: journals kept" % r.what)
    c.equal([f for f in inside if ".exit-" in f], [], "%s: exit marks left" % r.what)
    check_all_but(c, r, n, bad)


def main():
    c = h.Checker("mpi_defs")
    h.env_path("TEST_BIN")
    h.env_path("TEST_MPIEXEC")
    h.env_path("TEST_TRACER_CLI")
    tmp = tempfile.mkdtemp(prefix="tracer-test-mpi-defs-")
    runner = Runner(tmp)
    runner.recover_times = []
    t_start = time.monotonic()
    try:
        for n in SIZES:
            for keep in (False, True):
                label = "ranks-%d%s" % (n, "-keep" if keep else "")
                r = runner.run(label, n, env={"TRACER_KEEP_JOURNAL": "1"} if keep else None)
                if not check_run(c, r, n, keep):
                    continue
                got = check_archive(c, r.anchor, r.what, n)
                if got is not None and got[2] is not None:
                    c.note("%s: ranks with remapped region ids: %r" % (label, got[2]))
                if not keep:
                    continue
                anchor = recover_copy(c, r, n, runner)
                if anchor is None:
                    continue
                rec = check_archive(c, anchor, r.what + " recovered", n)
                if got is None or rec is None:
                    continue
                for k in range(n):
                    c.equal(rec[0][k], got[0][k], "%s: rank %d's events, recovered vs written at MPI_Finalize"
                            % (r.what, k))
                c.note("%s: global region order of the recovered archive %s the one written at MPI_Finalize"
                       % (label, "equals" if rec[1] == got[1] else "differs from"))
        check_disagreement(c, runner)
        check_untraced_rank(c, runner)
        check_failed_rank(c, runner)
        check_exit_write(c, runner)
        check_untraced_rank(c, runner, label="exit-untraced-rank", env=EXIT)
        check_exit_failed(c, runner)
    finally:
        timings = ["%s %.1fs" % (r.what.split()[0], r.seconds) for r in runner.runs] + runner.recover_times
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
