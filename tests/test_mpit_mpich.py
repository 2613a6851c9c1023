#!/usr/bin/python3
"""programs/mpit_offload.c under real MPICH 4.0.2, traced: `mpiexec -n 2` and
a singleton (no mpiexec).

MPICH 4.0.2 has the MPI_T events API but registers no sources and no event
types and raises nothing, so tracer's MPI_T session must come up empty and
stay out of the way while the offload part is traced as usual. Ground truth
per rank r (LLVM 19 host offload, device 0; NA = 1000 + 256 r doubles,
NX = 128 (r + 1), REPS = r + 2):
  target #1          alloc a, alloc b (NA*8 each), to a (NA*8), kernel,
                     from b (NA*8), delete a, b
  REPS x target #2   alloc x (NX*8), to x (NX*8), kernel, from x (NX*8), delete x
  MPI_Allreduce, MPI_Finalize; exit status 4.
Checks, for each run:
  - exit status and stdout as without tracer (stdout lines sorted: the ranks
    print concurrently); no sanitizer report; nothing on stderr;
  - one archive per rank (every traces.otf2 below the run's directory: no
    rank overwrote another's), each in TRACER_OUTPUT or a sibling named
    after it (a ".rank<r>" suffix must name the rank that wrote it); the
    singleton's in TRACER_OUTPUT itself; each readable by otf2-print and the
    Python reader, timestamps and nesting sound; the archive of rank r (found
    by its "process <pid>" group and the pids the ranks wrote to
    TEST_PID_DIR) holds rank r's offload ground truth:
    construct/data-op/kernel counts, bytes per direction (Enter attributes
    and RmaPut/RmaGet), kernel names in order, device memory metric;
  - MPI_Init and MPI_Finalize regions (role FUNCTION, paradigm MPI) once each
    on host thread 0, MPI_Init before the first target construct and
    MPI_Finalize after the last; no MPI_Init_thread; ProgramEnd status 4;
  - property TRACER::MPIT::STATUS = "<first line of MPI_Get_library_version,
    as the program printed it>: MPI_T events: 0 sources, 0 event types,
    0 registrations made, 0 live" (control characters as spaces); no other TRACER::MPIT:: property; no
    "MPI_T source ..." location and no other MPI-paradigm region.
Sanitizer builds where the OpenMP runtime gives no OMPT target callbacks even
to the independent probe tool (harness.skip_if_runtime_deaf) keep every check
except the offload content, which is reported as skipped.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import cfgtest as ct  # noqa: E402
import extra  # noqa: E402
import otf2  # noqa: E402
from otf2.enums import Paradigm, RegionRole  # noqa: E402

EXIT = 4
A = h.Trace.attr


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


class Run:
    def __init__(self, what, cwd, output, pid_dir, proc):
        self.what = what
        self.cwd = cwd
        self.output = output
        self.pid_dir = pid_dir
        self.rc = proc.returncode if proc else None
        self.out = proc.stdout.decode(errors="replace") if proc else ""
        self.err = proc.stderr.decode(errors="replace") if proc else "TIMEOUT"

    def describe(self):
        return "--- %s: rc=%r\nstdout:\n%s\nstderr:\n%s" % (self.what, self.rc, self.out, self.err[-4000:])


def run(tmp, label, cmd, traced):
    d = os.path.join(tmp, label)
    cwd = os.path.join(d, "cwd")
    pid_dir = os.path.join(d, "pids")
    os.makedirs(cwd)
    os.makedirs(pid_dir)
    output = os.path.join(d, "out")
    env = h.base_env()
    env["TEST_PID_DIR"] = pid_dir
    env.setdefault("HYDRA_LAUNCHER", "fork")   # mpiexec: local machine only
    if traced:
        env["LD_PRELOAD"] = ":".join(h.preload_list())
        env["TRACER_OUTPUT"] = output
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180)
    except subprocess.TimeoutExpired:
        p = None
    return Run("%s (%s)" % (label, " ".join(os.path.basename(x) for x in cmd)), cwd, output, pid_dir, p)


def archives_below(root):
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        if "traces.otf2" in filenames:
            found.append(os.path.join(dirpath, "traces.otf2"))
    return sorted(found)


def rank_pids(c, r, size):
    pids = {}
    for rank in range(size):
        path = os.path.join(r.pid_dir, "rank%d.pid" % rank)
        if c.check(os.path.isfile(path), "%s: rank %d wrote no pid file" % (r.what, rank)):
            with open(path) as f:
                pids[int(f.read().strip())] = rank
    return pids


def check_plain(c, r, size):
    """The program alone: exit status, stdout; returns the library line."""
    c.equal(r.rc, EXIT, "%s: exit status" % r.what)
    lib = re.findall(r"^mpit_offload: library=(.*)$", r.out, re.M)
    if not c.equal(len(lib), 1, "%s: library lines in stdout" % r.what):
        return None
    c.check(lib[0].startswith("MPICH"), "%s: not MPICH: %r" % (r.what, lib[0]))
    c.equal(sorted(r.out.splitlines()), want_stdout_lines(size, lib[0]), "%s: stdout lines" % r.what)
    c.check(r.out.endswith("\n"), "%s: stdout does not end with a newline" % r.what)
    c.equal(r.err, "", "%s: stderr" % r.what)
    return lib[0]


def check_offload(c, t, what, rank, src):
    """Rank `rank`'s offload ground truth in its archive."""
    n_a, n_x, k = na(rank) * 8, nx(rank) * 8, reps(rank)
    h.check_counts(c, t, {
        "target": 1 + k, "alloc": 2 + k, "transfer to device": 1 + k,
        "transfer from device": 1 + k, "delete": 2 + k, "kernel": 1 + k})
    c.equal(h.data_op_summary(t), {
        ("alloc", 0): sorted([n_a, n_a] + [n_x] * k),
        ("transfer to device", 0): sorted([n_a] + [n_x] * k),
        ("transfer from device", 0): sorted([n_a] + [n_x] * k),
        ("delete", 0): sorted([n_a, n_a] + [n_x] * k)},
        "%s: data ops (kind, device) -> bytes" % what)
    c.equal(h.transfer_summary(t), {
        ("to device", 0): sorted([n_a] + [n_x] * k),
        ("from device", 0): sorted([n_a] + [n_x] * k)},
        "%s: RmaPut/RmaGet (kind, device) -> bytes" % what)
    h.check_attributes(c, t)
    h.check_rma(c, t)
    h.check_memory(c, t, single_thread=True)
    lines = h.kernel_lines(src)
    h.check_kernels(c, t, {0: 1 + k}, [lines["first"]] + [lines["second"]] * k)
    for _, ev in t.enters():
        if ev.region.canonical_name in h.WRAPPERS:
            c.equal(A(ev, "device"), 0, "%s: device of %s" % (what, ev.region.canonical_name))


