#!/usr/bin/env python3
"""test_offload_connect: target events arrive with nothing set, and tracer
changes no other dlopen (src/ompt/ompt_connect.h).

LLVM's libomptarget reaches libomp's OMPT interface with dlopen("libomp.so")
from inside libLLVM; Debian's libomp-19-dev keeps that name off the search
path, so on a fresh machine no tool gets a target callback unless tracer
makes the name resolve.

  a. what the runtime alone delivers here: the program with the independent
     probe tool (ompt_probe.so) and LD_LIBRARY_PATH unset;
  b. traced, LD_LIBRARY_PATH unset: exit code and stdout unchanged (the
     plugin loaded by bare name through its library's $ORIGIN RUNPATH, and the
     program's own dlopen("libomp.so") gives the same answer), the exact
     target regions, kernels, data ops and bytes of the program, and the
     TRACER_VERBOSE line says how libomptarget reached libomp;
  c. traced with LD_LIBRARY_PATH=<LLVM dir>: libomptarget finds libomp by
     name, tracer does nothing, the same trace;
  d. libtracer.so copied alone (its helper libtracer-ompalias.so missing):
     where the runtime alone delivers nothing, the program is unharmed and
     one tracer: line names the cause and the fix; otherwise the trace is
     as in b;
  e. a program without OpenMP that dlopens an offload library (as Python
     loads an extension): libomptarget arrives after tracer's constructor,
     and registering the library's image is what makes it connect; the
     trace holds the library's exact target regions and data ops.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

R, N = 5, 100
WANT_STDOUT = ("connect: plugin=4242 sum=%d libomp.so=%%s omp_get_max_threads=%%s\n"
               % (sum(range(N)) + R * N))
BYTES = N * 4
CONNECTED_BY_NAME = re.compile(
    r'tracer: offload connection: libomptarget finds the running OpenMP runtime (\S+) as "libomp.so"$')
CONNECTED_BY_ALIAS = re.compile(
    r'tracer: offload connection: "libomp.so" was not on the library search path; tracer made it name '
    r'the running OpenMP runtime (\S+) \(with (\S+)\), so libomptarget finds it$')


def run(cmd, cwd, traced, output=None, extra=None, preload=None):
    env = h.base_env()
    env.pop("LD_LIBRARY_PATH", None)
    if traced:
        env["LD_PRELOAD"] = ":".join(preload or h.preload_list())
    if output is not None:
        env["TRACER_OUTPUT"] = output
    env.update(extra or {})
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout.decode(), p.stderr.decode(errors="replace")


def probe_count(cmd, cwd):
    """Target callbacks the independent probe tool gets, tracer absent."""
    out = os.path.join(cwd, "..", "probe.out")
    extra = [p for p in re.split(r"[:\s]+", os.environ.get("TEST_SANITIZER_PRELOAD", "")) if p]
    run(cmd, cwd, traced=False, extra={
        "LD_PRELOAD": ":".join(extra + [h.env_path("TEST_OMPT_PROBE")]), "OMPT_PROBE_OUT": out})
    try:
        with open(out) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return -1


def check_trace(c, what, output):
    anchor = os.path.join(output, "traces.otf2")
    if not c.check(os.path.isfile(anchor), "%s: no archive at %s" % (what, anchor)):
        return
    try:
        t = h.Trace(anchor)
    except Exception as e:
        c.check(False, "%s: otf2 reader failed: %r" % (what, e))
        return
    h.check_counts(c, t, {"target": R, "alloc": R, "transfer to device": R,
                          "transfer from device": R, "delete": R, "kernel": R})
    c.equal(h.data_op_summary(t), {
        ("alloc", 0): [BYTES] * R, ("transfer to device", 0): [BYTES] * R,
        ("transfer from device", 0): [BYTES] * R, ("delete", 0): [BYTES] * R},
        "%s: data ops (kind, device) -> bytes" % what)
    c.equal(h.transfer_summary(t), {("to device", 0): [BYTES] * R, ("from device", 0): [BYTES] * R},
            "%s: RmaPut/RmaGet (kind, device) -> bytes" % what)


def check_unharmed(c, what, rc, out, err, want_stdout):
    c.equal(rc, 0, "%s: exit code" % what)
    c.equal(out, want_stdout, "%s: stdout" % what)
    for marker in h.SANITIZER_MARKERS:
        c.check(marker not in err, "%s: sanitizer report: %r" % (what, marker))


def main():
    c = h.Checker("offload_connect")
    binary, host = h.env_path("TEST_BIN"), h.env_path("TEST_PLUGIN_HOST")
    libdir = h.env_path("TEST_OFFLOAD_LIBDIR")
    cmd = [binary, host]
    tmp = tempfile.mkdtemp(prefix="tracer-test-offload-connect-")
    cwd = os.path.join(tmp, "cwd")
    os.mkdir(cwd)
    try:
        # a. The runtime alone, and the untraced program's own answers.
        delivered = probe_count(cmd, cwd)
        c.check(delivered >= 0, "a: the probe tool wrote no count")
        deaf = delivered == 0
        c.note("a: without tracer the OpenMP runtime delivers %d target callbacks here (%s)"
               % (delivered, "libomp.so is not on the search path: tracer must make it resolve"
                  if deaf else "libomp.so resolves on this machine"))
        # The program's own answers without tracer, in the same environment
        # (sanitizer builds: the sanitizer runtimes preloaded, as in the traced
        # runs). GCC 12's libasan intercepts dlopen and calls glibc from its own
        # frame, so there the bare-name loads through a RUNPATH fail whatever
        # tracer does; the plain build checks them against the program.
        sanitizers = h.preload_list()[:-1]
        rc, baseline, err = run(cmd, cwd, traced=bool(sanitizers), preload=sanitizers)
        c.equal(rc, 0, "untraced: exit code (stderr %r)" % err)
        if not sanitizers:
            c.equal(baseline, WANT_STDOUT % ("loaded", "found"), "untraced: stdout")
        elif "plugin=4242" not in baseline:
            c.note("untraced with %s preloaded the plugin host cannot load its plugin by bare name: "
                   "the sanitizer's dlopen interceptor loses the caller's RUNPATH" % ":".join(sanitizers))
        # When libomptarget is connected, "libomp.so" names the running runtime
        # for every caller (docs/usage.md: How libomptarget reaches the OpenMP runtime).
        want_stdout = re.sub(r"libomp.so=\w+ omp_get_max_threads=\w+",
                             "libomp.so=loaded omp_get_max_threads=found", baseline)

        # b. Traced, nothing set.
        out_b = os.path.join(tmp, "trace-b")
        rc, out, err = run(cmd, cwd, traced=True, output=out_b, extra={"TRACER_VERBOSE": "1"})
        check_unharmed(c, "b", rc, out, err, want_stdout)
        lines = err.splitlines()
        by_name = [m for m in map(CONNECTED_BY_NAME.match, lines) if m]
        by_alias = [m for m in map(CONNECTED_BY_ALIAS.match, lines) if m]
        if deaf:
            c.check(len(by_alias) == 1 and not by_name,
                    "b: want the line saying tracer made libomp.so resolve, got %r" % lines)
            for m in by_alias:
                # The runtime the program runs: the one its RUNPATH directory
                # names libomp.so (LLVM 19), or at least a libomp.
                named = os.path.realpath(m.group(1))
                if os.path.exists(os.path.join(libdir, "libomp.so")):
                    c.equal(named, os.path.realpath(os.path.join(libdir, "libomp.so")), "b: the runtime named")
                else:
                    c.check(os.path.basename(named).startswith("libomp"), "b: the runtime named: %r" % named)
                c.equal(os.path.dirname(os.path.realpath(m.group(2))),
                        os.path.dirname(os.path.realpath(h.env_path("TEST_TRACER_LIB"))),
                        "b: the helper comes from libtracer.so's directory")
        else:
            c.check(len(by_name) == 1 and not by_alias,
                    "b: want the line saying libomptarget finds libomp by name, got %r" % lines)
        c.check(not [l for l in lines if "no target event" in l], "b: %r" % lines)
        c.equal(os.listdir(cwd), [], "b: files in the cwd")
        check_trace(c, "b", out_b)

        # c. libomp.so on the search path: tracer leaves it to the runtime.
        # The directory: where the runtime's real file lies beside a
        # libomp.so (the LLVM directory).
        omp_dir = libdir
        for m in by_alias + by_name:
            omp_dir = os.path.dirname(os.path.realpath(m.group(1)))
        c.check(os.path.exists(os.path.join(omp_dir, "libomp.so")),
                "c: no libomp.so beside the running runtime in %s" % omp_dir)
        out_c = os.path.join(tmp, "trace-c")
        rc, out, err = run(cmd, cwd, traced=True, output=out_c,
                           extra={"TRACER_VERBOSE": "1", "LD_LIBRARY_PATH": omp_dir})
        check_unharmed(c, "c", rc, out, err, want_stdout)
        lines = err.splitlines()
        c.check(len([l for l in lines if CONNECTED_BY_NAME.match(l)]) == 1
                and not [l for l in lines if CONNECTED_BY_ALIAS.match(l)],
                "c: want the line saying libomptarget finds libomp by name, got %r" % lines)
        check_trace(c, "c", out_c)

        # d. The helper missing.
        alone = os.path.join(tmp, "alone")
        os.mkdir(alone)
        lib = os.path.join(alone, "libtracer.so")
        shutil.copy(h.env_path("TEST_TRACER_LIB"), lib)
        preload = h.preload_list()[:-1] + [lib]
        out_d = os.path.join(tmp, "trace-d")
        rc, out, err = run(cmd, cwd, traced=True, output=out_d, preload=preload)
        check_unharmed(c, "d", rc, out, err, baseline)
        lines = [l for l in err.splitlines() if l.startswith("tracer:")]
        if deaf:
            helper = os.path.join(alone, "libtracer-ompalias.so")
            want = re.compile(
                r'tracer: no target event was recorded: libomptarget \((\S+)\) looks for the OpenMP '
                r'runtime as "libomp.so", which is not on the library search path, and tracer could not '
                r'make that name resolve \(%s: No such file or directory\); to fix it, install '
                r'libtracer-ompalias.so beside libtracer.so, or set LD_LIBRARY_PATH=(\S+)$'
                % re.escape(helper))
            got = [m for m in map(want.match, lines) if m]
            c.check(len(got) == 1, "d: want one line naming the cause and the fix, got %r" % lines)
            for m in got:
                c.check(os.path.basename(m.group(1)).startswith("libomptarget.so"),
                        "d: libomptarget named: %r" % m.group(1))
                c.check(os.path.exists(os.path.join(m.group(2), "libomp.so")),
                        "d: the LD_LIBRARY_PATH named holds no libomp.so: %r" % m.group(2))
            c.equal(len(lines), 1, "d: tracer: lines %r" % lines)
        else:
            c.equal(lines, [], "d: tracer: lines")
            check_trace(c, "d", out_d)

        # e. libomptarget loaded late, by dlopen.
        late = [h.env_path("TEST_LATE_BIN"), h.env_path("TEST_LATE_LIB")]
        rc, late_baseline, err = run(late, cwd, traced=bool(sanitizers), preload=sanitizers)
        c.equal((rc, late_baseline), (0, "connect_late: sum=%d\n" % (sum(range(N)) + R * N)),
                "e: untraced exit code and stdout (stderr %r)" % err)
        out_e = os.path.join(tmp, "trace-e")
        rc, out, err = run(late, cwd, traced=True, output=out_e, extra={"TRACER_VERBOSE": "1"})
        check_unharmed(c, "e", rc, out, err, late_baseline)
        lines = err.splitlines()
        c.check(not [l for l in lines if "no target event" in l], "e: %r" % lines)
        if deaf:
            c.check(len([l for l in lines if CONNECTED_BY_ALIAS.match(l)]) == 1,
                    "e: want the line saying tracer made libomp.so resolve, got %r" % lines)
        check_trace(c, "e", out_e)
    finally:
        if c.failures or os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
