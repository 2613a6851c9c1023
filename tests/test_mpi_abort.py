#!/usr/bin/python3
"""Issue 20: a 4-rank MPICH job in which rank 1 calls MPI_Abort while the
other ranks are busy (programs/mpi_abort.c); then the same under Debian's
Open MPI 4.1, whose mpirun ends the other ranks with SIGTERM (saved by
tracer's handler) where MPICH's hydra uses SIGKILL. Each rank writes one line per
mark it made, unbuffered, to a file of its own: the ground truth.

- The job's exit status is MPI_Abort's error code (7), as without tracer.
- Rank 1's journal is saved by the MPI_Abort wrapper before the real one
  runs: it says "ended in MPI_Abort(7)" and its in-flight file is gone.
- The other ranks are killed by the launcher (SIGKILL under MPICH's hydra):
  what their chunks held is only in their in-flight files.
- `tracer recover JOBDIR` takes every rank's journal and in-flight file:
  each rank's marks in the archive are exactly 0..L-1 for the L lines the
  rank wrote, or one more (made, its line not yet written): nothing lost,
  nothing invented. Afterwards no in-flight file is left."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
from otf2_trace import RankView  # noqa: E402

RANKS = 4
ABORTING = 1


def alive(pid):
    """Running (not gone, not a zombie)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


# Open MPI as root, on one machine with 2 cores (as test_mpi_other_family).
OMPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMPI_MCA_plm_rsh_agent": "false", "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def run(tmp, label, k, traced, family):
    top = os.path.join(tmp, label)
    lines_dir = os.path.join(top, "lines")
    os.makedirs(lines_dir)
    out = os.path.join(top, "out")
    e = h.base_env()
    e["TRACER_OUTPUT"] = out
    if family == "mpich":
        e["HYDRA_LAUNCHER"] = "fork"
        prog = [h.env_path("TEST_BIN"), lines_dir, str(k)]
        if traced:
            prog = ["env", "LD_PRELOAD=" + ":".join(h.preload_list())] + prog
        cmd = [h.env_path("TEST_MPIEXEC"), "-n", str(RANKS)] + prog
    else:
        e.update(OMPI_ENV)
        cmd = [os.environ["TEST_MPIRUN_OPENMPI"], "-n", str(RANKS), "-x", "TRACER_OUTPUT"]
        if traced:
            # the ranks only: under a sanitizer build, ASan preloaded into
            # mpirun itself finds a use-after-free of Open MPI 4.1.4's own
            # (orte_rml_oob_send_buffer_nb after MPI_Abort), untraced too
            cmd += ["-x", "LD_PRELOAD=" + ":".join(h.preload_list())]
        cmd += [os.environ["TEST_BIN_OPENMPI"], lines_dir, str(k)]
    p = subprocess.run(cmd, cwd=top, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
    # mpiexec may return while the ranks it killed are still dying: their
    # last marks and lines come after, so the lines are read once they are gone
    deadline = time.monotonic() + 30
    for r in range(RANKS):
        try:
            with open(os.path.join(lines_dir, "rank%d.pid" % r)) as f:
                pid = int(f.read())
        except (OSError, ValueError):
            continue
        while time.monotonic() < deadline and alive(pid):
            time.sleep(0.01)
    lines = {}
    for r in range(RANKS):
        path = os.path.join(lines_dir, "rank%d.lines" % r)
        with open(path) as f:
            text = f.read()
        got = text.splitlines()
        if text and not text.endswith("\n"):
            got = got[:-1]  # a line cut by the kill: not a proof
        lines[r] = got
    return p, out, lines


def rank_marks(t, rank):
    return RankView(t, rank).mark_values()


def one_job(c, tmp, k, family):
    what = "%s: MPI_Abort after %d marks" % (family, k)
    plain, _, plain_lines = run(tmp, "%s-plain%d" % (family, k), k, False, family)
    p, out, lines = run(tmp, "%s-traced%d" % (family, k), k, True, family)
    for label, q in (("without tracer", plain), ("with tracer", p)):
        c.equal(q.returncode, 7, "%s: mpiexec's exit status %s (stderr %r)"
                % (what, label, q.stderr.decode(errors="replace")[-400:]))
    c.equal(len(plain_lines[ABORTING]), k, "%s: the aborting rank's lines without tracer" % what)
    c.equal(len(lines[ABORTING]), k, "%s: the aborting rank's lines" % what)
    for r in range(RANKS):
        c.equal(lines[r], [str(i) for i in range(len(lines[r]))], "%s: rank %d's own lines" % (what, r))
    c.equal([ln for ln in p.stderr.decode(errors="replace").splitlines() if ln.startswith("tracer:")], [],
            "%s: tracer: lines of the job" % what)
    r = subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=h.base_env(), timeout=240)
    text = r.stdout.decode(errors="replace")
    c.equal(r.returncode, 0, "%s: tracer recover exit code (stderr %r)" % (what, r.stderr.decode()))
    c.equal([ln for ln in r.stderr.decode().splitlines() if ln.startswith("tracer:")], [],
            "%s: tracer recover's complaints" % what)
    c.check("rank %d: ended in MPI_Abort(7)" % ABORTING in text,
            "%s: recover does not say rank %d ended in MPI_Abort(7): %r" % (what, ABORTING, text))
    # it saved every chunk itself and removed its file: nothing to report
    # from it (recover may still name code addresses of the chunks it saved
    # before the journal's thread named them, issue 35 item 6)
    c.check(not re.search(r"^  rank %d: (in-flight file|thread )" % ABORTING, text, re.M),
            "%s: the aborting rank left its in-flight file: %r" % (what, text))
    for f in re.findall(r"in-flight file (/dev/shm/tracer-\S+):", text):
        c.check(not os.path.exists(f), "%s: %s left after recover" % (what, f))
    taken = sum(int(n) for n in re.findall(r"(\d+) from the in-flight file", text))
    t = h.open_checked_trace(c, what, os.path.join(out, "traces.otf2"))
    if t is None:
        return 0
    for rank in range(RANKS):
        got = rank_marks(t, rank)
        n = len(lines[rank])
        c.check(got == list(range(len(got))) and n <= len(got) <= n + 1,
                "%s: rank %d: %d marks in the archive for %d lines, the first wrong at %r"
                % (what, rank, len(got), n, next((i for i, v in enumerate(got) if v != i), None)))
    return taken


def main():
    c = h.Checker("mpi_abort")
    tmp = tempfile.mkdtemp(prefix="tracer-test-mpi-abort-")
    try:
        taken = 0
        for k in (3, 2500):
            taken += one_job(c, tmp, k, "mpich")
        c.check(taken > 0, "no record came from an in-flight file: the killed ranks' last chunks were "
                "not taken")
        if os.environ.get("TEST_BIN_OPENMPI"):
            for k in (3, 500):
                one_job(c, tmp, k, "Open MPI")
        else:
            c.note("Open MPI (mpicc.openmpi, mpirun.openmpi) not found: MPICH only")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
