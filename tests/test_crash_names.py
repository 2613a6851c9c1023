#!/usr/bin/python3
"""A crashed run keeps its names (issue 35, item 6).

programs/crash_names.c (built with -g): 5 target regions of one construct
that maps the global g, then at once SIGSEGV, SIGTERM, _exit(3) or SIGKILL. The consumer thread
had no time to name the construct's code address, and the archive
`tracer recover` wrote read plain `target` x5 and `kernel` x5. Now recover
names it from the program's file, which the journal's MODULES frame lists
with its identity: the target regions are `target (crash_names.c:<line>)`
x5 and the kernels `kernel main (crash_names.c:<line>)` x5, and the data operations on g carry variable = g, as in a normal run of
the same program (compared); recover says it named one code address and
one variable. The exit code is the untraced run's in each case.

A binary changed between the run and recover (bytes appended: another
size and mtime) names nothing: plain `target` and `kernel`, no variable, and recover's
line says which file changed."""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

ROUNDS = 5
SRC = "crash_names.c"
ENDS = ("segv", "term", "exit", "kill")


def recover(dir_):
    return subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover", dir_], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=h.base_env(), timeout=300)


def names(t):
    """(target region names, kernel names, data ops' variables), each a
    Counter."""
    targets = collections.Counter(ev.region.name for _, ev in t.enters("target"))
    kernels = collections.Counter(ev.region.name for _, ev in t.enters("kernel"))
    variables = collections.Counter(t.attr(ev, "variable") for _, ev in t.enters()
                                    if ev.region.canonical_name in h.DATA_OPS)
    return targets, kernels, variables


def traced_run(c, what, prog, tmp, how):
    """Runs @prog traced, ending as @how says; the archive's directory."""
    args = [prog] + ([how] if how else [])
    plain = h.run(args, tmp, traced=False)
    out = os.path.join(tmp, "t-" + what)
    traced = h.run(args, tmp, traced=True, output=out)
    c.equal((traced.returncode, traced.stdout), (plain.returncode, plain.stdout),
            "%s: exit code and stdout with tracer" % what)
    return out


def check_crash(c, how, prog, tmp, want):
    out = traced_run(c, how, prog, tmp, how)
    r = recover(out)
    text = r.stdout.decode(errors="replace")
    c.equal(r.returncode, 0, "%s: tracer recover exit code (stderr %r)" % (how, r.stderr.decode(errors="replace")))
    c.equal(h.tracer_lines(r), [], "%s: tracer recover's stderr" % how)
    c.check(re.search(r"^  named 1 code address and 1 variable of data operations from the program's files", text,
                      re.M),
            "%s: recover does not say it named the construct's code address and g:\n%s" % (how, text))
    t = h.open_checked_trace(c, how, os.path.join(out, "traces.otf2"))
    if t is not None:
        c.equal(names(t), want, "%s: target regions and kernels by name after recover" % how)


def check_changed(c, prog, tmp):
    """The program's file changed after the run: nothing named from it."""
    copy = os.path.join(tmp, "changed-prog")
    shutil.copy2(prog, copy)
    out = traced_run(c, "changed", copy, tmp, "segv")
    with open(copy, "ab") as f:
        f.write(b"rebuilt")
    r = recover(out)
    text = r.stdout.decode(errors="replace")
    c.equal(r.returncode, 0, "changed: tracer recover exit code (stderr %r)" % r.stderr.decode(errors="replace"))
    c.check(re.search(r"^  1 code address and \d+ data address(es)? left unnamed: %s changed since the run"
                      % re.escape(copy), text, re.M),
            "changed: recover does not say the program's file changed:\n%s" % text)
    c.check(not re.search(r"  named \d+ code", text), "changed: recover names from a changed file:\n%s" % text)
    t = h.open_checked_trace(c, "changed", os.path.join(out, "traces.otf2"))
    if t is not None:
        targets, kernels, variables = names(t)
        c.equal((targets, kernels), (collections.Counter({"target": ROUNDS}), collections.Counter({"kernel": ROUNDS})),
                "changed: target regions and kernels by name after recover")
        c.equal(set(variables), {None}, "changed: variables of the data operations after recover")


def main():
    c = h.Checker("crash_names")
    tmp = tempfile.mkdtemp(prefix="tracer-test-crash-names-")
    try:
        prog = h.env_path("TEST_BIN")
        line = h.kernel_lines(h.env_path("TEST_SRC"))["loop"]
        out = traced_run(c, "normal", prog, tmp, "")
        t = h.open_checked_trace(c, "normal", os.path.join(out, "traces.otf2"))
        if t is None:
            c.finish()
        want = names(t)
        c.equal(want[:2], (collections.Counter({"target (%s:%d)" % (SRC, line): ROUNDS}),
                           collections.Counter({"kernel main (%s:%d)" % (SRC, line): ROUNDS})),
                "normal run: target regions and kernels by name")
        c.check(want[2]["g"] >= ROUNDS, "normal run: data operations on g: %r" % want[2])
        for how in ENDS:
            check_crash(c, how, prog, tmp, want)
        check_changed(c, prog, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
