#!/usr/bin/python3
"""A crashed run keeps its names (issue 35, item 6).

programs/crash_names.c (built with -g): 5 target regions of one construct
mapping the global g, each followed by one in the shared library it links
(programs/crash_names_lib.c, mapping lib_g), then at once SIGSEGV, SIGTERM,
_exit(3) or SIGKILL. The consumer thread had no time to name the two
constructs' code addresses, and the archive `tracer recover` wrote read
plain `target` x10 and `kernel` x10, with no variable on the data
operations. Now recover names them from the files the journal's MODULES
frames list: `target (crash_names.c:<line>)` x5, `target
(crash_names_lib.c:<line>)` x5, `kernel main (crash_names.c:<line>)` x5,
`kernel crash_names_work (crash_names_lib.c:<line>)` x5, and the data
operations carry variable = g and lib_g, as in a normal run of the same
program (compared); recover says it named 2 code addresses and 2
variables. The exit code and output are the untraced run's in each case.

The program's file changed between the run and recover (bytes appended:
another size and mtime): nothing is named from it (plain `target` and
`kernel` x5, no variable g) and recover's line says that file changed; the
library, unchanged, is still named from its file."""
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
    # The sanitizers' own SIGSEGV handler would take the death from tracer's.
    plain = h.run(args, tmp, traced=False, extra_env=h.NO_SAN_SIGNALS)
    out = os.path.join(tmp, "t-" + what)
    # No periodic flush: the journal's thread names a chunk's addresses when
    # it flushes it, and a slow start (TSan) could put the first 1 s flush
    # among the regions; the crash handler (or recover) saves them instead.
    traced = h.run(args, tmp, traced=True, output=out,
                   extra_env=dict(h.NO_SAN_SIGNALS, TRACER_FLUSH_INTERVAL="1h"))
    c.equal((traced.returncode, traced.stdout), (plain.returncode, plain.stdout),
            "%s: exit code and stdout with tracer" % what)
    return out


def recovered(c, what, out):
    """recover @out: its stdout, and the archive (or None)."""
    r = recover(out)
    c.equal(r.returncode, 0, "%s: tracer recover exit code (stderr %r)" % (what, r.stderr.decode(errors="replace")))
    c.equal(h.tracer_lines(r), [], "%s: tracer recover's stderr" % what)
    return r.stdout.decode(errors="replace"), h.open_checked_trace(c, what, os.path.join(out, "traces.otf2"))


def check_crash(c, how, prog, tmp, want):
    text, t = recovered(c, how, traced_run(c, how, prog, tmp, how))
    c.check(re.search(r"^  named 2 code addresses and 2 variables of data operations from the program's files", text,
                      re.M),
            "%s: recover does not say it named the 2 constructs' code addresses, g and lib_g:\n%s" % (how, text))
    if t is not None:
        c.equal(names(t), want, "%s: target regions, kernels and variables after recover" % how)


def check_changed(c, prog, tmp, want):
    """The program's file changed after the run: nothing named from it; its
    library's names still are."""
    copy = os.path.join(tmp, "changed-prog")
    shutil.copy2(prog, copy)
    out = traced_run(c, "changed", copy, tmp, "segv")
    with open(copy, "ab") as f:
        f.write(b"rebuilt")
    text, t = recovered(c, "changed", out)
    c.check(re.search(r"^  1 code address and 1 data address left unnamed: %s changed since the run"
                      % re.escape(copy), text, re.M),
            "changed: recover does not say the program's file changed:\n%s" % text)
    c.check(re.search(r"^  named 1 code address and 1 variable of data operations from the program's files", text,
                      re.M),
            "changed: recover does not name the library's construct and lib_g:\n%s" % text)
    if t is None:
        return
    targets, kernels, variables = names(t)
    lib_target = [n for n in want[0] if "_lib.c" in n]
    lib_kernel = [n for n in want[1] if "_lib.c" in n]
    c.equal((targets, kernels),
            (collections.Counter({"target": ROUNDS, lib_target[0]: ROUNDS}),
             collections.Counter({"kernel": ROUNDS, lib_kernel[0]: ROUNDS})),
            "changed: target regions and kernels by name after recover")
    c.equal(set(variables), {None, "lib_g"}, "changed: variables of the data operations after recover")


def main():
    c = h.Checker("crash_names")
    tmp = tempfile.mkdtemp(prefix="tracer-test-crash-names-")
    try:
        prog = h.env_path("TEST_BIN")
        line = h.kernel_lines(h.env_path("TEST_SRC"))["loop"]
        lib_line = h.kernel_lines(h.env_path("TEST_LIB_SRC"))["lib"]
        out = traced_run(c, "normal", prog, tmp, "")
        t = h.open_checked_trace(c, "normal", os.path.join(out, "traces.otf2"))
        if t is None:
            c.finish()
        want = names(t)
        c.equal(want[:2], (collections.Counter({"target (crash_names.c:%d)" % line: ROUNDS,
                                                "target (crash_names_lib.c:%d)" % lib_line: ROUNDS}),
                           collections.Counter({"kernel main (crash_names.c:%d)" % line: ROUNDS,
                                                "kernel crash_names_work (crash_names_lib.c:%d)" % lib_line: ROUNDS})),
                "normal run: target regions and kernels by name")
        c.check(want[2]["g"] >= ROUNDS and want[2]["lib_g"] >= ROUNDS,
                "normal run: data operations on g and lib_g: %r" % want[2])
        for how in ENDS:
            check_crash(c, how, prog, tmp, want)
        check_changed(c, prog, tmp, want)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
