#!/usr/bin/python3
"""Memory of a long run, the end-of-run write included (issue 19): the
archive is written from the journal a stream at a time, never holding the
records, and the devices' side is found in a pass that holds only what is
open, so the peak of the whole process does not grow with the trace.

Two programs, each for a short and a long N (8x as many), with
TRACER_MAX_MEMORY=16M: programs/flood.c, 1 thread, N marks (7M marks more
are 448 MB of 64-byte records, what the writer used to hold at the end);
programs/target_regions.c, N target regions mapping one int (12 records
each; skipped without the offload compiler). Peak RSS of the whole process
(wait4's ru_maxrss: recording and the write at exit), against the same
program with TRACER_ENABLE=0 (the library loaded, inert). Checks:
- each traced run: exit code 0, its own output, and the archive holds
  exactly N flood marks, or N target regions and N kernels (`tracer
  summary`, which reads every event of the archive);
- each traced run's peak <= untraced + TRACER_MAX_MEMORY + 64 MiB;
- flat: the long run's peak exceeds the short one's by at most 8 MiB.
Under a sanitizer the peaks say nothing about tracer (shadow memory, the
allocator's quarantine): the counts are still checked, the bounds are not,
with smaller N."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

SANITIZED = bool(os.environ.get("TEST_SANITIZER_PRELOAD", "").strip())
SHORT_MARKS = int(os.environ.get("TEST_EXIT_MEMORY_SHORT", "250000" if SANITIZED else "1000000"))
SHORT_REGIONS = int(os.environ.get("TEST_EXIT_MEMORY_REGIONS", "2500" if SANITIZED else "20000"))
MAX_MEMORY_MB = 16
SLACK_MB = 64
FLAT_MB = 8


def peak_run(tmp, name, cmd, env):
    """(exit code, peak RSS in KiB, stdout, stderr) of @cmd."""
    paths = [os.path.join(tmp, name + ext) for ext in (".out", ".err")]
    with open(paths[0], "wb") as out, open(paths[1], "wb") as err:
        p = subprocess.Popen(cmd, cwd=tmp, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    texts = [open(x, errors="replace").read() for x in paths]
    return p.returncode, usage.ru_maxrss, texts[0], texts[1]


def summary(c, what, out):
    p = subprocess.run([h.env_path("TEST_TRACER_CLI"), "summary", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    c.equal(p.returncode, 0, "%s: tracer summary exit code (%s)" % (what, p.stderr.decode(errors="replace")))
    return p.stdout.decode(errors="replace")


def flood_marks(text):
    m = re.search(r"^\s*(\d+)\s+\S+\s+\S+\s+flood$", text, re.M)
    return int(m.group(1)) if m else None


def target_counts(text):
    t = re.search(r"^target regions: (\d+)", text, re.M)
    k = re.search(r"^kernels: (\d+)", text, re.M)
    return (int(t.group(1)) if t else None, int(k.group(1)) if k else None)


def one_program(c, tmp, label, cmd_of, short, want_stdout, counts_of, want_counts):
    """Untraced at the long length, then traced at both; the checks above."""
    long_ = 8 * short
    base_env = h.run_env(True, extra_env={"TRACER_ENABLE": "0"})
    rc, untraced, _, err = peak_run(tmp, label + "-untraced", cmd_of(long_), base_env)
    c.equal(rc, 0, "%s untraced: exit code (%s)" % (label, err.strip()[-300:]))
    bound_kb = untraced + (MAX_MEMORY_MB + SLACK_MB) * 1024
    peaks = {}
    for n in (short, long_):
        what = "%s, %d" % (label, n)
        out = os.path.join(tmp, "trace-%s-%d" % (label, n))
        env = h.run_env(True, output=out, extra_env={"TRACER_MAX_MEMORY": "%dM" % MAX_MEMORY_MB})
        rc, peak, stdout, err = peak_run(tmp, "%s-%d" % (label, n), cmd_of(n), env)
        for marker in h.SANITIZER_MARKERS:
            c.check(marker not in err, "%s: sanitizer report: %r" % (what, marker))
        c.equal(rc, 0, "%s: exit code (%s)" % (what, err.strip()[-300:]))
        c.check(want_stdout(n) in stdout, "%s: program output %r" % (what, stdout))
        c.equal(counts_of(summary(c, what, out)), want_counts(n), "%s: what the archive holds" % what)
        shutil.rmtree(out, ignore_errors=True)
        peaks[n] = peak
        print("%s: peak RSS %d KiB (untraced %d KiB, bound %d KiB)" % (what, peak, untraced, bound_kb))
        if not SANITIZED:
            c.check(peak <= bound_kb, "%s: peak RSS %d KiB over untraced + %dM + %dM = %d KiB"
                    % (what, peak, MAX_MEMORY_MB, SLACK_MB, bound_kb))
    if not SANITIZED:
        grew = peaks[long_] - peaks[short]
        c.check(grew <= FLAT_MB * 1024, "%s: peak RSS grew %d KiB from %d to %d (at most %d MiB)"
                % (label, grew, short, long_, FLAT_MB))


def main():
    c = h.Checker("exit_memory")
    tmp = tempfile.mkdtemp(prefix="tracer-exit-memory-")
    flood = h.env_path("TEST_FLOOD_BIN")
    one_program(c, tmp, "marks", lambda n: [flood, "1", str(n)], SHORT_MARKS,
                lambda n: "thread 0: emitted %d refused 0" % n, flood_marks, lambda n: n)
    regions = h.env_path("TEST_TARGET_REGIONS_BIN", required=False)
    if regions:
        one_program(c, tmp, "target regions", lambda n: [regions, str(n)], SHORT_REGIONS,
                    lambda n: "regions=%d check=%d" % (n, n), target_counts, lambda n: (n, n))
    else:
        c.note("no offload compiler: the target-region runs are skipped")
    if SANITIZED:
        print("under a sanitizer: the memory bounds are not checked")
    shutil.rmtree(tmp, ignore_errors=True)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
