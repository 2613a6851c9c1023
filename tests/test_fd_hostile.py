#!/usr/bin/python3
"""A program that treats every descriptor above stderr as its own
(programs/fd_hostile.c; issue 16 item 4). tracer keeps its descriptors (the
journal, the trace directory, the files libdwfl reads symbols from) out of
the way and checks them before every use: it never writes into the
program's files, never closes them, and loses nothing.

Each mode runs without and with tracer (TRACER_FLUSH_INTERVAL=10ms, so that
tracer holds its symbol files before the program's phase 2: the program
waits for phase 1's kernel symbol to reach the journal):
  closeall  closes every descriptor from 3 up, then opens userdata.txt and
            8 extra files, which take the lowest numbers (tracer's old ones);
  dup2out   dup2s its stdout onto descriptors 3..9;
  takeall   dup2s userdata.txt onto every other descriptor above stderr.
Checks: exit status 0 and stdout identical to the untraced run (for
closeall and takeall that includes the program's own verdicts: userdata.txt
holds exactly the lines it wrote, the extra files are empty, and after every
exit handler, tracer's end of run among them, each descriptor the program
holds still names its file); no tracer: line about the journal and no
sanitizer report; the archive holds all 2 x 40 target regions with the
kernels of each phase in order (symbols resolved after the takeover too),
and the marks "phase1" 0..39 and "phase2" 1000..1039 (a name registered
after the takeover) in order."""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import otf2  # noqa: E402

R = 40
MODES = ("closeall", "dup2out", "takeall")


def want_stdout(mode):
    out = "phase 1: %d regions\n" % R
    if mode == "dup2out":
        out += "".join("stdout line %d\n" % i for i in range(R))
    out += "phase 2: %d regions (a[1] = %d)\n" % (R, R)
    if mode != "dup2out":
        size = sum(len("userdata line %d\n" % i) for i in range(R))
        out += "userdata.txt: %d bytes, as written\nextra files: 0 bytes\n" % size
        out += "descriptors at exit: unchanged\n"
    return out


def marks(t, name):
    return [h.Trace.attr(ev, "value") for _, ev in t.enters(name)]


def check_mode(c, tmp, mode):
    cwd = os.path.join(tmp, mode)
    os.mkdir(cwd)
    out = os.path.join(tmp, mode + "-trace")
    cmd = [h.env_path("TEST_BIN"), mode]
    plain = h.run(cmd, cwd, traced=False)
    for name in os.listdir(cwd):
        os.unlink(os.path.join(cwd, name))
    traced = h.run(cmd, cwd, traced=True, output=out, extra_env={"TRACER_FLUSH_INTERVAL": "10ms"})
    err = traced.stderr.decode(errors="replace")
    what = mode
    c.equal(plain.returncode, 0, "%s: exit status without tracer" % what)
    c.equal(plain.stdout.decode(errors="replace"), want_stdout(mode), "%s: stdout without tracer" % what)
    c.equal(traced.returncode, 0, "%s: exit status with tracer" % what)
    c.equal(traced.stdout.decode(errors="replace"), plain.stdout.decode(errors="replace"),
            "%s: stdout with tracer (vs without)" % what)
    for marker in h.SANITIZER_MARKERS:
        c.check(marker not in err, "%s: sanitizer report: %r" % (what, marker))
    c.check("did not resolve" not in err, "%s: tracer never resolved phase 1's symbols: %r" % (what, err))
    lines = [ln for ln in err.splitlines() if ln.startswith("tracer:")]
    c.check(not [ln for ln in lines if "journal" in ln or "writer" in ln],
            "%s: tracer: lines about the journal or the archive: %r" % (what, lines))
    if not c.check(os.path.isfile(os.path.join(out, "traces.otf2")),
                   "%s: no archive in %s (%r); stderr %r" % (what, out, os.listdir(out)
                                                             if os.path.isdir(out) else None, err[-2000:])):
        return
    t = h.open_checked_trace(c, what, os.path.join(out, "traces.otf2"))
    if t is None:
        return
    c.equal(len(t.enters("target")), 2 * R, "%s: target regions" % what)
    lines_of = h.kernel_lines(h.env_path("TEST_SRC"))
    names = [ev.region.name for _, ev in sorted(t.enters("kernel"), key=lambda le: le[1].time)]
    want = [("regions_one", lines_of["one"])] * R + [("regions_two", lines_of["two"])] * R
    c.equal(len(names), len(want), "%s: kernels" % what)
    bad = [(i, n) for i, (n, (f, ln)) in enumerate(zip(names, want)) if not h.kernel_name_re(ln, f).search(n)]
    c.check(not bad, "%s: kernels not named after their phase's symbol (first: %r)" % (what, bad[:3]))
    c.equal(marks(t, "phase1"), list(range(R)), "%s: marks phase1" % what)
    c.equal(marks(t, "phase2"), [1000 + i for i in range(R)], "%s: marks phase2" % what)


def main():
    c = h.Checker("fd_hostile")
    tmp = tempfile.mkdtemp(prefix="tracer-test-fd-hostile-")
    try:
        for mode in MODES:
            check_mode(c, tmp, mode)
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
