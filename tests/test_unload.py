#!/usr/bin/python3
"""A program that dlcloses an offload library and goes on (issue 16, item 1).

programs/unload_main.c dlopens programs/unload_lib.c three times, runs its
two kernels, dlcloses it, and runs a kernel of its own before and after. With
TRACER_FLUSH_INTERVAL=20ms the journal's consumer names events while the
library is loaded, and the program's sleeps leave events of lib_last to be
named after the library is gone. Before the fix the consumer read the
unmapped library's code and tables (SIGSEGV, the program killed).

Ground truth: the program's exit code and stdout, unchanged by tracing; the
number of target regions of each kernel it printed, each kernel named by its
function and source line (the `/* KERNEL:tag */` markers), whether it ran in
the program or in the library, loaded or since unloaded.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402


def main():
    c = h.Checker("unload")
    exe = h.env_path("TEST_UNLOAD_BIN")
    lib = h.env_path("TEST_UNLOAD_LIB")
    cli = h.env_path("TEST_TRACER_CLI")
    src_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
    main_lines = h.kernel_lines(os.path.join(src_dir, "unload_main.c"))
    lib_lines = h.kernel_lines(os.path.join(src_dir, "unload_lib.c"))
    tmp = tempfile.mkdtemp(prefix="tracer-test-unload-")
    try:
        cwd = os.path.join(tmp, "cwd")
        os.mkdir(cwd)
        env = {"TRACER_FLUSH_INTERVAL": "20ms"}
        plain = h.run([exe, lib], cwd, traced=False, extra_env=env, timeout=120)
        for i in range(3):
            out = os.path.join(tmp, "trace%d" % i)
            traced = h.run([exe, lib], cwd, traced=True, output=out, extra_env=env, timeout=120)
            what = "run %d" % i
            c.equal(plain.returncode, 0, "exit code without tracer")
            c.equal(traced.returncode, plain.returncode, "%s: exit code with tracer" % what)
            c.equal(traced.stdout, plain.stdout, "%s: stdout with tracer" % what)
            err = traced.stderr.decode(errors="replace")
            c.check(not [l for l in err.splitlines() if l.strip()],
                    "%s: stderr not empty: %r" % (what, err[-2000:]))
            m = re.search(rb"unload: kernels main=(\d+) lib_first=(\d+) lib_last=(\d+)", plain.stdout)
            if not c.check(m, "the program printed no kernel counts"):
                break
            want = {"main": int(m.group(1)), "lib_first": int(m.group(2)), "lib_last": int(m.group(3))}
            anchor = os.path.join(out, "traces.otf2")
            if not c.check(os.path.isfile(anchor), "%s: no archive" % what):
                continue
            s = subprocess.run([cli, "summary", "--json", out], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
            if not c.equal(s.returncode, 0, "%s: tracer summary exit code" % what):
                continue
            kernels = json.loads(s.stdout)["kernels"]
            got = {}
            for name, n in kernels.items():
                tag = None
                for t, line in main_lines.items():
                    if h.kernel_name_re(line, "main_kernel").fullmatch(name):
                        tag = t
                for t, line in lib_lines.items():
                    if h.kernel_name_re(line, t).fullmatch(name):
                        tag = t
                c.check(tag, "%s: kernel %r is not named after a kernel of the program" % (what, name))
                got[tag or name] = got.get(tag or name, 0) + n
            c.equal(got, want, "%s: target regions per kernel" % what)
            h.open_checked_trace(c, what, anchor)
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