def check_archive(c, anchor, what, rank, library, deaf, src):
    t = h.open_checked_trace(c, what, anchor)
    if t is None:
        return
    c.extend(["%s Leave(%s)" % (loc.name, ev.region.canonical_name) for loc, ev in t.incomplete_leaves()],
             "%s: Leaves with incomplete=1" % what)
    threads = t.cpu_threads()
    for loc in threads:
        c.check(re.fullmatch(r"host thread \d+", loc.name), "%s: CPU_THREAD location %r (an MPI_T source "
                "location although MPICH has no sources?)" % (what, loc.name))
    c.check(not [l for l in t.locations if l.name.startswith("MPI_T source")],
            "%s: MPI_T source locations %r" % (what, [l.name for l in t.locations]))
    c.equal(len(threads), 1, "%s: host thread locations" % what)
    host0 = [l for l in threads if l.name == "host thread 0"]
    if not c.check(host0, "%s: no 'host thread 0'" % what):
        return
    host0 = host0[0]

    # MPI_Init / MPI_Finalize on host thread 0
    mpi_regions = [reg for reg in t.regions if reg.paradigm == Paradigm.MPI]
    c.equal(sorted(reg.name for reg in mpi_regions), ["MPI_Finalize", "MPI_Init"],
            "%s: regions of paradigm MPI" % what)
    for reg in mpi_regions:
        c.equal(reg.region_role, RegionRole.FUNCTION, "%s: role of %s" % (what, reg.name))
        c.equal(reg.canonical_name, reg.name, "%s: canonical name of %s" % (what, reg.name))
    counts = t.count_enters()
    c.equal((counts.get("MPI_Init", 0), counts.get("MPI_Finalize", 0), counts.get("MPI_Init_thread", 0)),
            (1, 1, 0), "%s: Enters of (MPI_Init, MPI_Finalize, MPI_Init_thread)" % what)
    on0 = [(e.region.canonical_name, e.time, l.time) for _, e, l in t.intervals(location=host0)
           if e.region.canonical_name in ("MPI_Init", "MPI_Finalize")]
    c.equal(sorted(n for n, _, _ in on0), ["MPI_Finalize", "MPI_Init"],
            "%s: MPI regions on host thread 0" % what)
    spans = {n: (b, e) for n, b, e in on0}
    targets = [(e.time, l.time) for _, e, l in t.intervals("target")]
    if len(spans) == 2:
        c.check(spans["MPI_Init"][1] <= spans["MPI_Finalize"][0], "%s: MPI_Init %r does not end before "
                "MPI_Finalize %r begins" % (what, spans["MPI_Init"], spans["MPI_Finalize"]))
        if targets:
            c.check(spans["MPI_Init"][1] <= min(b for b, _ in targets),
                    "%s: MPI_Init ends after the first target construct begins" % what)
            c.check(spans["MPI_Finalize"][0] >= max(e for _, e in targets),
                    "%s: MPI_Finalize begins before the last target construct ends" % what)
    pb = t.events_of(otf2.events.ProgramBegin)
    pe = t.events_of(otf2.events.ProgramEnd)
    if c.equal((len(pb), len(pe)), (1, 1), "%s: (ProgramBegin, ProgramEnd)" % what):
        c.equal(pe[0][1].exit_status, EXIT, "%s: ProgramEnd exit status" % what)
        if len(spans) == 2:
            c.check(pb[0][1].time <= spans["MPI_Init"][0] and pe[0][1].time >= spans["MPI_Finalize"][1],
                    "%s: MPI_Init/MPI_Finalize outside ProgramBegin..ProgramEnd" % what)

    # MPI_T properties: MPICH has no sources and no event types
    props = ct.properties(c, anchor, what)
    mpit = {k: v for k, v in props.items() if k.startswith("TRACER::MPIT::")}
    if library is not None:
        c.equal(mpit.get("TRACER::MPIT::STATUS"),
                "%s: MPI_T events: 0 sources, 0 event types, 0 registrations made, 0 live"
                % re.sub(r"[\x00-\x1f]", " ", library),
                "%s: property TRACER::MPIT::STATUS" % what)
    status = mpit.get("TRACER::MPIT::STATUS", "")
    c.check("MPICH" in status and "0 sources, 0 event types" in status,
            "%s: TRACER::MPIT::STATUS %r does not say MPICH, 0 sources, 0 event types" % (what, status))
    c.equal(sorted(mpit), ["TRACER::MPIT::STATUS"], "%s: TRACER::MPIT:: properties" % what)

    if deaf:
        return
    check_offload(c, t, what, rank, src)


