#!/usr/bin/python3
"""C++ names as the user wrote them (issue 35, item 1).

programs/cxx_names.cpp, built without -g (so tracer knows each function
only by its linkage name): target constructs in OMPStream<T>::add for T =
double (2 runs) and float (1 run), in a static reductions(double&,
double*) (3 runs) and in a lambda in main (1 run). Before, regions read
`target (_ZN9OMPStreamIdE3addEv)` and kernels
`__omp_offloading_<dev>_<file>__ZN9OMPStreamIdE3addEv_l<line>`.

Built at -O0 (each construct's call stays in its own function):
- the program's exit code and stdout are those of the untraced run;
- target regions, by name and count: `target (OMPStream<double>::add())`
  x2, `target (OMPStream<float>::add())` x1, `target (reductions(double&,
  double*))` x3, `target (main::$_0::operator()(int) const)` x1; each
  region's description keeps the linkage name ("...; in _ZN9OMPStreamIdE3addEv");
- kernels, by name and count: `kernel OMPStream<double>::add() (line L)`
  x2, `kernel OMPStream<float>::add() (line L)` x1, `kernel
  reductions(double&, double*) (line M)` x3, `kernel main (line N)` x1
  (Clang names a lambda's kernel after the function around it), L, M, N
  the lines of the constructs in the source; each description gives the
  entry symbol, whose function part demangles to the same name;
- `tracer summary` lists the kernels by those names with those counts.
Built at -O2: the same kernels and counts (the entry symbols do not depend
on inlining)."""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

TARGETS = {"target (OMPStream<double>::add())": ("_ZN9OMPStreamIdE3addEv", 2),
           "target (OMPStream<float>::add())": ("_ZN9OMPStreamIfE3addEv", 1),
           "target (reductions(double&, double*))": ("_ZL10reductionsRdPd", 3),
           "target (main::$_0::operator()(int) const)": ("_ZZ4mainENK3$_0clEi", 1)}


def want_kernels(lines):
    return {"kernel OMPStream<double>::add() (line %d)" % lines["add"]: ("_ZN9OMPStreamIdE3addEv", 2),
            "kernel OMPStream<float>::add() (line %d)" % lines["add"]: ("_ZN9OMPStreamIfE3addEv", 1),
            "kernel reductions(double&, double*) (line %d)" % lines["reductions"]: ("_ZL10reductionsRdPd", 3),
            "kernel main (line %d)" % lines["lambda"]: ("main", 1)}


def check(c, what, bin_, tmp, lines, with_targets):
    plain = h.run([bin_], tmp, traced=False)
    out = os.path.join(tmp, "t-" + what)
    traced = h.run([bin_], tmp, traced=True, output=out)
    c.equal((traced.returncode, traced.stdout), (plain.returncode, plain.stdout),
            "%s: exit code and stdout with tracer" % what)
    c.equal(plain.stdout, b"cxx_names: 2 1 111\n", "%s: the program's own result" % what)
    t = h.open_checked_trace(c, what, os.path.join(out, "traces.otf2"))
    if t is None:
        return
    kernels = want_kernels(lines)
    got = collections.Counter(ev.region.name for _, ev in t.enters("kernel"))
    c.equal(dict(got), {n: k for n, (_, k) in kernels.items()}, "%s: kernels by name" % what)
    for _, ev in t.enters("kernel"):
        entry = h.kernel_entry(ev.region)
        want = kernels.get(ev.region.name)
        c.check(entry and want and entry[1].lstrip("_") == want[0].lstrip("_")
                and entry[2] == int(re.search(r"line (\d+)\)$", ev.region.name).group(1)),
                "%s: kernel %r: its description %r does not keep the entry symbol of %s"
                % (what, ev.region.name, ev.region.description, want and want[0]))
    if with_targets:
        got = collections.Counter(ev.region.name for _, ev in t.enters("target"))
        c.equal(dict(got), {n: k for n, (_, k) in TARGETS.items()}, "%s: target regions by name" % what)
        for _, ev in t.enters("target"):
            want = TARGETS.get(ev.region.name)
            c.check(want and ev.region.description == "OpenMP target construct; in %s" % want[0],
                    "%s: target region %r: description %r, want the linkage name %s"
                    % (what, ev.region.name, ev.region.description, want and want[0]))
    r = subprocess.run([h.env_path("TEST_TRACER_CLI"), "summary", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=h.base_env(), timeout=120)
    text = r.stdout.decode(errors="replace")
    c.equal(r.returncode, 0, "%s: tracer summary exit code" % what)
    for name, (_, n) in kernels.items():
        c.check(re.search(r"^\s*%d\s+\S+\s+\S+\s+%s$" % (n, re.escape(name)), text, re.M),
                "%s: tracer summary does not list %r %d times:\n%s" % (what, name, n, text))


def main():
    c = h.Checker("cxx_names")
    tmp = tempfile.mkdtemp(prefix="tracer-test-cxx-names-")
    try:
        lines = h.kernel_lines(h.env_path("TEST_SRC"))
        check(c, "-O0", h.env_path("TEST_BIN"), tmp, lines, True)
        check(c, "-O2", h.env_path("TEST_BIN_O2"), tmp, lines, False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
