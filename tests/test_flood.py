#!/usr/bin/python3
"""programs/flood.c: K threads each emit N marks (value t*1e9 + i) into a
pool far too small for them (TRACER_MAX_MEMORY=1M, TRACER_BUFFER_SIZE=128k).

block: the archive holds every event, in order per thread, and no
       MeasurementOnOff;
drop:  per thread, kept events + the "lost" attributes of the
       MeasurementOnOff(OFF) events == emitted; every gap in the kept values
       is exactly the loss reported at that place; OFF/ON alternate; the
       losses equal what tracer_mark() reported to the program (-1 returns);
       stderr has the one tracer: line with the total;
both:  peak RSS while recording stays within baseline (TRACER_ENABLE=0) +
       TRACER_MAX_MEMORY + a fixed slack."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import otf2  # noqa: E402
from otf2.enums import MeasurementMode  # noqa: E402

K = int(os.environ.get("TEST_FLOOD_THREADS", "4"))
N = int(os.environ.get("TEST_FLOOD_EVENTS", "200000"))
MAX_MEMORY_KB = 1024
SMALL = {"TRACER_MAX_MEMORY": "1M", "TRACER_BUFFER_SIZE": "128k"}
BASE = 1000000000
SANITIZED = bool(os.environ.get("TEST_SANITIZER_PRELOAD", "").strip())
SLACK_KB = (64 if SANITIZED else 16) * 1024


def parse_stdout(c, what, out):
    """{thread: refused}, maxrss_kb."""
    refused = {}
    rss = None
    for line in out.splitlines():
        m = re.fullmatch(r"thread (\d+): emitted (\d+) refused (\d+)", line)
        if m:
            c.equal(int(m.group(2)), N, "%s: thread %s emitted" % (what, m.group(1)))
            refused[int(m.group(1))] = int(m.group(3))
            continue
        m = re.fullmatch(r"maxrss_kb=(\d+)", line)
        if m:
            rss = int(m.group(1))
            continue
        c.check(False, "%s: unexpected stdout line %r" % (what, line))
    c.equal(sorted(refused), list(range(K)), "%s: threads reported on stdout" % what)
    c.check(rss is not None, "%s: no maxrss_kb line" % what)
    return refused, rss


def run_flood(tmp, name, extra):
    out = os.path.join(tmp, name)
    env = dict(SMALL)
    env.update(extra)
    p = h.run([h.env_path("TEST_FLOOD_BIN"), str(K), str(N)], tmp, traced=True,
              output=out, extra_env=env, timeout=240)
    return p, out


def common_checks(c, what, p, out):
    err = p.stderr.decode(errors="replace")
    for marker in h.SANITIZER_MARKERS:
        c.check(marker not in err, "%s: sanitizer report: %r" % (what, marker))
    c.equal(p.returncode, 0, "%s: exit code" % what)
    anchor = os.path.join(out, "traces.otf2")
    if not c.check(os.path.isfile(anchor) and os.path.getsize(anchor) > 0,
                   "%s: no archive at %s" % (what, anchor)):
        return None
    c.check(not os.path.exists(os.path.join(out, "tracer.journal")),
            "%s: journal left behind without TRACER_KEEP_JOURNAL" % what)
    t = h.open_checked_trace(c, what, anchor)
    if t is None:
        return None
    c.check(not t.incomplete_leaves(), "%s: incomplete leaves" % what)
    return t


def walk_location(t, loc):
    """[(kind, payload, time)]: ('mark', value), ('off', lost), ('on', None)."""
    seq = []
    for ev in t.events[loc]:
        if isinstance(ev, otf2.events.Enter):
            if ev.region.canonical_name == "flood":
                seq.append(("mark", h.Trace.attr(ev, "value"), ev.time))
            else:
                seq.append(("enter " + ev.region.canonical_name, None, ev.time))
        elif isinstance(ev, otf2.events.MeasurementOnOff):
            if ev.measurement_mode == MeasurementMode.OFF:
                seq.append(("off", h.Trace.attr(ev, "lost"), ev.time))
            else:
                seq.append(("on", h.Trace.attr(ev, "lost"), ev.time))
    return seq


def check_block(c, t, refused):
    c.equal(refused, {i: 0 for i in range(K)}, "block: tracer_mark() results != 0")
    onoff = t.events_of(otf2.events.MeasurementOnOff)
    c.equal(len(onoff), 0, "block: MeasurementOnOff events")
    seen = set()
    for loc in t.cpu_threads():
        seq = walk_location(t, loc)
        marks = [v for kind, v, _ in seq if kind == "mark"]
        other = [kind for kind, _, _ in seq if kind != "mark"]
        c.equal(other, [], "block: %s: events other than flood marks" % loc.name)
        if not marks:
            continue
        th = marks[0] // BASE
        if not c.check(th < K and th not in seen, "block: %s: first value %r"
                       % (loc.name, marks[0])):
            continue
        seen.add(th)
        want = list(range(th * BASE, th * BASE + N))
        if marks != want:
            bad = next((i for i, (a, b) in enumerate(zip(marks, want)) if a != b),
                       min(len(marks), len(want)))
            c.check(False, "block: thread %d: %d values, want %d; first difference at "
                    "index %d: %r" % (th, len(marks), N, bad, marks[bad:bad + 3]))
    c.equal(sorted(seen), list(range(K)), "block: threads with marks")


def check_drop(c, t, refused, err):
    seen = set()
    total_lost = 0
    for loc in t.cpu_threads():
        seq = walk_location(t, loc)
        other = [kind for kind, _, _ in seq if kind not in ("mark", "off", "on")]
        c.equal(other, [], "drop: %s: unexpected events" % loc.name)
        marks = [v for kind, v, _ in seq if kind == "mark"]
        if not marks:
            c.check(not any(k == "off" for k, _, _ in seq),
                    "drop: %s: losses but no kept event to attribute them to" % loc.name)
            continue
        th = marks[0] // BASE
        if not c.check(th < K and th not in seen, "drop: %s: first value %r"
                       % (loc.name, marks[0])):
            continue
        seen.add(th)
        expect = 0        # next index i the thread emitted
        pending = 0       # lost since the last kept mark
        state = "on"
        last_time = None
        kept = lost = 0
        for kind, v, time in seq:
            if last_time is not None:
                c.check(time >= last_time, "drop: thread %d: time goes back at %s" % (th, kind))
            last_time = time
            if kind == "off":
                c.check(state == "on", "drop: thread %d: OFF while already off" % th)
                state = "off"
                c.check(isinstance(v, int) and v > 0,
                        "drop: thread %d: OFF without a positive 'lost' (%r)" % (th, v))
                pending += v or 0
                lost += v or 0
            elif kind == "on":
                c.check(state == "off", "drop: thread %d: ON while not off" % th)
                c.check(v is None, "drop: thread %d: ON carries 'lost'" % th)
                state = "on"
            else:
                c.check(state == "on", "drop: thread %d: mark recorded while measurement off" % th)
                i = v - th * BASE
                if not c.check(0 <= i < N and i >= expect,
                               "drop: thread %d: value index %d not increasing / out of range "
                               "(expected >= %d)" % (th, i, expect)):
                    continue
                c.check(i - expect == pending,
                        "drop: thread %d: %d values missing before index %d but the trace "
                        "reports %d lost there" % (th, i - expect, i, pending))
                pending = 0
                expect = i + 1
                kept += 1
        c.check(N - expect == pending,
                "drop: thread %d: %d values missing at the end, %d reported lost"
                % (th, N - expect, pending))
        c.equal(kept + lost, N, "drop: thread %d: kept + lost" % th)
        c.equal(lost, refused.get(th), "drop: thread %d: lost in trace vs -1 returns of "
                "tracer_mark()" % th)
        total_lost += lost
    c.equal(sorted(seen), list(range(K)), "drop: threads with marks")
    c.check(total_lost > 0, "drop: nothing was lost with a 1M pool (the test floods too little)")
    lines = [ln for ln in err.splitlines() if ln.startswith("tracer:")]
    want = ("tracer: %d events were dropped because buffers were full "
            "(TRACER_ON_FULL=drop); the trace marks where" % total_lost)
    c.equal(lines, [want], "drop: tracer: lines on stderr")


def check_summary(c, mode, t, out):
    """`tracer summary` tells the user what drop mode lost, and what to
    change (issue 35, item 8): one line with the events the archive's
    MeasurementOnOff(OFF) events say were lost, and in how many gaps."""
    offs = [ev for loc in t.events for ev in t.events[loc] if isinstance(ev, otf2.events.MeasurementOnOff)
            and ev.measurement_mode == MeasurementMode.OFF]
    lost = sum(h.Trace.attr(ev, "lost") or 0 for ev in offs)
    r = subprocess.run([h.env_path("TEST_TRACER_CLI"), "summary", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=h.base_env(), timeout=120)
    c.equal(r.returncode, 0, "%s: tracer summary exit code" % mode)
    got = [ln for ln in r.stdout.decode(errors="replace").splitlines() if ln.startswith("events dropped")]
    want = [] if mode == "block" else [
        "events dropped: %d in %d %s, the buffers full (TRACER_ON_FULL=drop): a larger TRACER_MAX_MEMORY, or "
        "TRACER_ON_FULL=block, keeps them" % (lost, len(offs), "gap" if len(offs) == 1 else "gaps")]
    c.equal(got, want, "%s: what tracer summary says of dropped events" % mode)
    c.check(mode == "block" or lost > 0, "%s: no events lost" % mode)


def main():
    c = h.Checker("flood")
    tmp = tempfile.mkdtemp(prefix="tracer-test-flood-")
    t = None
    procs = []
    try:
        base = h.run([h.env_path("TEST_FLOOD_BIN"), str(K), str(N)], tmp, traced=False,
                     extra_env={"TRACER_ENABLE": "0"}, timeout=120)
        procs.append(("baseline (TRACER_ENABLE=0)", base))
        c.equal(base.returncode, 0, "baseline exit code")
        c.equal(os.listdir(tmp), [], "baseline (TRACER_ENABLE=0) wrote files")
        _, base_rss = parse_stdout(c, "baseline", base.stdout.decode())

        for mode in ("block", "drop"):
            p, out = run_flood(tmp, mode, {"TRACER_ON_FULL": mode})
            procs.append((mode, p))
            refused, rss = parse_stdout(c, mode, p.stdout.decode())
            if rss is not None and base_rss is not None:
                bound = base_rss + MAX_MEMORY_KB + SLACK_KB
                c.check(rss <= bound, "%s: peak RSS while recording %d KiB > baseline %d KiB + "
                        "TRACER_MAX_MEMORY %d KiB + %d KiB" % (mode, rss, base_rss, MAX_MEMORY_KB,
                                                                SLACK_KB))
                c.note("%s: peak RSS while recording %d KiB (baseline %d KiB)"
                       % (mode, rss, base_rss))
            t = common_checks(c, mode, p, out)
            if t is None:
                continue
            err = p.stderr.decode(errors="replace")
            if mode == "block":
                lines = [ln for ln in err.splitlines() if ln.startswith("tracer:")]
                c.check(all("threads wait for the journal writer" in ln for ln in lines)
                        and len(lines) <= 1, "block: tracer: lines on stderr: %r" % lines)
                check_block(c, t, refused)
            else:
                check_drop(c, t, refused, err)
            check_summary(c, mode, t, out)
            t = None
            shutil.rmtree(out, ignore_errors=True)
    finally:
        if c.failures:
            for what, p in procs:
                print("--- %s: rc=%d\nstdout: %s\nstderr: %s" % (
                    what, p.returncode, p.stdout.decode(errors="replace")[-2000:],
                    p.stderr.decode(errors="replace")[-3000:]))
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
