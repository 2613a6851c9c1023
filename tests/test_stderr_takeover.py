#!/usr/bin/python3
"""Issue 34 item 8: a program closes its stderr and opens a file of its own,
which gets fd 2 (programs/stderr_takeover.c). tracer's end-of-run lines
("N events were dropped ...", and "trace written to ..." with
TRACER_VERBOSE=1) used to land in that file.

after:  fd 2 is taken after tracing started. The file holds exactly the
        program's 10 lines; tracer's lines go to the stderr the program was
        started with (here, the test's pipe), and they are right: the marks
        in the archive plus the dropped events are the N marks made.
before: fd 2 is taken before tracing started: tracer has no stderr of the
        program's start to write to, and writes nothing (the file holds
        exactly the program's lines); the trace is written all the same."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import otf2  # noqa: E402

N = 2000000
PROGRAM_LINES = "".join("program line %d\n" % i for i in range(10))
ENV = {"TRACER_VERBOSE": "1", "TRACER_MAX_MEMORY": "128k", "TRACER_ON_FULL": "drop"}


def marks(t):
    n = 0
    for loc in t.cpu_threads():
        for ev in t.events[loc]:
            if isinstance(ev, otf2.events.Enter) and ev.region.canonical_name == "step":
                n += 1
    return n


def main():
    c = h.Checker("stderr_takeover")
    tmp = tempfile.mkdtemp(prefix="tracer-test-stderr-takeover-")
    bin_ = h.env_path("TEST_STDERR_TAKEOVER_BIN")
    try:
        for when in ("after", "before"):
            own = os.path.join(tmp, when + ".log")
            out = os.path.join(tmp, "t-" + when)
            p = h.run([bin_, when, str(N), own], tmp, traced=True, output=out, extra_env=ENV, timeout=240)
            c.equal(p.returncode, 0, "%s: exit status (stderr %r)" % (when, p.stderr[-2000:]))
            c.equal(p.stdout, b"", "%s: stdout" % when)
            with open(own) as f:
                got = f.read()
            c.equal(got, PROGRAM_LINES, "%s: the program's own file (fd 2)" % when)
            lines = h.tracer_lines(p)
            anchor = os.path.join(out, "traces.otf2")
            t = h.open_checked_trace(c, when, anchor) if os.path.isfile(anchor) else None
            c.check(t is not None, "%s: no archive in %s" % (when, out))
            if when == "before":
                c.equal(lines, [], "%s: tracer: lines on the stderr the program no longer has" % when)
                continue
            written = [ln for ln in lines if ln.startswith("tracer: trace written to %s/traces.otf2" % out)]
            c.equal(len(written), 1, "%s: 'trace written' lines on the original stderr: %r" % (when, lines))
            dropped = [int(m.group(1)) for ln in lines
                       for m in [re.match(r"tracer: (\d+) events were dropped because buffers were full", ln)] if m]
            c.equal(len(dropped), 1, "%s: 'events were dropped' lines on the original stderr: %r" % (when, lines))
            if t is not None and dropped:
                c.check(dropped[0] > 0, "%s: nothing dropped: the test does not test the line" % when)
                got = marks(t)
                c.equal(got + dropped[0], N, "%s: marks in the archive (%d) plus dropped (%d)" % (when, got, dropped[0]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
