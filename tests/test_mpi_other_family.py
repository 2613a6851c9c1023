#!/usr/bin/python3
"""libtracer.so (built against MPICH's mpi.h) preloaded into a real Open MPI
4.1.4 program, as a singleton and under `mpirun -n 2`.

MPI handles differ between families (MPICH: ints, Open MPI: pointers).
tracer must notice at run time that the process uses another MPI, leave MPI
alone with one `tracer:` line per process, and still forward every wrapped
call (MPI_Init_thread, MPI_Comm_dup/_split, MPI_Cart_create/_sub,
MPI_Comm_free, MPI_Finalize) with the pointer handles intact. Checked:
exit status 3 (under mpirun: mpirun's, as untraced) and stdout equal to the untraced run's (which proves the
communicators were made and freed), exactly one `tracer:` line per process,
naming Open MPI and MPICH; per process one archive whose host thread has
MPI_Init_thread and MPI_Finalize, whose TRACER::MPIT::STATUS says MPI_T was
not used, and which has no MPI_T source location.
"""
import glob
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import cfgtest as ct  # noqa: E402
import harness as h  # noqa: E402


def run(c, label, cmd, tmp, traced):
    out = os.path.join(tmp, label)
    # Every rank exits with status 3 on purpose; by default mpirun then kills
    # the ranks still running, which can cut a rank's trace while it is being
    # written at exit (a race seen under ASan on a loaded machine). Each rank
    # is meant to end on its own here.
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_plm_rsh_agent": "false", "OMPI_MCA_rmaps_base_oversubscribe": "1",
           "OMPI_MCA_orte_abort_on_non_zero_status": "0"}
    r = h.run(cmd, tmp, traced, output=out if traced else None, extra_env=env, timeout=180)
    r.stdout = r.stdout.decode(errors="replace")
    r.stderr = r.stderr.decode(errors="replace")
    return r, out


def check_archive(c, label, anchor):
    t = h.open_checked_trace(c, label, anchor)
    if t is None:
        return
    names = [loc.name for loc in t.locations]
    c.check(not any(n.startswith("MPI_T source") for n in names), "%s: MPI_T source locations %r" % (label, names))
    calls = [e.region.name for _, e in t.enters() if e.region.name.startswith("MPI_")]
    c.equal(calls, ["MPI_Init_thread", "MPI_Finalize"], "%s: MPI regions" % label)
    status = ct.properties(c, anchor, label).get("TRACER::MPIT::STATUS", "")
    c.check(status.startswith("Open MPI") and "not the MPI tracer was built for" in status,
            "%s: TRACER::MPIT::STATUS %r" % (label, status))


def main():
    c = h.Checker("mpi_other_family")
    mpirun = os.environ.get("TEST_MPIRUN")
    binary = h.env_path("TEST_BIN")
    tmp = tempfile.mkdtemp(prefix="tracer-test-other-mpi-")
    try:
        for label, cmd, nproc in (("singleton", [binary], 1),
                                  ("mpirun -n 2", [mpirun, "-n", "2", "-x", "LD_PRELOAD", binary], 2)):
            if label != "singleton" and not mpirun:
                c.note("mpirun.openmpi not found: only the singleton is run")
                continue
            base, _ = run(c, label.replace(" ", "_") + "_untraced", cmd, tmp, False)
            r, out = run(c, label.replace(" ", "_"), cmd, tmp, True)
            # The program exits 3; mpirun, told not to abort on it, exits as
            # it does untraced.
            want = 3 if label == "singleton" else base.returncode
            c.equal(r.returncode, want, "%s: exit status (stderr %r)" % (label, r.stderr[-400:]))
            c.equal(sorted(r.stdout.splitlines()), sorted(base.stdout.splitlines()), "%s: stdout" % label)
            c.equal(len(r.stdout.splitlines()), nproc, "%s: lines of output" % label)
            lines = [l for l in r.stderr.splitlines() if l.startswith("tracer:")]
            c.equal(len(lines), nproc, "%s: tracer: lines %r" % (label, lines))
            for l in lines:
                c.check("Open MPI" in l and "built for MPICH" in l, "%s: line %r" % (label, l))
            for marker in h.SANITIZER_MARKERS:
                c.check(marker not in r.stderr, "%s: sanitizer report %r" % (label, r.stderr[-800:]))
            anchors = sorted(glob.glob(out + "*/traces.otf2"))
            c.equal(len(anchors), nproc, "%s: archives %r" % (label, anchors))
            for a in anchors:
                check_archive(c, "%s %s" % (label, os.path.basename(os.path.dirname(a))), a)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
