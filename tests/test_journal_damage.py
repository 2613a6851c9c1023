#!/usr/bin/python3
"""A journal cut at many byte offsets, or with single bytes flipped, in
headers and payloads: `tracer recover` never crashes (exit 0 or 1, no
signal, no sanitizer output), says in at most one tracer: line what it
skipped, and when it writes an archive, otf2-print and the Python reader
accept it and it holds only intact data:
  - flood journal (marks of 2 threads, many frames): the recovered mark
    values are exactly those of the intact CHUNK frames (every intact frame
    is used), per thread in order; after a cut, a prefix of each thread's;
  - user_api journal and an offload journal: each location's events are a
    prefix (cut) / subsequence (flip) of the original's, values unchanged.
Frames: 64-byte header, magic 0x4d465254 (LE) at 0, payload_bytes (u64) at
16, records (u32) at 48, location (u32) at 32, seq (u64) at 40, flags at 52."""
import collections
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import journal_frames as jf  # noqa: E402
import otf2  # noqa: E402

MAGIC = 0x4d465254
HDR = struct.Struct("<IHHIIQQIIQIIQ")
REC = jf.RECORD
REC_USER_MARK = 10
USER_REGION_RE = re.compile(r"user region \d+")

Frame = collections.namedtuple("Frame", "off end type location seq records marks")


def parse_frames(data):
    frames = []
    off = 0
    while off + 64 <= len(data):
        (magic, _ver, typ, _hcrc, _pcrc, pbytes, rbytes, loc, _tid, seq, recs, flags,
         _res) = HDR.unpack_from(data, off)
        assert magic == MAGIC, "frame at %d has no magic" % off
        payload = data[off + 64:off + 64 + pbytes]
        marks = []
        if typ == 2:
            raw = jf.chunk_bytes(payload, rbytes, flags, recs)
            for i in range(recs):
                rec = REC.unpack_from(raw, i * 64)
                if rec[1] == REC_USER_MARK:
                    marks.append(rec[8])
        frames.append(Frame(off, off + 64 + pbytes, typ, loc, seq, recs, marks))
        off += 64 + pbytes
    assert off == len(data), "journal does not end on a frame boundary"
    return frames


def expected_marks(frames, intact):
    """{location: [values]} from the intact CHUNK frames (per (location,
    seq) the one with the most records), in seq order."""
    best = {}
    for f in frames:
        if f.type != 2 or not intact(f):
            continue
        key = (f.location, f.seq)
        if key not in best or f.records > best[key].records:
            best[key] = f
    out = collections.defaultdict(list)
    for (loc, _seq), f in sorted(best.items()):
        out[loc].extend(f.marks)
    return {k: v for k, v in out.items() if v}


def is_gap_marker(ev):
    """A MeasurementOnOff without `lost`: chunks of this thread missing from
    the journal between the events around it (issue 18, B1)."""
    return isinstance(ev, otf2.events.MeasurementOnOff) and h.Trace.attr(ev, "lost") is None


def gap_counts(t):
    """{first mark value // 1e9 (the flood thread): OFF gap markers}."""
    out = {}
    for loc in t.cpu_threads():
        evs = t.events.get(loc, [])
        vals = [h.Trace.attr(ev, "value") for ev in evs if isinstance(ev, otf2.events.Enter)]
        if vals:
            out[vals[0] // 1000000000] = sum(
                1 for ev in evs if is_gap_marker(ev)
                and ev.measurement_mode == otf2.MeasurementMode.OFF)
    return out


def expected_gaps(frames, intact):
    """{location: runs of seqs missing below its newest intact chunk}: each
    is one measurement gap in the recovered trace."""
    seqs = collections.defaultdict(set)
    for f in frames:
        if f.type == 2 and f.records and intact(f):
            seqs[f.location].add(f.seq)
    out = {}
    for loc, have in seqs.items():
        out[loc] = sum(1 for s in range(max(have)) if s not in have and (s == 0 or s - 1 in have))
    return out


