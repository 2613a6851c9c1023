#!/usr/bin/python3
"""Issue 34, item 2: a job whose ranks' journals are complete but one is
lost. A 3-rank job under real MPICH (mpiexec.mpich) runs
programs/mpi_marks.c with TRACER_WRITE_AT_END=0: rank r marks "step"
exactly BASE + r times (values 0..BASE+r-1) and says so on stdout, and the
journals stay in D/journals. Copies of D then have rank 1's journal cut to
100 bytes (before its MPI_RANK frame) and to 0 bytes, and `tracer recover`
runs on each:

- exit status 0: what could be recovered was;
- one tracer: line on stderr, naming rank 1's journal as lost and why;
- the archive holds ranks 0 and 2 with exactly their marks (0..BASE-1 and
  0..BASE+1, in order), rank 1 has no location, and the properties say so:
  TRACER::JOB::RANKS "2/3", TRACER::JOB::MISSING_RANKS "1",
  TRACER::RUN::END "rank 1: journal lost, no events";
- stdout's line says 2 of 3 ranks, and the events the archive holds.

The intact copy recovers all 3 ranks with their marks, as control."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import cfgtest as ct  # noqa: E402
from otf2_trace import RankView  # noqa: E402

RANKS = 3
BASE = 40
LOST = 1


def rank_marks(t, rank):
    return RankView(t, rank).mark_values()


def run_job(c, tmp):
    out = os.path.join(tmp, "job")
    e = h.base_env()
    e["HYDRA_LAUNCHER"] = "fork"
    e["TRACER_OUTPUT"] = out
    e["TRACER_WRITE_AT_END"] = "0"
    cmd = [h.env_path("TEST_MPIEXEC"), "-n", str(RANKS), "env", "LD_PRELOAD=" + ":".join(h.preload_list()),
           h.env_path("TEST_BIN"), str(BASE)]
    p = subprocess.run(cmd, cwd=tmp, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
    stdout = p.stdout.decode(errors="replace")
    c.equal(p.returncode, 0, "the job's exit status (stderr %r)" % p.stderr.decode(errors="replace")[-2000:])
    said = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"rank (\d+) of %d: (\d+) marks" % RANKS, stdout)}
    c.equal(said, {r: BASE + r for r in range(RANKS)}, "marks each rank made (its stdout)")
    c.equal(h.tracer_lines(p), [], "tracer: lines of the job")
    return out


def recover(c, what, d, cut):
    """Copies @d, cuts rank LOST's journal to @cut bytes (None: intact),
    recovers, and checks the archive against the marks made."""
    top = d + ("-intact" if cut is None else "-cut%d" % cut)
    shutil.copytree(d, top, symlinks=True)
    journal = os.path.join(top, "journals", "rank%d.journal" % LOST)
    if cut is not None:
        c.check(os.path.getsize(journal) > 4 * max(cut, 100), "%s: rank %d's journal is larger than the cut (%d bytes)"
                % (what, LOST, os.path.getsize(journal)))
        os.truncate(journal, cut)
    p = subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover", top], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=h.base_env(), timeout=240)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    c.equal(p.returncode, 0, "%s: tracer recover's exit status (stdout %r, stderr %r)" % (what, out, err))
    for m in h.SANITIZER_MARKERS:
        c.check(m not in err, "%s: sanitizer report %r from tracer recover" % (what, m))
    lines = [ln for ln in err.splitlines() if ln]
    if cut is None:
        c.equal(lines, [], "%s: stderr of tracer recover" % what)
    else:
        want = re.compile(r"tracer: recover: 1 rank journal lost, rank %d \(%s: %d bytes, cut short before it names "
                          r"its rank\); its rank has no events in the archive, marked 'journal lost'; the other "
                          r"ranks are recovered" % (LOST, re.escape(journal), cut))
        c.check(len(lines) == 1 and want.fullmatch(lines[0]), "%s: stderr of tracer recover: %r" % (what, lines))
    anchor = os.path.join(top, "traces.otf2")
    # (the job's claim, an empty traces.otf2, is there before any archive)
    if not c.check(os.path.isfile(anchor) and os.path.getsize(anchor) > 0, "%s: no archive written" % what):
        return
    t = h.Trace(anchor)
    present = [r for r in range(RANKS) if cut is None or r != LOST]
    for r in range(RANKS):
        want = list(range(BASE + r)) if r in present else []
        c.equal(rank_marks(t, r), want, "%s: rank %d's marks in the archive" % (what, r))
    groups = sorted(g.name for g in t.definitions.location_groups if re.fullmatch(r"rank \d+", g.name))
    c.equal(groups, ["rank %d" % r for r in present], "%s: the archive's rank groups" % what)
    props = ct.properties(c, anchor, what)
    c.equal(props.get("TRACER::JOB::RANKS"), "%d/%d" % (len(present), RANKS), "%s: TRACER::JOB::RANKS" % what)
    c.equal(props.get("TRACER::JOB::MISSING_RANKS"), None if cut is None else str(LOST),
            "%s: TRACER::JOB::MISSING_RANKS" % what)
    c.equal(props.get("TRACER::RUN::END"), "normal end" if cut is None else "rank %d: journal lost, no events" % LOST,
            "%s: TRACER::RUN::END" % what)
    events = sum(len(evs) for evs in t.events.values())
    head = "recovered %s/traces.otf2: %d of %d ranks, %d events of " % (top, len(present), RANKS, events)
    c.check(out.startswith(head), "%s: stdout of tracer recover %r, want it to begin %r" % (what, out, head))
    if cut is not None:
        c.check("(rank %d: journal lost, no events; missing: rank %d)\n" % (LOST, LOST) in out,
                "%s: stdout of tracer recover names the lost rank: %r" % (what, out))


def main():
    c = h.Checker("job_lost_rank")
    with tempfile.TemporaryDirectory(prefix="tracer-lost-rank-") as tmp:
        d = run_job(c, tmp)
        names = sorted(os.listdir(os.path.join(d, "journals"))) if os.path.isdir(os.path.join(d, "journals")) else []
        if c.equal(names, ["rank%d.journal" % r for r in range(RANKS)], "the job's journals"):
            recover(c, "intact", d, None)
            recover(c, "rank 1's journal cut to 100 bytes", d, 100)
            recover(c, "rank 1's journal cut to 0 bytes", d, 0)
    c.finish()


if __name__ == "__main__":
    main()
