#!/usr/bin/python3
"""TRACER_WRITE_AT_END=0 for a single process (issue 19): the program ends
as soon as its journal is closed, and `tracer recover` writes the same trace
from it later.

programs/flood.c, 1 thread, N marks; and, with the offload compiler,
programs/target_regions.c, N target regions. Checks:
- the deferred run: exit code 0, its own output, no `tracer:` line; its
  directory holds the journal and no archive (only the empty traces.otf2
  that claims the directory from the start);
- with TRACER_VERBOSE=1 one line names the directory and `tracer recover`;
- `tracer recover DIR` then writes an archive that holds exactly N marks
  (N target regions and N kernels), the same counts as a run that wrote at
  the end;
- the deferred run's process does not wait for the write: its CPU time is
  below that of the run that wrote at the end, by at least half the
  recovery's own CPU time (the write it no longer does). Not checked under a
  sanitizer, whose costs are not tracer's."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

SANITIZED = bool(os.environ.get("TEST_SANITIZER_PRELOAD", "").strip())
MARKS = 50000 if SANITIZED else 2000000
REGIONS = 2000 if SANITIZED else 40000


def cpu_of(cmd, cwd, env):
    """(exit code, CPU seconds of the process, stdout, stderr)."""
    paths = [os.path.join(cwd, "cpu" + ext) for ext in (".out", ".err")]
    with open(paths[0], "wb") as out, open(paths[1], "wb") as err:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
    texts = [open(x, errors="replace").read() for x in paths]
    return (os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, texts[0], texts[1])


def summary_counts(c, what, out, counts_of):
    p = subprocess.run([h.env_path("TEST_TRACER_CLI"), "summary", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    c.equal(p.returncode, 0, "%s: tracer summary exit code (%s)" % (what, p.stderr.decode(errors="replace")))
    return counts_of(p.stdout.decode(errors="replace"))


def flood_marks(text):
    m = re.search(r"^\s*(\d+)\s+\S+\s+\S+\s+flood$", text, re.M)
    return int(m.group(1)) if m else None


def target_counts(text):
    t = re.search(r"^target regions: (\d+)", text, re.M)
    k = re.search(r"^kernels: (\d+)", text, re.M)
    return (int(t.group(1)) if t else None, int(k.group(1)) if k else None)


def one_program(c, tmp, label, cmd, want_stdout, counts_of, want_counts):
    cli = h.env_path("TEST_TRACER_CLI")
    at_end = os.path.join(tmp, label + "-at-end")
    deferred = os.path.join(tmp, label + "-deferred")
    rc, cpu_end, out, err = cpu_of(cmd, tmp, h.run_env(True, output=at_end))
    c.equal(rc, 0, "%s, written at the end: exit code (%s)" % (label, err.strip()[-300:]))
    c.equal(summary_counts(c, label + ", written at the end", at_end, counts_of), want_counts,
            "%s, written at the end: what the archive holds" % label)

    rc, cpu_deferred, out, err = cpu_of(cmd, tmp, h.run_env(True, output=deferred,
                                                             extra_env={"TRACER_WRITE_AT_END": "0"}))
    for marker in h.SANITIZER_MARKERS:
        c.check(marker not in err, "%s, deferred: sanitizer report: %r" % (label, marker))
    c.equal(rc, 0, "%s, deferred: exit code (%s)" % (label, err.strip()[-300:]))
    c.check(want_stdout in out, "%s, deferred: program output %r" % (label, out))
    lines = [ln for ln in err.splitlines() if ln.startswith("tracer:")]
    c.equal(lines, [], "%s, deferred: tracer: lines" % label)
    c.check(os.path.isfile(os.path.join(deferred, "tracer.journal")), "%s, deferred: the journal is kept" % label)
    # traces.otf2 is there from the start, empty: the directory's claim
    anchor = os.path.join(deferred, "traces.otf2")
    c.check(os.path.isfile(anchor) and os.path.getsize(anchor) == 0 and
            not os.path.exists(os.path.join(deferred, "traces.def")) and
            not os.path.exists(os.path.join(deferred, "traces")),
            "%s, deferred: no archive was written at the end (%s)" % (label, sorted(os.listdir(deferred))))

    rec = subprocess.Popen([cli, "recover", deferred], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, rec_err = rec.communicate(timeout=600)
    c.equal(rec.returncode, 0, "%s: tracer recover exit code (%s)" % (label, rec_err.decode(errors="replace")))
    c.equal(summary_counts(c, label + ", recovered", deferred, counts_of), want_counts,
            "%s, recovered: what the archive holds" % label)

    rc, cpu_recover, _, _ = cpu_of([cli, "recover", "--force", deferred], tmp, h.base_env())
    c.equal(rc, 0, "%s: tracer recover --force exit code" % label)
    print("%s: CPU s written at the end %.3f, deferred %.3f, the recovery alone %.3f"
          % (label, cpu_end, cpu_deferred, cpu_recover))
    if not SANITIZED:
        c.check(cpu_end - cpu_deferred >= cpu_recover / 2,
                "%s: the deferred run saved %.3f CPU s, less than half the recovery's %.3f s: it still writes"
                % (label, cpu_end - cpu_deferred, cpu_recover))
    shutil.rmtree(at_end, ignore_errors=True)
    shutil.rmtree(deferred, ignore_errors=True)


def verbose_line(c, tmp):
    out = os.path.join(tmp, "verbose")
    p = h.run([h.env_path("TEST_FLOOD_BIN"), "1", "1000"], tmp, True, output=out,
              extra_env={"TRACER_WRITE_AT_END": "0", "TRACER_VERBOSE": "1"})
    c.equal(p.returncode, 0, "verbose: exit code")
    kept = [ln for ln in h.tracer_lines(p) if "journal kept in" in ln]
    c.equal(len(kept), 1, "verbose: one line says where the journal is (%r)" % h.tracer_lines(p))
    if kept:
        c.check(out in kept[0] and "tracer recover" in kept[0], "verbose: the line names %s and tracer recover: %r"
                % (out, kept[0]))
    shutil.rmtree(out, ignore_errors=True)


def main():
    c = h.Checker("write_deferred")
    tmp = tempfile.mkdtemp(prefix="tracer-write-deferred-")
    flood = h.env_path("TEST_FLOOD_BIN")
    one_program(c, tmp, "marks", [flood, "1", str(MARKS)], "thread 0: emitted %d refused 0" % MARKS,
                flood_marks, MARKS)
    regions = h.env_path("TEST_TARGET_REGIONS_BIN", required=False)
    if regions:
        one_program(c, tmp, "target regions", [regions, str(REGIONS)], "regions=%d check=%d" % (REGIONS, REGIONS),
                    target_counts, (REGIONS, REGIONS))
    else:
        c.note("no offload compiler: the target-region runs are skipped")
    verbose_line(c, tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
