#!/usr/bin/python3
"""Constructs with nowait are named after the construct the user wrote and
shown as nowait (issue 35, item 2).

programs/nowait_names.c: ROUNDS (3) `target nowait` in main, ROUNDS
`target update nowait` in a function refresh(), one `target depend`
without nowait in main. LLVM 19 reports the nowait ones under the plain
kinds (ompt_target, ompt_target_update), called from task entry functions
Clang made (.omp_task_entry..<n>); before, they read `target
(.omp_task_entry..10)` and `target update (.omp_task_entry..39)`, counted
as plain target and target update.

Built with -g: `target nowait (nowait_names.c:<line>)` x3 and `target
update nowait (nowait_names.c:<line>)` x3 at the constructs' lines,
`target (nowait_names.c:<line>)` x1. Without -g (-O1): `target nowait
(main, line <line>)` x3 (function and line from the kernel's entry symbol),
`target update nowait (refresh)` x3 (the function that creates the task:
the one whose code takes the task entry's address), `target (main)` x1.
Kernels `kernel main (...)` x3 and x1 at the two lines. Each region's
description keeps the task entry's name. `tracer summary` counts target
nowait 3 and target update nowait 3. The program's exit code and output
are those of the untraced run."""
import collections
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

ROUNDS = 3
SRC = "nowait_names.c"


def check(c, what, bin_, tmp, marks, debug):
    plain = h.run([bin_], tmp, traced=False)
    out = os.path.join(tmp, "t-" + what)
    traced = h.run([bin_], tmp, traced=True, output=out)
    c.equal((traced.returncode, traced.stdout), (plain.returncode, plain.stdout),
            "%s: exit code and stdout with tracer" % what)
    c.equal(plain.stdout, b"nowait_names: 4 3\n", "%s: the program's own result" % what)
    t = h.open_checked_trace(c, what, os.path.join(out, "traces.otf2"))
    if t is None:
        return
    if debug:
        want = {"target nowait (%s:%d)" % (SRC, marks["nowait"]): ROUNDS,
                "target update nowait (%s:%d)" % (SRC, marks["refresh"]): ROUNDS,
                "target (%s:%d)" % (SRC, marks["depend"]): 1}
        kernels = {"kernel main (%s:%d)" % (SRC, marks["nowait"]): ROUNDS,
                   "kernel main (%s:%d)" % (SRC, marks["depend"]): 1}
    else:
        want = {"target nowait (main, line %d)" % marks["nowait"]: ROUNDS,
                "target update nowait (refresh)": ROUNDS, "target (main)": 1}
        kernels = {"kernel main (line %d)" % marks["nowait"]: ROUNDS,
                   "kernel main (line %d)" % marks["depend"]: 1}
    got = collections.Counter()
    for canonical in ("target", "target nowait", "target update nowait", "target update"):
        for _, ev in t.enters(canonical):
            got[ev.region.name] += 1
            nowait = canonical.endswith("nowait")
            c.check(ev.region.name.startswith(canonical + " ("),
                    "%s: region %r is not under its canonical name %r" % (what, ev.region.name, canonical))
            c.check(not nowait or ".omp_task_entry." in (ev.region.description or ""),
                    "%s: %r: description %r does not keep the task entry's name"
                    % (what, ev.region.name, ev.region.description))
    c.equal(dict(got), want, "%s: target regions by name" % what)
    got_k = collections.Counter(ev.region.name for _, ev in t.enters("kernel"))
    c.equal(dict(got_k), kernels, "%s: kernels by name" % what)
    r = subprocess.run([h.env_path("TEST_TRACER_CLI"), "summary", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=h.base_env(), timeout=120)
    text = r.stdout.decode(errors="replace")
    c.check("target nowait %d, target update nowait %d" % (ROUNDS, ROUNDS) in text,
            "%s: tracer summary does not count the nowait constructs:\n%s" % (what, text))


def main():
    c = h.Checker("nowait_names")
    tmp = tempfile.mkdtemp(prefix="tracer-test-nowait-names-")
    try:
        src = h.env_path("TEST_SRC")
        marks = dict(h.source_marks(src, "KERNEL"), **h.source_marks(src, "UPDATE"))
        check(c, "-g", h.env_path("TEST_BIN"), tmp, marks, True)
        check(c, "no -g", h.env_path("TEST_BIN_NODEBUG"), tmp, marks, False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