def location_sequences(t):
    """[(location name, [(kind, name, value)])] without what the writer
    synthesizes at the end of a stream: incomplete Leaves, and a device's
    RmaWinDestroy (its memory window closes where its stream ends; in a cut
    journal that is earlier). Names 'user region N' become None (a lost
    STRING frame leaves a region nameless, which is not wrong data).
    A location is split into its threads' spans: threads that ended give
    their location to later ones, and each thread's first Enter there
    carries its OS tid (attribute 'thread'); after a cut a thread may end
    sooner and a later one take another location, so spans are compared,
    each with the whole of an original thread's."""
    out = []
    for loc in t.locations:
        seq = []
        for ev in t.events.get(loc, []):
            if (isinstance(ev, otf2.events.Enter) and h.Trace.attr(ev, "thread") is not None and
                    any(k[0] in ("Enter", "Leave") for k in seq)):
                out.append((loc.name, seq))
                seq = []
            if isinstance(ev, (otf2.events.Enter, otf2.events.Leave)):
                if isinstance(ev, otf2.events.Leave) and h.Trace.attr(ev, "incomplete") == 1:
                    continue
                name = ev.region.canonical_name
                if USER_REGION_RE.fullmatch(name):
                    name = None
                seq.append((type(ev).__name__, name, h.Trace.attr(ev, "value")))
            elif is_gap_marker(ev):
                continue  # counted by gap_counts
            elif not isinstance(ev, (otf2.events.ProgramBegin, otf2.events.ProgramEnd)):
                seq.append((type(ev).__name__, None, None))
        if seq and seq[-1][0] == "RmaWinDestroy":
            seq.pop()
        out.append((loc.name, seq))
    return out


def item_eq(a, b):
    return a[0] == b[0] and a[2] == b[2] and (a[1] is None or b[1] is None or a[1] == b[1])


def is_prefix(a, b):
    return len(a) <= len(b) and all(item_eq(x, y) for x, y in zip(a, b))


def is_subsequence(a, b):
    j = 0
    for x in a:
        while j < len(b) and not item_eq(x, b[j]):
            j += 1
        if j == len(b):
            return False
        j += 1
    return True


class Journal:
    def __init__(self, name, dir_):
        self.name = name
        self.path = os.path.join(dir_, "tracer.journal")
        with open(self.path, "rb") as f:
            self.data = f.read()
        self.frames = parse_frames(self.data)
        self.original = location_sequences(h.Trace(os.path.join(dir_, "traces.otf2")))
        self.is_flood = name == "flood"


