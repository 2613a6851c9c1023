#!/usr/bin/python3
"""A plug-in program: libraries loaded, run and unloaded in turn, each
mapped where the one before it was (issue 34, item 1).

programs/unload_reuse_main.c loads libolib1.so .. libolib4.so one after the
other (programs/unload_reuse_lib.c built with -DOLIB=1..4), runs the one
target region of each (in olibK_run) K + 1 times, and dlcloses each before
it loads the next. Their code differs only in names, so the same code
addresses hold olib1_run, then olib2_run, and so on, and the global each
maps (olibK_table) lies at one address too. Before the fix every target
region and kernel was named after the first library ("target (olib1_run)",
"..._olib1_run_l<N>"), and every transfer after olib1_table: the journal's
consumer named an address once, and the reader knew one name per address.

Ground truth: the program's exit code and stdout, unchanged by tracing; the
load address it printed for each library (all four must be one address, or
this test exercises nothing); the number of target regions each library
ran, which the trace must hold under that library's own function and
kernel names, with the real code address in codeptr_ra, two transfers of
that library's own global per region, and its parallel region (run once,
a team of 2) under its own name. The same after a
SIGKILL at the end, from `tracer recover`.
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

LIBS = 4


def check_trace(c, what, anchor, want, bases):
    t = h.open_checked_trace(c, what, anchor)
    if t is None:
        return
    targets, kernels = collections.Counter(), collections.Counter()
    codeptrs = collections.defaultdict(set)
    for _, ev in t.enters("target"):
        targets[ev.region.name] += 1
        m = re.fullmatch(r"target \((olib\d_run)\)", ev.region.name)
        if m:
            codeptrs[m.group(1)].add(h.Trace.attr(ev, "codeptr_ra"))
    # The data ops that map olibK_table: named after the library's own global.
    variables, parallels = collections.Counter(), collections.Counter()
    for _, ev in t.enters("parallel"):
        parallels[ev.region.name] += 1
    for _, ev in t.enters():
        if ev.region.canonical_name in ("transfer to device", "transfer from device"):
            variables[h.Trace.attr(ev, "variable")] += 1
    for _, ev in t.enters("kernel"):
        entry = h.kernel_entry(ev.region)
        m = re.fullmatch(r"kernel (\w+) \((?:[^()]*:|line )%d\)" % entry[2], ev.region.name) if entry else None
        kernels[m.group(1) if m and m.group(1) == entry[1] else ev.region.name] += 1
    want_targets = {"target (%s)" % f: n for f, n in want.items()}
    want_targets["target (main_kernel)"] = 1
    c.equal(dict(targets), want_targets, "%s: target regions per name" % what)
    want_kernels = dict(want)
    want_kernels["main_kernel"] = 1
    c.equal(dict(kernels), want_kernels, "%s: kernels per function" % what)
    # Each target region of olibK_run copies olibK_table to the device and back.
    want_vars = {f.replace("_run", "_table"): 2 * n for f, n in want.items()}
    c.equal({v: n for v, n in variables.items() if v is not None and v.startswith("olib")}, want_vars,
            "%s: transfers per variable" % what)
    # olibK_run's parallel region: run once (one call), each of its 2 threads enters it.
    c.equal(dict(parallels), {"parallel (%s)" % f: 2 for f in want},
            "%s: parallel regions per name (2 threads each)" % what)
    # One address, four functions: the attribute is the address itself.
    addrs = set().union(*codeptrs.values()) if codeptrs else set()
    c.equal(len(addrs), 1, "%s: codeptr_ra values of the four libraries' target regions (%s)"
            % (what, sorted(hex(a) for a in addrs if a is not None)))
    for a in addrs:
        c.check(a is not None and bases[0] <= a < bases[0] + (1 << 20),
                "%s: codeptr_ra %r is not in the libraries' code (loaded at %#x)" % (what, a, bases[0]))


def main():
    c = h.Checker("unload_reuse")
    exe = h.env_path("TEST_UNLOAD_REUSE_BIN")
    libs = [h.env_path("TEST_UNLOAD_REUSE_LIB%d" % k) for k in range(1, LIBS + 1)]
    tmp = tempfile.mkdtemp(prefix="tracer-test-unload-reuse-")
    try:
        cwd = os.path.join(tmp, "cwd")
        os.mkdir(cwd)
        plain = h.run([exe] + libs, cwd, traced=False, timeout=120)
        c.equal(plain.returncode, 0, "exit code without tracer")
        out_text = plain.stdout.decode(errors="replace")
        bases = [int(b, 16) for b in re.findall(r"^olib: lib \d base=(0x[0-9a-f]+)", out_text, re.M)]
        c.equal(len(bases), LIBS, "libraries the program loaded")
        c.check(len(set(bases)) == 1,
                "the libraries were not loaded at one address (%s): nothing is reused, the test "
                "exercises nothing" % [hex(b) for b in bases])
        m = re.search(r"^olib: regions (.*)$", out_text, re.M)
        if not c.check(m and bases, "the program printed no region counts"):
            c.finish()
        want = {f: int(n) for f, n in re.findall(r"(olib\d_run)=(\d+)", m.group(1))}
        c.equal(sorted(want), ["olib%d_run" % k for k in range(1, LIBS + 1)], "libraries counted")
        # The default flush interval, one short enough that the consumer
        # names events between the loads as well, and a SIGKILL at the end
        # (the archive from tracer recover).
        runs = [({}, []), ({"TRACER_FLUSH_INTERVAL": "20ms"}, []), ({}, ["kill"])]
        for i, (env, extra) in enumerate(runs):
            what = "run %d%s" % (i, " (killed, recovered)" if extra else "")
            out = os.path.join(tmp, "trace%d" % i)
            traced = h.run([exe] + libs + extra, cwd, traced=True, output=out, extra_env=env, timeout=120)
            c.equal(traced.returncode, -9 if extra else plain.returncode, "%s: exit code with tracer" % what)
            if extra:
                r = subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover", out], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=h.base_env(), timeout=300)
                c.equal(r.returncode, 0, "%s: tracer recover exit code (stderr %r)" % (what, r.stderr.decode()))
            t_bases = re.findall(rb"base=(0x[0-9a-f]+)", traced.stdout)
            c.equal(len(set(t_bases)), 1, "%s: load addresses of the four libraries (traced)" % what)
            c.equal(re.sub(rb"base=0x[0-9a-f]+", b"", traced.stdout),
                    re.sub(rb"base=0x[0-9a-f]+", b"", plain.stdout), "%s: stdout with tracer" % what)
            err = traced.stderr.decode(errors="replace")
            c.check(not [l for l in err.splitlines() if l.strip()],
                    "%s: stderr not empty: %r" % (what, err[-2000:]))
            anchor = os.path.join(out, "traces.otf2")
            if not c.check(os.path.isfile(anchor), "%s: no archive" % what):
                continue
            check_trace(c, what, anchor, want, [int(b, 16) for b in t_bases] or bases)
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
