#!/usr/bin/python3
"""libtracer.so preloaded into programs without OpenMP, TRACER_OUTPUT unset,
in a fresh temporary cwd: same stdout and exit code as without the preload,
nothing on stderr, nothing written into the cwd (no tracer-* directory)."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

COMMANDS = [
    (["/bin/true"], 0),
    (["bash", "-c", "echo hi; exit 7"], 7),
    (["mpiexec.mpich", "-n", "2", "/bin/true"], 0),
    (["cc", "--version"], 0),
]


def run(cmd, cwd, preload):
    env = dict(os.environ)
    env.pop("TRACER_OUTPUT", None)
    env.pop("LD_PRELOAD", None)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0:verify_asan_link_order=0")
    # mpiexec: no host/launcher guessing beyond the local machine
    env.setdefault("HYDRA_LAUNCHER", "fork")
    if preload:
        env["LD_PRELOAD"] = ":".join(h.preload_list())
    return subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120)


def main():
    c = h.Checker("no_openmp")
    for cmd, want_rc in COMMANDS:
        exe = shutil.which(cmd[0])
        if not c.check(exe, "%s not installed" % cmd[0]):
            continue
        label = " ".join(cmd)
        tmp = tempfile.mkdtemp(prefix="tracer-test-noomp-")
        try:
            plain_cwd = os.path.join(tmp, "plain")
            pre_cwd = os.path.join(tmp, "preload")
            os.mkdir(plain_cwd)
            os.mkdir(pre_cwd)
            plain = run(cmd, plain_cwd, False)
            pre = run(cmd, pre_cwd, True)
            c.equal(plain.returncode, want_rc, "[%s] exit code without preload" % label)
            c.equal(pre.returncode, plain.returncode, "[%s] exit code with preload" % label)
            c.equal(pre.stdout, plain.stdout, "[%s] stdout with preload" % label)
            c.equal(pre.stderr.decode(errors="replace"), "", "[%s] stderr with preload" % label)
            c.equal(sorted(os.listdir(pre_cwd)), sorted(os.listdir(plain_cwd)),
                    "[%s] files in cwd with preload" % label)
            leftovers = [d for d in os.listdir(pre_cwd) if d.startswith("tracer-")]
            c.check(not leftovers, "[%s] wrote %r into the cwd" % (label, leftovers))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if os.environ.get("TEST_SANITIZER_PRELOAD"):
        # with sanitizer runtimes preloaded, bash/cc/mpiexec children are
        # instrumented too; their reports would be on stderr and fail above.
        c.note("sanitizer runtimes preloaded: %s" % os.environ["TEST_SANITIZER_PRELOAD"])
    c.finish()


if __name__ == "__main__":
    main()