def run_case(c, tmp, j, label, data, kind, intact):
    case = os.path.join(tmp, "case")
    shutil.rmtree(case, ignore_errors=True)
    os.mkdir(case)
    with open(os.path.join(case, "tracer.journal"), "wb") as f:
        f.write(data)
    what = "%s: %s" % (j.name, label)
    try:
        r = subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover", case],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=h.base_env(),
                           timeout=60)
    except subprocess.TimeoutExpired:
        c.check(False, "%s: tracer recover hangs" % what)
        return
    err = r.stderr.decode(errors="replace")
    lines = err.splitlines()
    if not c.check(r.returncode in (0, 1), "%s: tracer recover exit status %d, stderr %r"
                   % (what, r.returncode, err[-1500:])):
        return
    c.check(all(ln.startswith("tracer:") for ln in lines),
            "%s: stderr has other than tracer: lines: %r" % (what, err[-1500:]))
    c.check(len(lines) <= 1, "%s: %d stderr lines: %r" % (what, len(lines), err[-1500:]))
    if r.returncode == 1:
        c.check(len(lines) == 1, "%s: exit 1 without a tracer: line" % what)
        return
    damaged = data != j.data
    skipped = [ln for ln in lines if "skipped" in ln]
    if kind == "flip" or (kind == "cut" and not any(f.end == len(data) for f in j.frames)
                          and len(data) > 0):
        c.check(len(skipped) == 1, "%s: no tracer: line about what was skipped (%r)"
                % (what, lines))
    elif not damaged or kind == "cut":
        c.check(not lines, "%s: tracer: line although nothing was damaged: %r" % (what, lines))
    anchor = os.path.join(case, "traces.otf2")
    exe = h.otf2_print_cmd()
    q = subprocess.run([exe, anchor], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if not c.check(q.returncode == 0, "%s: otf2-print exit %d: %s"
                   % (what, q.returncode, q.stderr.decode(errors="replace")[-500:])):
        return
    try:
        t = h.Trace(anchor)
    except Exception as e:  # noqa: BLE001
        c.check(False, "%s: otf2 reader failed: %r" % (what, e))
        return
    c.extend(t.check_timestamps(), "%s: timestamps" % what)
    c.extend(t.check_nesting(), "%s: nesting" % what)
    got = location_sequences(t)
    test = is_prefix if kind == "cut" else is_subsequence
    unused = list(range(len(j.original)))
    for name, seq in got:
        if not seq:
            continue
        match = next((k for k in unused if test(seq, j.original[k][1])), None)
        if c.check(match is not None, "%s: %s holds events that are not a %s of any original "
                   "location's (first %r)" % (what, name, "prefix" if kind == "cut"
                                             else "subsequence", seq[:3])):
            unused.remove(match)
    if j.is_flood:
        want = expected_marks(j.frames, intact)
        have = {}
        for loc in t.cpu_threads():
            vals = [h.Trace.attr(ev, "value") for ev in t.events[loc]
                    if isinstance(ev, otf2.events.Enter)]
            if vals:
                have[vals[0] // 1000000000] = vals
        want_by_thread = {v[0] // 1000000000: v for v in want.values()}
        gaps = expected_gaps(j.frames, intact)
        want_gaps = {v[0] // 1000000000: gaps.get(loc, 0) for loc, v in want.items()}
        have_gaps = gap_counts(t)
        c.check(have_gaps == want_gaps, "%s: measurement gaps per thread %r, want %r (one per run "
                "of chunks missing before an intact one)" % (what, have_gaps, want_gaps))
        c.check(have == want_by_thread, "%s: recovered marks are not exactly those of the "
                "intact frames: threads %r with %r values, want %r with %r"
                % (what, sorted(have), [len(v) for _, v in sorted(have.items())],
                   sorted(want_by_thread), [len(v) for _, v in sorted(want_by_thread.items())]))


def make_journal(tmp, name, cmd, extra):
    out = os.path.join(tmp, "src-" + name)
    env = {"TRACER_KEEP_JOURNAL": "1"}
    env.update(extra)
    p = h.run(cmd, tmp, traced=True, output=out, extra_env=env)
    if p.returncode != 0 or not os.path.isfile(os.path.join(out, "tracer.journal")):
        return None, "%s: rc %d, stderr %r, dir %r" % (name, p.returncode, p.stderr[-1000:],
                                                        os.listdir(out) if os.path.isdir(out)
                                                        else None)
    return Journal(name, out), None


def offsets_for(j, step, flips_per_frame):
    size = len(j.data)
    cuts = set(range(0, size + 1, step)) | {0, 1, 63, 64, 65, size - 1, size}
    for f in j.frames:
        cuts |= {f.off - 1, f.off, f.off + 1, f.off + 64}
    cuts = sorted(x for x in cuts if 0 <= x <= size)
    flips = set()
    for f in j.frames[:flips_per_frame[0]] if flips_per_frame[0] else j.frames:
        for k in (0, 6, 8, 16, 32, 40, 48):
            flips.add(f.off + k)
        if f.end > f.off + 64:
            flips |= {f.off + 64, (f.off + 64 + f.end) // 2, f.end - 1}
    return cuts, sorted(flips)


def main():
    c = h.Checker("journal_damage")
    tmp = tempfile.mkdtemp(prefix="tracer-test-damage-")
    start = time.monotonic()
    try:
        journals = []
        j, err = make_journal(tmp, "flood", [h.env_path("TEST_FLOOD_BIN"), "2", "1500"],
                              {"TRACER_FLUSH_INTERVAL": "1ms", "TRACER_MAX_MEMORY": "1M",
                               "TRACER_BUFFER_SIZE": "128k"})
        if c.check(j, "no flood journal: %s" % err):
            journals.append((j, 149, (0,)))
        j, err = make_journal(tmp, "user_api", [h.env_path("USER_API_BIN")], {})
        if c.check(j, "no user_api journal: %s" % err):
            journals.append((j, 157, (6,)))
        basic = os.environ.get("TEST_OFFLOAD_BASIC_BIN")
        if basic:
            j, err = make_journal(tmp, "offload", [basic], {})
            if c.check(j, "no offload journal: %s" % err):
                journals.append((j, 593, (5,)))
        for j, step, fpf in journals:
            c.check(len(j.frames) >= 4, "%s: only %d frames" % (j.name, len(j.frames)))
            cuts, flips = offsets_for(j, step, fpf)
            c.note("%s journal: %d bytes, %d frames; %d cuts, %d flips"
                   % (j.name, len(j.data), len(j.frames), len(cuts), len(flips)))
            for cut in cuts:
                run_case(c, tmp, j, "cut at %d" % cut, j.data[:cut], "cut",
                         lambda f, cut=cut: f.end <= cut)
            for off in flips:
                data = bytearray(j.data)
                data[off] ^= 0x5a
                run_case(c, tmp, j, "byte %d flipped" % off, bytes(data), "flip",
                         lambda f, off=off: not (f.off <= off < f.end))
        # Not a timed test (time belongs in bench/): the time is only noted.
        c.note("%.1f s" % (time.monotonic() - start))
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
