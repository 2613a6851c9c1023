#!/usr/bin/python3
"""programs/user_incomplete.c: tracer.h promises that an end for a region
that is not the innermost closes the inner ones marked incomplete, and a
begin that never ends is closed at the end of the run, marked incomplete.
Expected on the one host thread:
  Enter(a) Enter(b) Leave(b, incomplete=1) Leave(a) Enter(m) Leave(m)
  Enter(c) Leave(c, incomplete=1 at the location's last timestamp)"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import otf2  # noqa: E402


def main():
    c = h.Checker("user_incomplete")
    r = h.OffloadRun("user_incomplete")
    t = None
    try:
        c.equal(r.traced.returncode, 0, "exit code")
        c.equal(r.traced.stdout.decode(), "user_incomplete: rc=0\n", "stdout")
        anchor = os.path.join(r.output, "traces.otf2")
        if c.check(os.path.isfile(anchor), "no archive at %s" % anchor):
            t = h.Trace(anchor)
            c.extend(t.check_timestamps(), "timestamps")
            c.extend(t.check_nesting(), "nesting")
            threads = t.cpu_threads()
            c.equal(len(threads), 1, "CPU_THREAD locations")
            if threads:
                loc = threads[0]
                seq = []
                for ev in t.events[loc]:
                    if isinstance(ev, (otf2.events.Enter, otf2.events.Leave)):
                        seq.append((type(ev).__name__, ev.region.canonical_name,
                                    h.Trace.attr(ev, "incomplete", 0)))
                c.equal(seq, [("Enter", "a", 0), ("Enter", "b", 0), ("Leave", "b", 1),
                              ("Leave", "a", 0), ("Enter", "m", 0), ("Leave", "m", 0),
                              ("Enter", "c", 0), ("Leave", "c", 1)],
                        "Enter/Leave sequence (kind, region, incomplete)")
                c.equal(sorted(ev.region.canonical_name for _, ev in t.incomplete_leaves()),
                        ["b", "c"], "incomplete_leaves()")
                last = max(ev.time for ev in t.events[loc])
                leaves_c = t.leaves("c", loc)
                if leaves_c:
                    c.equal(leaves_c[-1][1].time, last,
                            "Leave(c) at the location's last timestamp")
                marks = t.enters("m", loc)
                if marks:
                    c.equal(h.Trace.attr(marks[0][1], "value"), 42, "mark value")
    finally:
        if c.failures:
            r.show()
        r.cleanup()
    c.finish(t)


if __name__ == "__main__":
    main()