def check_traced(c, r, plain, size, library, deaf, src):
    c.equal(r.rc, plain.rc, "%s: exit status (vs without tracer)" % r.what)
    c.equal(sorted(r.out.splitlines()), sorted(plain.out.splitlines()),
            "%s: stdout lines (vs without tracer)" % r.what)
    for m in h.SANITIZER_MARKERS:
        c.check(m not in r.err, "%s: sanitizer report %r in stderr" % (r.what, m))
    c.equal(r.err, "", "%s: stderr" % r.what)
    c.equal(os.listdir(r.cwd), [], "%s: files in the cwd although TRACER_OUTPUT was set" % r.what)

    # One archive per rank, each in a directory of its own named after
    # TRACER_OUTPUT (the singleton: TRACER_OUTPUT itself).
    top = os.path.dirname(r.output)
    anchors = archives_below(top)
    c.equal(len(anchors), size, "%s: archives below %s (one per rank): %r" % (r.what, top, anchors))
    for anchor in anchors:
        d = os.path.dirname(anchor)
        c.check(os.path.dirname(d) == top and (d == r.output or d.startswith(r.output + ".")),
                "%s: archive %s is not in TRACER_OUTPUT=%s or a sibling named after it"
                % (r.what, anchor, r.output))
    if size == 1:
        c.equal(anchors, [os.path.join(r.output, "traces.otf2")], "%s: the singleton's archive" % r.what)
    pids = rank_pids(c, r, size)
    seen = {}
    for anchor in anchors:
        what = "%s %s" % (r.what, os.path.relpath(anchor, os.path.dirname(r.output)))
        try:
            groups = {loc.group.name for loc in h.Trace(anchor).cpu_threads()}
        except Exception as e:  # noqa: BLE001 - reported by check_archive
            groups = set()
            c.check(False, "%s: unreadable: %r" % (what, e))
        ranks = {pids.get(int(g.split()[1])) for g in groups if re.fullmatch(r"process \d+", g)}
        if not c.check(len(ranks) == 1 and None not in ranks,
                       "%s: host thread groups %r are not the process of exactly one rank (pids %r)"
                       % (what, sorted(groups), pids)):
            continue
        rank = ranks.pop()
        m = re.search(r"\.rank(\d+)$", os.path.dirname(anchor))
        if m:
            c.equal(int(m.group(1)), rank, "%s: rank in the directory name vs the rank of its process" % what)
        c.check(rank not in seen, "%s: rank %d's archive again (also %s)" % (what, rank, seen.get(rank)))
        seen[rank] = anchor
        check_archive(c, anchor, "%s (rank %d)" % (what, rank), rank, library, deaf, src)
    c.equal(sorted(seen), list(range(size)), "%s: ranks with an archive" % r.what)


def main():
    c = h.Checker("mpit_mpich")
    binary = h.env_path("TEST_BIN")
    src = h.env_path("TEST_SRC")
    mpiexec = h.env_path("TEST_MPIEXEC")
    tmp = tempfile.mkdtemp(prefix="tracer-test-mpit-mpich-")
    runs = []
    try:
        deaf = extra.runtime_deaf(binary, tmp)
        if deaf:
            c.note("SKIPPED the offload content checks: with %s preloaded the OpenMP runtime delivers no "
                   "OMPT target callbacks even to the independent probe tool; MPI and MPI_T checks still run"
                   % os.environ.get("TEST_SANITIZER_PRELOAD"))
        for label, cmd, size in (("mpiexec", [mpiexec, "-n", "2", binary], 2),
                                 ("singleton", [binary], 1)):
            plain = run(tmp, label + "-plain", cmd, traced=False)
            traced = run(tmp, label + "-traced", cmd, traced=True)
            runs += [plain, traced]
            library = check_plain(c, plain, size)
            check_traced(c, traced, plain, size, library, deaf, src)
    finally:
        if c.failures:
            for r in runs:
                print(r.describe())
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
