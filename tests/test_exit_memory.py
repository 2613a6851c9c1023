#!/usr/bin/python3
"""Memory of a long run, the end-of-run write included (issue 19): the
archive is written from the journal a stream at a time, never holding the
records, so the peak of the whole process does not grow with the trace.

programs/flood.c, 1 thread, N marks with TRACER_MAX_MEMORY=16M, for a short
and a long N (8x as many; 7M marks more are 448 MB of 64-byte records, what
the writer used to hold at the end). Peak RSS of the whole process (wait4's
ru_maxrss: recording and the write at exit), against the run with
TRACER_ENABLE=0 (the library loaded, inert). Checks:
- each traced run: exit code 0, and the archive holds exactly N flood marks
  (`tracer summary`, which reads every event of the archive);
- each traced run's peak <= untraced + TRACER_MAX_MEMORY + 64 MiB;
- flat: the long run's peak exceeds the short one's by at most 8 MiB.
Under a sanitizer the peaks say nothing about tracer (shadow memory, the
allocator's quarantine): the counts are still checked, the bounds are not,
with fewer marks.

What this does not cover yet: offload runs, whose kernels, allocations and
deletes the model still keeps a copy of until the write (README, issue 19)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

SANITIZED = bool(os.environ.get("TEST_SANITIZER_PRELOAD", "").strip())
SHORT = int(os.environ.get("TEST_EXIT_MEMORY_SHORT", "250000" if SANITIZED else "1000000"))
LONG = 8 * SHORT
MAX_MEMORY_MB = 16
SLACK_MB = 64
FLAT_MB = 8


def peak_run(tmp, name, n, env):
    """(exit code, peak RSS in KiB, stdout, stderr) of flood 1 @n."""
    paths = [os.path.join(tmp, name + ext) for ext in (".out", ".err")]
    with open(paths[0], "wb") as out, open(paths[1], "wb") as err:
        p = subprocess.Popen([h.env_path("TEST_FLOOD_BIN"), "1", str(n)], cwd=tmp, env=env,
                             stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    texts = [open(x, errors="replace").read() for x in paths]
    return p.returncode, usage.ru_maxrss, texts[0], texts[1]


def summary_marks(c, what, out):
    p = subprocess.run([h.env_path("TEST_TRACER_CLI"), "summary", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    text = p.stdout.decode(errors="replace")
    c.equal(p.returncode, 0, "%s: tracer summary exit code (%s)" % (what, p.stderr.decode(errors="replace")))
    m = re.search(r"^\s*(\d+)\s+\S+\s+\S+\s+flood$", text, re.M)
    return int(m.group(1)) if m else None


def main():
    c = h.Checker("exit_memory")
    tmp = tempfile.mkdtemp(prefix="tracer-exit-memory-")
    base_env = h.run_env(True, extra_env={"TRACER_ENABLE": "0"})
    rc, untraced, _, err = peak_run(tmp, "untraced", LONG, base_env)
    c.equal(rc, 0, "untraced run: exit code (%s)" % err.strip())
    bound_kb = untraced + (MAX_MEMORY_MB + SLACK_MB) * 1024
    peaks = {}
    for n in (SHORT, LONG):
        what = "%d marks" % n
        out = os.path.join(tmp, "trace-%d" % n)
        env = h.run_env(True, output=out, extra_env={"TRACER_MAX_MEMORY": "%dM" % MAX_MEMORY_MB})
        rc, peak, stdout, err = peak_run(tmp, "traced-%d" % n, n, env)
        for marker in h.SANITIZER_MARKERS:
            c.check(marker not in err, "%s: sanitizer report: %r" % (what, marker))
        c.equal(rc, 0, "%s: exit code (%s)" % (what, err.strip()[-300:]))
        c.check("thread 0: emitted %d refused 0" % n in stdout, "%s: program output %r" % (what, stdout))
        c.equal(summary_marks(c, what, out), n, "%s: flood marks in the archive" % what)
        peaks[n] = peak
        print("%s: peak RSS %d KiB (untraced %d KiB, bound %d KiB)" % (what, peak, untraced, bound_kb))
        if not SANITIZED:
            c.check(peak <= bound_kb, "%s: peak RSS %d KiB over untraced + %dM + %dM = %d KiB"
                    % (what, peak, MAX_MEMORY_MB, SLACK_MB, bound_kb))
    if not SANITIZED:
        grew = peaks[LONG] - peaks[SHORT]
        c.check(grew <= FLAT_MB * 1024, "peak RSS grew %d KiB from %d to %d marks (at most %d MiB)"
                % (grew, SHORT, LONG, FLAT_MB))
    else:
        print("under a sanitizer: the memory bounds are not checked")
    shutil.rmtree(tmp, ignore_errors=True)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
