#!/usr/bin/python3
"""Target regions inside dlopen and dlclose, in block mode (issue 18, the
loader-lock risk).

programs/loader_lock_lib.c runs 3000 target regions in its constructor and
3000 in its destructor: inside dlopen and dlclose, while glibc holds the
loader's lock. With TRACER_MAX_MEMORY=128k (a pool of 2 chunks) and
TRACER_ON_FULL=block the recording thread waits there for the journal's
consumer again and again, and the consumer, meanwhile, names these kernels:
code mapped by this very dlopen, found in the loader's module list
(dl_iterate_phdr). The decision this test holds the code to: the consumer
never takes a lock the application may hold while a callback runs (glibc's
dlopen/dlsym/dladdr lock is held across constructors and destructors; the
list lock dl_iterate_phdr takes is not), so block mode may wait without a
bound. Checked by making the consumer call dladdr() while naming: the run
hung here until the timeout. It also found one such lock taken by a library
tracer uses: libdw dlopens its debuginfod client at its first debug-info
lookup, on the consumer thread; on a fresh Debian 12 root the run hung (gdb:
the consumer in _dl_open from dwfl_standard_find_debuginfo, the program in
the constructor waiting for a chunk) until tr_symbols_prepare made libdw do
that where tracing starts. Since issue 19 tracer's own lookup of debug files
(src/journal/debug_files.c, local only) replaces libdw's standard one, so
nothing dlopens the debuginfod client any more (test debuginfo).

Ground truth: the run ends (the timeout is a hang detector), exit code and
stdout unchanged by tracing, stderr only tracer's block-mode line, and the
trace holds every target region the library ran (its printed count), all
named after the kernel, with nothing lost (no MeasurementOnOff).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import otf2  # noqa: E402

HANG_TIMEOUT = int(os.environ.get("TEST_LOADER_LOCK_HANG_TIMEOUT", "300"))
WAIT_LINE = ("tracer: buffers are full; threads wait for the journal writer "
             "(TRACER_ON_FULL=drop would drop events instead)")


def main():
    c = h.Checker("loader_lock")
    exe = h.env_path("TEST_LOADER_LOCK_BIN")
    lib = h.env_path("TEST_LOADER_LOCK_LIB")
    cli = h.env_path("TEST_TRACER_CLI")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs", "loader_lock_lib.c")
    kernel_line = h.kernel_lines(src)["ctor_dtor"]
    tmp = tempfile.mkdtemp(prefix="tracer-test-loader-lock-")
    try:
        cwd = os.path.join(tmp, "cwd")
        os.mkdir(cwd)
        plain = h.run([exe, lib], cwd, traced=False, timeout=HANG_TIMEOUT)
        c.equal(plain.returncode, 0, "exit code without tracer")
        out = os.path.join(tmp, "trace")
        env = {"TRACER_MAX_MEMORY": "128k", "TRACER_ON_FULL": "block"}
        try:
            traced = h.run([exe, lib], cwd, traced=True, output=out, extra_env=env, timeout=HANG_TIMEOUT)
        except subprocess.TimeoutExpired:
            c.check(False, "the traced run hung (no end after %d s): a thread waiting for a chunk "
                    "inside dlopen/dlclose and the consumer waiting for the loader's lock" % HANG_TIMEOUT)
            c.finish()
            return
        c.equal(traced.returncode, plain.returncode, "exit code with tracer")
        c.equal(traced.stdout, plain.stdout, "stdout with tracer")
        err = [l for l in traced.stderr.decode(errors="replace").splitlines() if l.strip()]
        c.check(all(l == WAIT_LINE for l in err), "stderr: %r" % err[-10:])
        text = plain.stdout.decode()
        c.check("constructor ran" in text and "destructor ran" in text, "stdout: %r" % text)
        want = int(text.split("kernels ctor_dtor=")[1].split()[0])
        s = subprocess.run([cli, "summary", "--json", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if c.equal(s.returncode, 0, "tracer summary exit code: %r" % s.stderr[-500:]):
            report = json.loads(s.stdout)
            kernels = report["kernels"]
            named = {n: k for n, k in kernels.items() if h.kernel_name_re(kernel_line, "run_regions").fullmatch(n)}
            c.equal(sum(named.values()), want, "target regions of the library's kernel, named: %r" % kernels)
            c.equal(sum(kernels.values()), want, "target regions in all: %r" % kernels)
        anchor = os.path.join(out, "traces.otf2")
        t = h.open_checked_trace(c, "loader_lock", anchor)
        if t:
            c.equal(len(t.events_of(otf2.events.MeasurementOnOff)), 0,
                    "MeasurementOnOff events (block mode loses nothing)")
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
