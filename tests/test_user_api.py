#!/usr/bin/python3
"""programs/user_api.c (linked with libtracer, no OpenMP): user regions and
marks from 2 pthreads -> exact per-thread Enter/Leave sequences, names,
roles, USER paradigm, mark `value` attributes, proper nesting. A worker that
recorded everything before the other began shares its location (issue 34:
a location is free after its thread's last event); each thread's span
starts at the Enter carrying its `thread` attribute."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
from otf2.enums import Paradigm, RegionRole, LocationType  # noqa: E402
import otf2  # noqa: E402

NT, R = 2, 100
WANT_STDOUT = ("user_api: handles distinct=1 same-name-same-handle=1 null-refused=1\n"
               "user_api: 2 threads x 100 regions, failures=0\n")


def expected_worker_sequence(t):
    seq = [("Enter", "outer", None)]
    for i in range(R):
        seq += [("Enter", "inner", None), ("Enter", "tick", t * 1000000 + i),
                ("Leave", "tick", None), ("Leave", "inner", None)]
        if i % 2 == 0:
            seq += [("Enter", "tick", t * 1000000 + 500000 + i), ("Leave", "tick", None)]
    seq.append(("Leave", "outer", None))
    return seq


def observed_spans(t, loc):
    """The sequences of the threads that had @loc, one after another: a
    thread's span begins at the Enter that carries its `thread` (OS tid)."""
    spans = []
    for ev in t.events[loc]:
        if isinstance(ev, otf2.events.Enter) and h.Trace.attr(ev, "thread") is not None:
            spans.append([])
        if spans:
            spans[-1].append(ev)
    return [observed_sequence(evs) for evs in spans]


def observed_sequence(events):
    seq = []
    for ev in events:
        if isinstance(ev, otf2.events.Enter):
            v = h.Trace.attr(ev, "value") if ev.region.canonical_name == "tick" else None
            seq.append(("Enter", ev.region.canonical_name, v))
        elif isinstance(ev, otf2.events.Leave):
            seq.append(("Leave", ev.region.canonical_name, None))
    return seq


def main():
    c = h.Checker("user_api")
    r = h.OffloadRun("user_api")
    t = None
    try:
        c.equal(r.plain.returncode, 0, "exit code (library linked, TRACER_OUTPUT set)")
        c.equal(r.traced.returncode, 0, "exit code (also preloaded)")
        c.equal(r.traced.stdout.decode(), WANT_STDOUT, "stdout")
        # The plain run of OffloadRun has no TRACER_OUTPUT: it writes to
        # ./tracer-<exe>-... in its cwd; that is the documented default.
        # The checked run is the one with TRACER_OUTPUT and the preload.
        for p in (r.plain, r.traced):
            err = p.stderr.decode(errors="replace")
            for marker in h.SANITIZER_MARKERS:
                c.check(marker not in err, "sanitizer report: %r" % marker)
        default_dirs = [d for d in os.listdir(r.cwd) if d.startswith("tracer-")]
        c.check(len(default_dirs) == 1 and re.fullmatch(
            r"tracer-user_api-\d{8}-\d{6}-\d+", default_dirs[0]),
            "default output dir without TRACER_OUTPUT: %r" % os.listdir(r.cwd))
        anchor = os.path.join(r.output, "traces.otf2")
        if c.check(os.path.isfile(anchor), "no archive at %s" % anchor):
            p = subprocess.run([h.otf2_print_cmd() or "otf2-print", anchor],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            c.equal(p.returncode, 0, "otf2-print exit code")
            t = h.Trace(anchor)
            c.extend(t.check_timestamps(), "timestamps")
            c.extend(t.check_nesting(), "nesting")
            c.check(not t.incomplete_leaves(), "incomplete leaves present")
            want_roles = {"main": RegionRole.FUNCTION, "outer": RegionRole.FUNCTION,
                          "inner": RegionRole.FUNCTION, "tick": RegionRole.ARTIFICIAL}
            for reg in t.regions:
                c.check(reg.canonical_name in want_roles, "unexpected region %r"
                        % reg.canonical_name)
                if reg.canonical_name in want_roles:
                    c.equal(reg.paradigm, Paradigm.USER, "paradigm of %r" % reg.canonical_name)
                    c.equal(reg.region_role, want_roles[reg.canonical_name],
                            "role of %r" % reg.canonical_name)
                    c.equal(reg.name, reg.canonical_name, "display name of %r"
                            % reg.canonical_name)
            c.equal(sorted(r_.canonical_name for r_ in t.regions),
                    sorted(want_roles), "region definitions (one per name)")
            threads = t.cpu_threads()
            c.check(2 <= len(threads) <= NT + 1, "CPU_THREAD locations (main + 1 to %d workers): %d"
                    % (NT, len(threads)))
            c.equal(len(t.locations), len(threads), "locations in total (no device streams)")
            c.equal(len(t.rma_wins), 0, "RMA windows")
            main_loc = [l for l in threads if l.name == "host thread 0"]
            if c.check(main_loc, "no 'host thread 0'"):
                c.equal(observed_spans(t, main_loc[0]),
                        [[("Enter", "main", None), ("Leave", "main", None)]],
                        "events of host thread 0 (main)")
            workers = [l for l in threads if l.name != "host thread 0"]
            seqs = {}
            for loc in workers:
                for seq in observed_spans(t, loc):
                    ticks = [v for kind, name, v in seq if kind == "Enter" and name == "tick"]
                    tid = ticks[0] // 1000000 if ticks and ticks[0] is not None else None
                    c.check(tid not in seqs, "worker %r has two spans" % tid)
                    seqs[tid] = (loc, seq)
                c.equal(sum(t.count_enters(loc).values()), len(observed_spans(t, loc)) * (1 + R + R + R // 2),
                        "Enter events on %s: all in its threads' spans" % loc.name)
            c.equal(sorted(k for k in seqs if k is not None), list(range(NT)),
                    "worker ids found in mark values")
            for tid in range(NT):
                if tid in seqs:
                    loc, seq = seqs[tid]
                    want = expected_worker_sequence(tid)
                    if seq != want:
                        first = next((i for i, (a, b) in enumerate(zip(seq, want)) if a != b),
                                     min(len(seq), len(want)))
                        c.check(False, "%s (worker %d): sequence differs at %d: got %r want %r"
                                " (len %d vs %d)" % (loc.name, tid, first, seq[first:first + 3],
                                                     want[first:first + 3], len(seq), len(want)))
            # marks are zero length
            for loc, e, l in t.intervals("tick"):
                c.equal(l.time, e.time, "mark duration")
                break
            pb = t.events_of(otf2.events.ProgramBegin)
            pe = t.events_of(otf2.events.ProgramEnd)
            c.equal(len(pb), 1, "ProgramBegin events")
            c.equal([ev.exit_status for _, ev in pe], [0], "ProgramEnd exit status")
    finally:
        if c.failures:
            r.show()
        r.cleanup()
    c.finish(t)


if __name__ == "__main__":
    main()
