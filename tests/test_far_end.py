#!/usr/bin/python3
"""programs/far_end.c: 3 kernels on device 0 that call tracer_mark 10, 3000
and 10 times from device code (run on the encountering thread by host
offload), so the second kernel's end lies more than a journal cursor's
lookahead (1024 records) after its begin: the kernel holds its lane until
the model's pass reaches its end (model/device_model.c). Checks: exit code and output; 3
kernels, all on device 0's first stream, none incomplete; each kernel spans
exactly its own marks (10, 3000, 10: a kernel that lost its end would last
until the end of the run and hold the third kernel's marks too); 3020 marks
with the values each call gave."""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

INNER = [10, 3000, 10]


def check(c, t):
    A = h.Trace.attr
    kernels = sorted((enter.time, leave.time, loc.name, A(leave, "incomplete"))
                     for loc, enter, leave in t.intervals()
                     if enter.region.canonical_name == "kernel")
    c.equal(len(kernels), 3, "kernels")
    c.equal([k[3] for k in kernels], [None] * len(kernels), "incomplete attribute of the kernels")
    c.equal(sorted(set(k[2] for k in kernels)), ["device 0 stream"], "locations of the kernels")
    marks = []
    for loc in t.cpu_threads():
        for ev in t.events[loc]:
            if isinstance(ev, h.otf2.events.Enter) and ev.region.canonical_name == "inner":
                marks.append((ev.time, A(ev, "value")))
    marks.sort()
    c.equal([v for _, v in marks], [i for n in INNER for i in range(n)], "mark values in time order")
    c.equal([sum(1 for m, _ in marks if b <= m <= e) for b, e, _, _ in kernels], INNER,
            "marks inside each kernel")


def main():
    c = h.Checker("far_end")
    tmp = tempfile.mkdtemp(prefix="tracer-test-far-end-")
    out = os.path.join(tmp, "trace")
    t = None
    try:
        p = h.run([h.env_path("TEST_BIN")], tmp, traced=True, output=out)
        err = p.stderr.decode(errors="replace")
        for marker in h.SANITIZER_MARKERS:
            c.check(marker not in err, "sanitizer report: %r" % marker)
        c.equal(p.returncode, 0, "exit code (%s)" % err.strip()[-300:])
        c.equal(p.stdout.decode(errors="replace"), "far_end: x=3\n", "stdout")
        t = h.open_checked_trace(c, "far_end", os.path.join(out, "traces.otf2"))
        if t is not None:
            check(c, t)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return c.finish(t)


if __name__ == "__main__":
    sys.exit(main())
