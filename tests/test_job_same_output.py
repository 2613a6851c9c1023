#!/usr/bin/python3
"""Issue 34, item 9: two MPI jobs started at once with the same
TRACER_OUTPUT D. Two 3-rank jobs under real MPICH (mpiexec.mpich) run
programs/mpi_marks.c at the same moment, job A with BASE 30, job B with
BASE 50 (rank r marks "step" BASE + r times and says so on stdout), and
this is repeated ROUNDS times (a race):

- both jobs exit 0 and each rank made its marks;
- afterwards the directory holds exactly D and D.1 (nothing else: no
  D.rank<N>, D.rank<N>.1, no empty leftover, no temporary name), each one
  job's whole archive: its 3 rank groups with exactly BASE + r marks
  0..BASE+r-1 each, TRACER::JOB::RANKS 3/3;
- the only tracer: line of the two jobs is the true one of the job that
  got D.1: "D already holds a trace; writing to D.1 instead" - none about
  a rank's directory (D.rank<N>) that never exists afterwards."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import cfgtest as ct  # noqa: E402
from otf2_trace import RankView  # noqa: E402

RANKS = 3
ROUNDS = 4
BASES = {"A": 30, "B": 50}


def rank_marks(t, rank):
    return RankView(t, rank).mark_values()


def one_round(c, tmp, k):
    top = os.path.join(tmp, "round%d" % k)
    os.makedirs(top)
    d = os.path.join(top, "D")
    e = h.base_env()
    e["HYDRA_LAUNCHER"] = "fork"
    e["TRACER_OUTPUT"] = d
    procs = {}
    for job, base in BASES.items():
        cmd = [h.env_path("TEST_MPIEXEC"), "-n", str(RANKS), "env", "LD_PRELOAD=" + ":".join(h.preload_list()),
               h.env_path("TEST_BIN"), str(base)]
        procs[job] = subprocess.Popen(cmd, cwd=top, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = []
    for job, p in procs.items():
        out, err = p.communicate(timeout=240)
        what = "round %d, job %s" % (k, job)
        c.equal(p.returncode, 0, "%s: exit status (stderr %r)" % (what, err.decode(errors="replace")[-2000:]))
        said = {int(m.group(1)): int(m.group(2))
                for m in re.finditer(r"rank (\d+) of %d: (\d+) marks" % RANKS, out.decode(errors="replace"))}
        c.equal(said, {r: BASES[job] + r for r in range(RANKS)}, "%s: marks each rank made (its stdout)" % what)
        for m in h.SANITIZER_MARKERS:
            c.check(m not in err.decode(errors="replace"), "%s: sanitizer report %r" % (what, m))
        lines += [ln for ln in err.decode(errors="replace").splitlines() if ln.startswith("tracer:")]
    c.equal(lines, ["tracer: %s already holds a trace; writing to %s.1 instead" % (d, d)],
            "round %d: the tracer: lines of both jobs" % k)
    c.equal(sorted(os.listdir(top)), ["D", "D.1"], "round %d: what the jobs left" % k)
    found = {}
    for name in ("D", "D.1"):
        path = os.path.join(top, name)
        what = "round %d, %s" % (k, name)
        c.equal(sorted(os.listdir(path)) if os.path.isdir(path) else None, ["traces", "traces.def", "traces.otf2"],
                "%s: its files" % what)
        anchor = os.path.join(path, "traces.otf2")
        if not c.check(os.path.isfile(anchor) and os.path.getsize(anchor) > 0, "%s: no archive" % what):
            continue
        t = h.Trace(anchor)
        marks = {r: rank_marks(t, r) for r in range(RANKS)}
        job = [j for j, base in BASES.items() if len(marks[0]) == base]
        if not c.check(len(job) == 1, "%s: rank 0's %d marks are no job's" % (what, len(marks[0]))):
            continue
        found[job[0]] = name
        for r in range(RANKS):
            c.equal(marks[r], list(range(BASES[job[0]] + r)), "%s (job %s): rank %d's marks" % (what, job[0], r))
        c.equal(ct.properties(c, anchor, what).get("TRACER::JOB::RANKS"), "%d/%d" % (RANKS, RANKS),
                "%s: TRACER::JOB::RANKS" % what)
    c.equal(sorted(found), sorted(BASES), "round %d: the jobs whose archives D and D.1 are" % k)


def main():
    c = h.Checker("job_same_output")
    with tempfile.TemporaryDirectory(prefix="tracer-same-output-") as tmp:
        for k in range(ROUNDS):
            one_round(c, tmp, k)
    c.finish()


if __name__ == "__main__":
    main()
