#!/usr/bin/python3
"""Issue 34 item 7: a child made without atfork handlers, by glibc's
_Fork() or the raw clone system call with SIGCHLD (programs/fork.c, modes
_Fork and clone). It records regions and marks, registers a region of its
own, and ends by exit(7), _exit(7) or SIGTERM, or records nothing and calls exit(7). It used to die of SIGSEGV
at its first record (the pool is not mapped in a child) or, ending by
exit(), to hang in the end of the run joining a journal thread that only
its parent has (and the parent in waitpid; a hang here is a failure after
60 s).

Now the child is left untraced and unharmed: its end is what it is
without tracer (status 7, or SIGTERM), in time; it writes nothing (no
trace, nothing in the parent's journal, no tracer: line); the parent's
trace holds exactly its own 2P regions and 2P marks, in order, and no
region of the child's."""
import os
import shutil
import signal
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from test_fork import NO_SAN_SIGNALS, check_parent, read_archive, run, tracer_lines  # noqa: E402

MODES = [("_Fork", "7"), ("_Fork_exit", "7"), ("_Fork_term", "sig %d" % signal.SIGTERM), ("_Fork_idle", "7"),
         ("clone", "7"), ("clone_exit", "7"), ("clone_term", "sig %d" % signal.SIGTERM), ("clone_idle", "7")]


def main():
    c = h.Checker("fork_raw")
    tmp = tempfile.mkdtemp(prefix="tracer-test-fork-raw-")
    bin_ = h.env_path("TEST_FORK_BIN")
    env = {"ASAN_OPTIONS": "detect_leaks=0:verify_asan_link_order=0:" + NO_SAN_SIGNALS,
           "UBSAN_OPTIONS": "print_stacktrace=1:" + NO_SAN_SIGNALS,
           "TSAN_OPTIONS": (os.environ.get("TSAN_OPTIONS", "") + ":" + NO_SAN_SIGNALS).lstrip(":")}
    try:
        for mode, want_child in MODES:
            cwd = os.path.join(tmp, mode)
            os.mkdir(cwd)
            out = os.path.join(cwd, "t")
            plain = run(c, mode + " without tracer", [bin_, mode], cwd, traced=False,
                        extra_env=dict(env, TRACER_ENABLE="0"))
            p = run(c, mode + " with tracer", [bin_, mode], cwd, traced=True, output=out, extra_env=env)
            if plain is None or p is None:
                continue
            want = "fork: child status %s\n" % want_child
            c.equal(plain.stdout.decode(), want, "%s: stdout without tracer" % mode)
            c.equal(p.stdout.decode(), want, "%s: stdout with tracer (the child's end)" % mode)
            c.equal(p.returncode, 0, "%s: parent exit code" % mode)
            c.equal(tracer_lines(p), [], "%s: tracer: lines (parent and child)" % mode)
            for m in h.SANITIZER_MARKERS:
                c.check(m not in p.stderr.decode(errors="replace"), "%s: sanitizer: %s" % (mode, m))
            c.equal(sorted(os.listdir(cwd)), ["t"], "%s: directories written" % mode)
            t = read_archive(c, mode, out)
            if t is not None:
                check_parent(c, mode, t)
                c.equal(sorted(r.canonical_name for r in t.regions
                               if r.canonical_name in ("child", "cmark", "late") and t.enters(r.canonical_name)),
                        [], "%s: regions of the child with events in the parent's trace" % mode)
                c.check("late" not in [r.canonical_name for r in t.regions],
                        "%s: the child's region name reached the parent's journal" % mode)
            if p.returncode != 0 or c.failures:
                print("--- %s stderr:\n%s" % (mode, p.stderr.decode(errors="replace")[-3000:]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
