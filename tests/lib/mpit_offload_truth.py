"""Ground truth of tests/programs/mpit_offload.c (an MPI + OpenMP offload
program whose work depends on the rank), shared by the tests that run it:
what each rank maps, transfers and launches, and what the job prints."""
import os
import re

EXIT = 4


def na(r):
    return 1000 + 256 * r


def nx(r):
    return 128 * (r + 1)


def reps(r):
    return r + 2


def local_sum(r):
    return na(r) * (na(r) - 1) + nx(r) * (reps(r) + 1)


def want_stdout_lines(size, library):
    lines = ["mpit_offload: rank %d of %d local=%d" % (r, size, local_sum(r)) for r in range(size)]
    lines.append("mpit_offload: total=%d" % sum(local_sum(r) for r in range(size)))
    lines.append("mpit_offload: library=%s" % library)
    return sorted(lines)


def want_counts(r):
    k = reps(r)
    return {"target": 1 + k, "alloc": 2 + k, "transfer to device": 1 + k,
            "transfer from device": 1 + k, "delete": 2 + k, "kernel": 1 + k}


def want_data_ops(r):
    n_a, n_x, k = na(r) * 8, nx(r) * 8, reps(r)
    return {("alloc", 0): sorted([n_a, n_a] + [n_x] * k),
            ("transfer to device", 0): sorted([n_a] + [n_x] * k),
            ("transfer from device", 0): sorted([n_a] + [n_x] * k),
            ("delete", 0): sorted([n_a, n_a] + [n_x] * k)}


def want_transfers(r):
    n_a, n_x, k = na(r) * 8, nx(r) * 8, reps(r)
    return {("to device", 0): sorted([n_a] + [n_x] * k),
            ("from device", 0): sorted([n_a] + [n_x] * k)}


def tree(top):
    """Every path below top, relative, directories with a trailing '/'."""
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        rel = os.path.relpath(dirpath, top)
        for d in dirnames:
            out.append(os.path.normpath(os.path.join(rel, d)) + "/")
        for f in filenames:
            out.append(os.path.normpath(os.path.join(rel, f)))
    return sorted(out)


def check_plain(c, r, size):
    """The program alone (r: .what, .rc, .out, .err): exit status, stdout;
    returns the library line it printed."""
    c.equal(r.rc, EXIT, "%s: exit status" % r.what)
    lib = re.findall(r"^mpit_offload: library=(.*)$", r.out, re.M)
    if not c.equal(len(lib), 1, "%s: library lines in stdout" % r.what):
        return None
    c.check(lib[0].startswith("MPICH"), "%s: not MPICH: %r" % (r.what, lib[0]))
    c.equal(sorted(r.out.splitlines()), want_stdout_lines(size, lib[0]), "%s: stdout lines" % r.what)
    c.check(r.out.endswith("\n"), "%s: stdout does not end with a newline" % r.what)
    c.equal(r.err, "", "%s: stderr" % r.what)
    return lib[0]
