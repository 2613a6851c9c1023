#!/usr/bin/python3
"""programs/cross_delete.c: device memory allocated on one host thread and
freed on another (and an address freed on one thread possibly taken again on
the other). A delete reports neither its size nor the variable: both come
from the alloc of its address, whichever thread ran it, in time order
(model/device_model.h: every thread's live allocations). Checks, against the program's fixed order: 5 allocs
and 5 deletes; each delete's `bytes` is its variable's size and its
`variable` attribute names it, in the program's order per thread; the first
two deletes ran on another thread than their allocs; alloc/delete pairing
and the device memory metric, step by step."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

SIZES = {"g0": 8000, "g1": 16000, "g2": 24000, "g3": 32000}
WANT_STDOUT = "cross_delete: done\n"


def main():
    c = h.Checker("cross_delete")
    r = h.OffloadRun("cross_delete")
    try:
        t = h.check_run_basics(c, r, 0, WANT_STDOUT)
        check(c, t)
    finally:
        r.cleanup()
    return c.finish(t)


def check(c, t):
    if t is not None:
        A = h.Trace.attr
        allocs, deletes = [], []
        for loc, enter, leave in t.intervals():
            cn = enter.region.canonical_name
            if cn in ("alloc", "delete"):
                (allocs if cn == "alloc" else deletes).append(
                    (enter.time, loc.name, A(enter, "variable"), A(enter, "bytes"), leave.time))
        allocs.sort()
        deletes.sort()
        c.equal([(v, b) for _, _, v, b, _ in allocs],
                [("g0", 8000), ("g1", 16000), ("g2", 24000), ("g3", 32000), ("g0", 8000)],
                "allocs in time order: (variable, bytes)")
        # g0 and g1 go in one exit data: their order within it is the runtime's
        first = sorted((v, b) for _, _, v, b, _ in deletes[:2])
        c.equal(first, [("g0", 8000), ("g1", 16000)], "the first two deletes: (variable, bytes)")
        c.equal([(v, b) for _, _, v, b, _ in deletes[2:]], [("g2", 24000), ("g3", 32000), ("g0", 8000)],
                "the other deletes in time order: (variable, bytes)")
        if len(allocs) == 5 and len(deletes) == 5:
            c.check(deletes[0][1] != allocs[0][1] and deletes[1][1] != allocs[1][1],
                    "g0 and g1 deleted on another thread than their allocs (%r, %r)" % (allocs[:2], deletes[:2]))
            c.check(deletes[2][1] != allocs[2][1], "g2 deleted on another thread than its alloc")
        # the memory in use after each alloc and delete, in time order (the
        # harness's check_memory pairs them location by location)
        steps = sorted([(e[4], e[3]) for e in allocs] + [(e[4], -e[3]) for e in deletes if e[3]])
        running, want = 0, []
        for _, delta in steps:
            running += delta
            want.append(running)
        stream = t.device_streams().get(0)
        if c.check(stream is not None, "no stream for device 0"):
            got = [v for _, _, v in t.metric_values("device_memory_in_use", stream)]
            c.equal(got, want, "device_memory_in_use after each alloc and delete, in time order")


if __name__ == "__main__":
    sys.exit(main())
