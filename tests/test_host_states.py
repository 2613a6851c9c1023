#!/usr/bin/python3
"""Host OpenMP states (issue 9; docs/trace-model.md, "Host OpenMP states").

programs/omp_states.c runs host-only OpenMP cases of known structure
(imbalance, barrier, critical, lock, ordered, reduction, counts, tasks); each
prints its ground truth. Every case is run untraced, traced in user mode (the
default, TRACER_OMPT=all) and traced with TRACER_MODE=machine; OMP_WAIT_POLICY
is passive in every run, so that a waiting thread leaves its core to the
working ones. Checked:

- exit code and stdout unchanged by tracing (the counts case exits with 5:
  ProgramEnd says 5 too); the archive reads (otf2-print, python3-otf2),
  timestamps never go back, regions nest on every thread, no Leave is
  `incomplete` (machine mode: exactly the regions the docs list as open
  when the recording ends, at exit, before libomp shuts down);
- user mode: only the regions of the contract's table (canonical name, role,
  paradigm OPENMP), none of machine mode's `ompt ...`; `parallel (<file>:<line>)`,
  `critical (...)`, `ordered (...)`, `loop (...)`, `task (...)` name the
  construct's source line (the MARK comments of the program); wait states,
  work and held regions lie inside a `parallel` region, `<OMP-idle>` outside,
  on workers only; `<OMP-overhead>` twice per parallel region on the
  encountering thread only; `<OMP-idle>` = implicit tasks + 1 per worker;
  every parallel region instance is entered by as many threads as the
  program's team had, all in the same region;
- metrics `OMP work` / `OMP wait` (ns, ACCUMULATED_START, UINT64) on every
  thread of a team: one value at the end of each of its implicit tasks,
  never decreasing; at each, wait = the wait-state regions ended so far and
  work + wait = the `parallel` regions ended so far (machine mode: the
  `ompt sync_region_wait` and `ompt mutex_wait` regions, the implicit
  tasks);
- per case: imbalance (4 threads, or one per core where there are fewer:
  threads 1..3 wait in <OMP-implicit_barrier> longer
  than thread 0, for at least half of thread 0's extra work; thread 0's work
  is longer than each of theirs), barrier (<OMP-explicit_barrier> on every thread,
  once per region), critical (<OMP-critical_section_wait> before every
  `critical` held region, one each per entry, real waits on the contended
  threads), lock (<OMP-lock_wait> per omp_set_lock, no held region), ordered
  (<OMP-ordered_section_wait> and `ordered` per iteration), reduction
  (<OMP-reduction> on the team's first thread), counts (parallel regions,
  team sizes, loops, singles, implicit barriers), tasks (`task` and `task
  create` per task, <OMP-taskwait>);
- machine mode: only `ompt ...` regions (ARTIFICIAL, OPENMP) whose Enter
  carries codeptr_ra, omp_kind, omp_id and omp_arg; no <OMP-...> region;
  parallel ids link `ompt parallel` to the team's `ompt implicit_task`s
  (team sizes), requested team sizes in omp_arg; one `ompt thread` per
  thread around everything else; one-shot events of zero length; the raw
  record counts equal the user-mode region counts of the same case
  (documented mapping);
- TRACER_MODE=user gives what the default gives;
- TRACER_OMPT without host_states: no host callback registered
  (tracer_ompt_registration, printed by the program with
  OMP_STATES_REGISTRATIONS=1), nothing recorded (TRACER_VERBOSE: "no events
  were recorded; no trace written"), so no archive; TRACER_OMPT=host_states
  alone registers the host callbacks and no target one.
"""
import collections
import os
import re
import shutil
import sys
import tempfile
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import otf2  # noqa: E402
from otf2.enums import MetricMode, Paradigm, RegionRole as RR, Type  # noqa: E402
from otf2_trace import Trace  # noqa: E402

BIN = h.env_path("TEST_BIN")
SRC = h.env_path("TEST_SRC")
A = Trace.attr

# ground truth of the program (tests/programs/omp_states.c)
IMB_R, BAR_R, CRIT_N, LOCK_N, ORD_N, CNT_K, TASK_T = 8, 4, 6, 6, 16, 6, 4
# the imbalance team: 4 threads, or one per core where there are fewer (at
# least 2), as omp_get_num_procs() counts them (the affinity mask)
IMB_NT = max(2, min(4, len(os.sched_getaffinity(0))))
CNT_TEAMS = [2 + k % 3 for k in range(CNT_K)]
COUNTS_RC = 5
STDOUT = {
    "imbalance": "imbalance: regions=8 heavy_thread=0 factor=3 teams=%s\n"
                 % ",".join([str(IMB_NT)] * IMB_R),
    "barrier": "barrier: regions=4 explicit_barriers_per_thread=1 teams=4,4,4,4 passed=4,4,4,4\n",
    "critical": "critical: regions=1 team=4 entries=24 per_thread=6\n",
    "lock": "lock: regions=1 team=4 entries=24 per_thread=6\n",
    "ordered": "ordered: regions=1 team=4 iterations=16 order=%s\n"
               % ",".join(str(i) for i in range(ORD_N)),
    "reduction": "reduction: regions=1 team=8 sum=7998000\n",
    "counts": "counts: regions=6 teams=2,3,4,2,3,4 iterations=72 singles=6\n",
    "tasks": "tasks: regions=1 team=2 tasks=4 done=4\n",
}
# the program's parallel regions per case: (MARK of the construct, team sizes)
PARALLEL = {
    "imbalance": ("imbalance", [IMB_NT] * IMB_R),
    "barrier": ("barrier_parallel", [4] * BAR_R),
    "critical": ("critical_parallel", [4]),
    "lock": ("lock_parallel", [4]),
    "ordered": ("ordered_parallel", [4]),
    "reduction": ("reduction_parallel", [8]),
    "counts": ("counts_parallel", CNT_TEAMS),
    "tasks": ("tasks_parallel", [2]),
}
CASES = list(STDOUT)

# user mode: canonical name -> role (docs/trace-model.md)
USER_ROLES = {
    "parallel": RR.PARALLEL, "loop": RR.LOOP, "sections": RR.SECTIONS, "single": RR.SINGLE,
    "workshare": RR.WORKSHARE, "distribute": RR.LOOP, "taskloop": RR.LOOP, "scope": RR.CODE,
    "masked": RR.MASTER, "critical": RR.CRITICAL, "ordered": RR.ORDERED, "task": RR.TASK,
    "task create": RR.TASK_CREATE,
    "<OMP-implicit_barrier>": RR.IMPLICIT_BARRIER, "<OMP-explicit_barrier>": RR.BARRIER,
    "<OMP-taskwait>": RR.TASK_WAIT, "<OMP-taskgroup>": RR.TASK_WAIT,
    "<OMP-reduction>": RR.ARTIFICIAL, "<OMP-lock_wait>": RR.ARTIFICIAL,
    "<OMP-critical_section_wait>": RR.CRITICAL, "<OMP-ordered_section_wait>": RR.ORDERED,
    "<OMP-atomic_wait>": RR.ATOMIC, "<OMP-overhead>": RR.ARTIFICIAL, "<OMP-idle>": RR.ARTIFICIAL,
}
WAIT_STATES = {"<OMP-implicit_barrier>", "<OMP-explicit_barrier>", "<OMP-taskwait>",
               "<OMP-taskgroup>", "<OMP-lock_wait>", "<OMP-critical_section_wait>",
               "<OMP-ordered_section_wait>", "<OMP-atomic_wait>"}
OUTSIDE_PARALLEL = {"parallel", "<OMP-overhead>", "<OMP-idle>"}
# regions named "<canonical> (<file>:<line>)": the MARK tags whose line they name
NAMED_LINES = {
    "critical": ("critical", ["critical"]),
    "ordered": ("ordered", ["ordered"]),
    "loop": {"ordered": ["ordered_for"], "reduction": ["reduction_for"], "counts": ["counts_for"]},
    "task": ("tasks", ["task"]),
}
MACHINE = {"ompt parallel", "ompt implicit_task", "ompt work", "ompt masked", "ompt sync_region",
           "ompt sync_region_wait", "ompt reduction", "ompt mutex_wait", "ompt mutex_held",
           "ompt thread", "ompt task_create", "ompt task_schedule"}
MACHINE_POINTS = {"ompt task_create", "ompt task_schedule"}
MACHINE_ATTRS = ("codeptr_ra", "omp_kind", "omp_id", "omp_arg")
# records whose codeptr_ra LLVM always gives (explicit barrier, taskwait,
# workshare barrier: sync region kinds 3, 5, 8)
MACHINE_CODEPTR = {"ompt parallel", "ompt work", "ompt mutex_wait", "ompt mutex_held",
                   "ompt task_create", ("ompt sync_region_wait", 3), ("ompt sync_region_wait", 5),
                   ("ompt sync_region", 3), ("ompt sync_region", 5)}
# omp-tools.h values
TASK_INITIAL, TASK_IMPLICIT = 0x1, 0x2
THREAD_INITIAL, THREAD_WORKER = 1, 2
SYNC_IMPLICIT = {2, 4, 8, 9, 10}
SYNC_EXPLICIT = {1, 3}
SYNC_TASKWAIT, SYNC_TASKGROUP = 5, 6
MUTEX_LOCKS = {1, 2, 3, 4}
MUTEX_CRITICAL, MUTEX_ATOMIC, MUTEX_ORDERED = 5, 6, 7
WORK_LOOPS = {1, 10, 11, 12, 13}
WORK_SINGLE_EXECUTOR, WORK_SINGLE_OTHER = 3, 4
MACHINE_WAITS = {("ompt sync_region_wait", k) for k in SYNC_IMPLICIT | SYNC_EXPLICIT |
                 {SYNC_TASKWAIT, SYNC_TASKGROUP}} | {("ompt mutex_wait", k) for k in range(1, 8)}

HOST_CALLBACKS = ["ompt_callback_thread_begin", "ompt_callback_thread_end",
                  "ompt_callback_parallel_begin", "ompt_callback_parallel_end",
                  "ompt_callback_implicit_task", "ompt_callback_work", "ompt_callback_masked",
                  "ompt_callback_sync_region", "ompt_callback_sync_region_wait",
                  "ompt_callback_mutex_acquire", "ompt_callback_mutex_acquired",
                  "ompt_callback_mutex_released", "ompt_callback_reduction",
                  "ompt_callback_task_create", "ompt_callback_task_schedule"]
HOST_CALLBACKS_ANY = HOST_CALLBACKS + ["ompt_callback_nest_lock", "ompt_callback_dispatch",
                                       "ompt_callback_lock_init", "ompt_callback_lock_destroy",
                                       "ompt_callback_dependences", "ompt_callback_task_dependence",
                                       "ompt_callback_flush", "ompt_callback_cancel"]
TARGET_CALLBACKS = ["ompt_callback_target", "ompt_callback_target_emi",
                    "ompt_callback_target_data_op", "ompt_callback_target_data_op_emi",
                    "ompt_callback_target_submit", "ompt_callback_target_submit_emi",
                    "ompt_callback_target_map", "ompt_callback_target_map_emi"]
OMPT_SET_NEVER = 1

BASE_ENV = {"OMP_WAIT_POLICY": "passive"}


MARKS = h.source_marks(SRC, "MARK")


# ---------------------------------------------------------------- running
class Runner:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="tracer-test-host-states-")
        self.plain = {}
        self.shown = []

    def cleanup(self):
        if os.environ.get("TEST_KEEP"):
            print("kept", self.tmp)
            return
        shutil.rmtree(self.tmp, ignore_errors=True)

    def args(self, case):
        return [case, str(COUNTS_RC)] if case == "counts" else [case]

    def run(self, c, case, label, env=None, archive=True):
        """Runs the case untraced (once per case) and traced with env;
        checks exit code, stdout and the archive's basics (archive=False: that
        no archive was written). The Trace or None, and the run."""
        tag = "[%s/%s]" % (case, label)
        want_rc = COUNTS_RC if case == "counts" else 0
        cmd = [BIN] + self.args(case)
        if case not in self.plain:
            cwd = os.path.join(self.tmp, case + "-plain")
            os.mkdir(cwd)
            self.plain[case] = h.run(cmd, cwd, traced=False, extra_env=BASE_ENV)
        r = types.SimpleNamespace(plain=self.plain[case], trace=None)
        r.cwd = os.path.join(self.tmp, "%s-%s-cwd" % (case, label))
        r.output = os.path.join(self.tmp, "%s-%s-trace" % (case, label))
        os.mkdir(r.cwd)
        r.traced = h.run(cmd, r.cwd, traced=True, output=r.output,
                         extra_env=dict(BASE_ENV, **(env or {})))
        n = len(c.failures)
        sub = h.Checker(tag)
        if archive:
            t = h.check_run_basics(sub, r, want_rc, STDOUT[case])
        else:
            t = None
            sub.equal(r.plain.returncode, want_rc, "exit code without tracer")
            sub.equal(r.traced.returncode, want_rc, "exit code with tracer")
            sub.equal(r.plain.stdout.decode(), STDOUT[case], "stdout without tracer")
            sub.equal(r.traced.stdout.decode(), r.plain.stdout.decode(), "stdout with tracer")
            err = r.traced.stderr.decode(errors="replace")
            for marker in h.SANITIZER_MARKERS:
                sub.check(marker not in err, "sanitizer report in traced stderr: %r" % marker)
            sub.check(not os.listdir(r.cwd), "files written into the cwd: %r" % os.listdir(r.cwd))
            sub.check(not os.path.exists(os.path.join(r.output, "traces.otf2")),
                      "an archive was written although nothing should have been recorded (%r)"
                      % (os.listdir(r.output) if os.path.isdir(r.output) else None,))
        if t is not None:
            sub.extend(t.check_timestamps(), "timestamps")
            sub.extend(t.check_nesting(), "nesting")
            # machine mode: the regions libomp ends only at its shutdown,
            # after tracer's end, checked in check_machine_case
            inc = [] if label == "machine" else t.incomplete_leaves()
            sub.check(not inc, "Leaves with incomplete=1: %r"
                      % [(loc.name, ev.region.canonical_name) for loc, ev in inc][:10])
            pe = t.events_of(otf2.events.ProgramEnd)
            if sub.equal(len(pe), 1, "ProgramEnd events"):
                sub.equal(pe[0][1].exit_status, want_rc, "ProgramEnd exit status")
        for f in sub.failures:
            c.check(False, "%s %s" % (tag, f))
        if len(c.failures) > n:
            self.show(tag, r)
        r.tag = tag
        return t, r

    def show(self, tag, r):
        for label, p in (("plain", r.plain), ("traced", r.traced)):
            print("--- %s %s run: rc=%d" % (tag, label, p.returncode))
            print("stdout:", p.stdout.decode(errors="replace"))
            print("stderr:", p.stderr.decode(errors="replace")[-3000:])


# ---------------------------------------------------------------- helpers
class Iv:
    """One region instance on one location."""
    __slots__ = ("cn", "name", "enter", "leave", "anc", "start", "end")

    def __init__(self, enter, anc):
        self.enter, self.leave, self.anc = enter, None, anc
        self.cn, self.name = enter.region.canonical_name, enter.region.name
        self.start, self.end = enter.time, None

    def dur(self):
        return (self.end - self.start) if self.end is not None else 0


def regions_of(t, loc):
    """[Iv] of a location in Enter order, with the canonical names of the
    regions open around each."""
    out, stack = [], []
    for ev in t.events[loc]:
        if isinstance(ev, otf2.events.Enter):
            iv = Iv(ev, [s.cn for s in stack])
            stack.append(iv)
            out.append(iv)
        elif isinstance(ev, otf2.events.Leave) and stack:
            iv = stack.pop()
            iv.leave, iv.end = ev, ev.time
    return out


def metric_series(t, loc):
    """[(time, {member name: value})] of the Metric events of a location."""
    out = []
    for ev in t.events[loc]:
        if isinstance(ev, otf2.events.Metric):
            try:
                members = ev.metric.members
            except AttributeError:
                members = ev.metric.metric_class.members
            out.append((ev.time, {m.name: v for m, v in zip(members, ev.values)}))
    return out


def overlap(a0, a1, b0, b1):
    return max(0, min(a1, b1) - max(a0, b0))


def line_of(name, canonical):
    m = re.fullmatch(re.escape(canonical) + r" \((.+):(\d+)\)", name)
    return (m.group(1), int(m.group(2))) if m else (None, None)


def master_of(t):
    for loc in t.cpu_threads():
        if loc.name == "host thread 0":
            return loc
    return None


def instances(c, tag, t, ivs, master, parallel_cn, start_cn):
    """The master's parallel region instances [(start, end, region)] and, for
    each, the set of locations whose `parallel_cn` region begins in it. An
    instance starts at the master's `start_cn` region before its parallel
    one (the fork's overhead / the raw parallel begin), else at the parallel
    Enter."""
    mine = ivs[master]
    insts = []
    for i, iv in enumerate(mine):
        if iv.cn != parallel_cn:
            continue
        start = iv.start
        if start_cn is not None:
            for prev in reversed(mine[:i]):
                if prev.cn == start_cn and prev.start <= iv.start:
                    start = prev.start
                    break
                if prev.cn == parallel_cn:
                    break
        insts.append([start, iv.end if iv.end is not None else iv.start, iv.enter.region, set()])
    for loc, lst in ivs.items():
        for iv in lst:
            if iv.cn != parallel_cn:
                continue
            hit = [k for k in insts if k[0] <= iv.start <= k[1]]
            if c.check(hit, "%s %s: %s Enter at %d lies in no parallel region instance of %s"
                       % (tag, loc.name, parallel_cn, iv.start, master.name)):
                k = hit[-1]
                c.check(iv.enter.region == k[2], "%s %s: team thread's %r is not the region of "
                        "its instance on %s (%r)" % (tag, loc.name, iv.name, master.name, k[2].name))
                c.check(loc not in k[3], "%s %s entered one parallel region instance twice"
                        % (tag, loc.name))
                k[3].add(loc)
    return insts


# ---------------------------------------------------------------- common checks
def check_metric_defs(c, tag, t, want):
    members = [m for m in t.definitions.metric_members if m.name in ("OMP work", "OMP wait")]
    names = sorted(m.name for m in members)
    if not want:
        c.equal(names, [], "%s OMP work / OMP wait metric members defined" % tag)
        n = sum(1 for loc in t.events for _, vals in metric_series(t, loc)
                if "OMP work" in vals or "OMP wait" in vals)
        c.equal(n, 0, "%s Metric events of OMP work / OMP wait" % tag)
        return
    c.equal(names, ["OMP wait", "OMP work"], "%s metric members" % tag)
    for m in members:
        c.equal(str(m.unit), "ns", "%s unit of metric %r" % (tag, m.name))
        c.equal(m.metric_mode, MetricMode.ACCUMULATED_START, "%s mode of metric %r" % (tag, m.name))
        c.equal(m.value_type, Type.UINT64, "%s value type of metric %r" % (tag, m.name))


def check_metrics(c, tag, t, ivs, parallel_of, wait_of, nested_task_cn=None):
    """OMP work / OMP wait against the regions. parallel_of(iv), wait_of(iv):
    whether a region instance counts as parallel / as a wait state. With
    nested_task_cn, a wait may exclude the time of such regions nested in it
    (a task run while waiting): either reading is accepted if it is used for
    every value."""
    finals = {}
    for loc, lst in ivs.items():
        pars = [iv for iv in lst if parallel_of(iv)]
        series = metric_series(t, loc)
        series = [(tm, v) for tm, v in series if "OMP work" in v or "OMP wait" in v]
        if not pars:
            c.check(not series, "%s %s: OMP work/wait values on a thread with no parallel region"
                    % (tag, loc.name))
            continue
        if not c.check(series, "%s %s: no OMP work / OMP wait Metric event" % (tag, loc.name)):
            continue
        work = [(tm, v["OMP work"]) for tm, v in series if "OMP work" in v]
        wait = [(tm, v["OMP wait"]) for tm, v in series if "OMP wait" in v]
        c.check(len(work) >= len(pars) and len(wait) >= len(pars),
                "%s %s: %d OMP work and %d OMP wait values for %d implicit tasks (want one at the "
                "end of each)" % (tag, loc.name, len(work), len(wait), len(pars)))
        for name, vals in (("OMP work", work), ("OMP wait", wait)):
            c.check(all(b[1] >= a[1] for a, b in zip(vals, vals[1:])),
                    "%s %s: %s decreases: %r" % (tag, loc.name, name, [v for _, v in vals][:20]))
        metric_times = {tm for tm, _ in series}
        missing = [iv.end for iv in pars if iv.end is not None and iv.end not in metric_times]
        c.check(not missing, "%s %s: no OMP work/wait value at the end of %d of %d implicit "
                "tasks (e.g. at %r)" % (tag, loc.name, len(missing), len(pars), missing[:3]))
        waits = [iv for iv in lst if wait_of(iv) and iv.end is not None]
        nested = collections.defaultdict(int)
        if nested_task_cn:
            for iv in lst:
                if iv.cn == nested_task_cn and iv.end is not None:
                    for w in waits:
                        if w.start <= iv.start and iv.end <= w.end:
                            nested[id(w)] += iv.dur()
                            break
        readings = ["inclusive", "exclusive"] if nested else ["inclusive"]
        ok_reading = None
        errors = {}
        for reading in readings:
            errs = []
            for tm, v in series:
                if "OMP work" not in v or "OMP wait" not in v:
                    continue
                want_wait = sum(w.dur() - (nested[id(w)] if reading == "exclusive" else 0)
                                for w in waits if w.end <= tm)
                want_par = sum(p.dur() for p in pars if p.end is not None and p.end <= tm)
                got_wait, got_work = v["OMP wait"], v["OMP work"]
                tol = 1000 + want_par // 1000
                if abs(got_wait - want_wait) > tol:
                    errs.append("at %d OMP wait %d, the wait-state regions ended by then %d"
                                % (tm, got_wait, want_wait))
                if abs(got_work + got_wait - want_par) > tol:
                    errs.append("at %d OMP work + OMP wait = %d + %d = %d, the parallel regions "
                                "ended by then %d" % (tm, got_work, got_wait, got_work + got_wait,
                                                      want_par))
            errors[reading] = errs
            if not errs:
                ok_reading = reading
                break
        if ok_reading == "exclusive":
            c.note("%s %s: OMP wait excludes the time of %s regions run inside a wait state"
                   % (tag, loc.name, nested_task_cn))
        if ok_reading is None:
            errs = errors["inclusive"]
            c.check(False, "%s %s: %d metric value(s) disagree with the regions, e.g. %s"
                    % (tag, loc.name, len(errs), "; ".join(errs[:3])))
        finals[loc] = (work[-1][1] if work else 0, wait[-1][1] if wait else 0)
    return finals


def check_user(c, tag, t, case, ivs):
    """Contract checks of a user-mode archive. Returns (master, instances)."""
    for reg in t.regions:
        cn = reg.canonical_name
        if not c.check(cn in USER_ROLES, "%s unexpected region %r (%r) in user mode"
                       % (tag, reg.name, cn)):
            continue
        c.equal(reg.region_role, USER_ROLES[cn], "%s role of region %r" % (tag, reg.name))
        c.equal(reg.paradigm, Paradigm.OPENMP, "%s paradigm of region %r" % (tag, reg.name))
        if cn.startswith("<OMP-"):
            c.equal(reg.name, cn, "%s name of region %r" % (tag, cn))
    master = master_of(t)
    if not c.check(master is not None, "%s no location 'host thread 0'" % tag):
        return None, []
    for loc, lst in ivs.items():
        for iv in lst:
            inside = "parallel" in iv.anc
            if iv.cn in OUTSIDE_PARALLEL:
                c.check(not inside, "%s %s: %s inside a parallel region (%r)"
                        % (tag, loc.name, iv.cn, iv.anc))
            else:
                c.check(inside, "%s %s: %s outside any parallel region (open: %r)"
                        % (tag, loc.name, iv.cn, iv.anc))
            # codeptr_ra where the runtime always gives one (LLVM passes
            # none for a worker's implicit barrier or a tree reduction)
            if iv.cn in ("parallel", "loop", "single", "critical", "ordered", "task create",
                         "<OMP-explicit_barrier>", "<OMP-critical_section_wait>",
                         "<OMP-ordered_section_wait>", "<OMP-lock_wait>", "<OMP-taskwait>"):
                c.check(A(iv.enter, "codeptr_ra") not in (None, 0), "%s %s: %s Enter with codeptr_ra %r"
                        % (tag, loc.name, iv.cn, A(iv.enter, "codeptr_ra")))
            if iv.cn == "task create":
                c.check(iv.end == iv.start, "%s %s: task create is not zero-length" % (tag, loc.name))
                c.check(A(iv.enter, "task_id") is not None, "%s %s: task create without task_id"
                        % (tag, loc.name))
            if iv.cn == "<OMP-overhead>":
                c.check(loc == master, "%s %s: <OMP-overhead> on a thread that encountered no "
                        "parallel construct" % (tag, loc.name))
            if iv.cn == "<OMP-idle>":
                c.check(loc != master, "%s %s: <OMP-idle> on the initial thread" % (tag, loc.name))
        c.check(not any(iv.cn.startswith("ompt ") for iv in lst), "%s %s: machine-mode region in "
                "user mode" % (tag, loc.name))

    mark, teams = PARALLEL[case]
    # parallel regions: one per construct, named after its line
    pars = [r for r in t.regions if r.canonical_name == "parallel"]
    if c.equal(len(pars), 1, "%s parallel regions defined (one construct)" % tag):
        f, line = line_of(pars[0].name, "parallel")
        c.check(f == os.path.basename(SRC) and line == MARKS[mark],
                "%s parallel region name %r, want 'parallel (%s:%d)'"
                % (tag, pars[0].name, os.path.basename(SRC), MARKS[mark]))
    for cn, spec in NAMED_LINES.items():
        if isinstance(spec, dict):
            if case not in spec:
                continue
            want_lines = [MARKS[m] for m in spec[case]]
        else:
            if spec[0] != case:
                continue
            want_lines = [MARKS[m] for m in spec[1]]
        for reg in t.regions:
            if reg.canonical_name == cn:
                f, line = line_of(reg.name, cn)
                c.check(f == os.path.basename(SRC) and line in want_lines,
                        "%s region name %r, want '%s (%s:%s)'" % (tag, reg.name, cn,
                                                                  os.path.basename(SRC),
                                                                  "|".join(map(str, want_lines))))
    insts = instances(c, tag, t, ivs, master, "parallel", "<OMP-overhead>")
    c.equal([len(k[3]) for k in insts], teams,
            "%s threads entering each parallel region instance (team sizes)" % tag)
    c.check(all(master in k[3] for k in insts), "%s host thread 0 is not in every team" % tag)
    # overhead twice per instance on the master; idle = implicit tasks + 1 per worker
    n_over = sum(1 for iv in ivs[master] if iv.cn == "<OMP-overhead>")
    c.equal(n_over, 2 * len(insts), "%s <OMP-overhead> regions on %s (fork and join of each "
            "parallel region)" % (tag, master.name))
    for loc, lst in ivs.items():
        if loc == master:
            continue
        n_par = sum(1 for iv in lst if iv.cn == "parallel")
        n_idle = sum(1 for iv in lst if iv.cn == "<OMP-idle>")
        if n_par:
            c.equal(n_idle, n_par + 1, "%s %s: <OMP-idle> regions (before, between and after its "
                    "%d implicit tasks)" % (tag, loc.name, n_par))
    check_metric_defs(c, tag, t, True)
    return master, insts


def count(ivs, cn, loc=None):
    return sum(1 for l, lst in ivs.items() if loc in (None, l) for iv in lst if iv.cn == cn)


def total(ivs, cn, loc):
    return sum(iv.dur() for iv in ivs[loc] if iv.cn == cn)


def team_locs(ivs):
    return [loc for loc, lst in ivs.items() if any(iv.cn == "parallel" for iv in lst)]


# ---------------------------------------------------------------- case checks (user mode)
def check_imbalance(c, tag, t, ivs, master, insts, finals):
    workers = [l for l in team_locs(ivs) if l != master]
    nw = len(workers)
    if not c.equal(nw, IMB_NT - 1, "%s worker threads" % tag):
        return
    barrier = collections.defaultdict(int)
    par = collections.defaultdict(int)
    for s, e, _, members in insts:
        for loc in members:
            for iv in ivs[loc]:
                if iv.end is None:
                    continue
                if iv.cn == "<OMP-implicit_barrier>":
                    barrier[loc] += overlap(iv.start, iv.end, s, e)
                elif iv.cn == "parallel":
                    par[loc] += overlap(iv.start, iv.end, s, e)
    work = {loc: par[loc] - barrier[loc] for loc in [master] + workers}
    mean_w_work = sum(work[l] for l in workers) / float(nw)
    mean_w_bar = sum(barrier[l] for l in workers) / float(nw)
    extra = work[master] - mean_w_work
    msg = ("(ns within the %d regions: thread 0 work %d barrier %d; workers work %r barrier %r)"
           % (len(insts), work[master], barrier[master], [work[l] for l in workers],
              [barrier[l] for l in workers]))
    for loc in workers:
        c.check(barrier[loc] > barrier[master], "%s %s waits no longer in <OMP-implicit_barrier> "
                "than thread 0, which does 3x the work %s" % (tag, loc.name, msg))
    for loc in workers:
        c.check(work[master] > work[loc], "%s thread 0, which does 3x the work, works no longer "
                "than %s %s" % (tag, loc.name, msg))
    c.check(mean_w_bar >= 0.5 * extra, "%s the workers' <OMP-implicit_barrier> time is < 50%% of "
            "thread 0's extra work %s" % (tag, msg))
    c.note("%s %s" % (tag, msg))
    if master in finals and all(w in finals for w in workers):
        for w in workers:
            c.check(finals[master][0] > finals[w][0], "%s OMP work: thread 0 %d <= %s %d"
                    % (tag, finals[master][0], w.name, finals[w][0]))
            c.check(finals[w][1] > finals[master][1], "%s OMP wait: %s %d <= thread 0 %d"
                    % (tag, w.name, finals[w][1], finals[master][1]))


def check_barrier(c, tag, t, ivs, master, insts, finals):
    locs = team_locs(ivs)
    c.equal(len(locs), 4, "%s threads with parallel regions" % tag)
    for loc in locs:
        c.equal(count(ivs, "<OMP-explicit_barrier>", loc), BAR_R,
                "%s %s: <OMP-explicit_barrier> regions (one per parallel region)" % (tag, loc.name))
        c.equal(count(ivs, "<OMP-implicit_barrier>", loc), BAR_R,
                "%s %s: <OMP-implicit_barrier> regions (end of each parallel region)" % (tag, loc.name))
    waited = [loc for loc in locs if total(ivs, "<OMP-explicit_barrier>", loc) > 0]
    c.check(len(waited) >= 3, "%s explicit-barrier wait > 0 on %d threads only" % (tag, len(waited)))


def check_mutex(c, tag, ivs, wait_cn, held_cn, per_thread, min_wait_ns=100000, inside=None):
    locs = team_locs(ivs)
    if inside:
        for loc in locs:
            for iv in ivs[loc]:
                if iv.cn in (wait_cn, held_cn):
                    c.check(inside in iv.anc, "%s %s: %s not inside a %s region (open: %r)"
                            % (tag, loc.name, iv.cn, inside, iv.anc))
    c.equal(len(locs), 4, "%s threads with parallel regions" % tag)
    for loc in locs:
        c.equal(count(ivs, wait_cn, loc), per_thread, "%s %s: %s regions (one per entry)"
                % (tag, loc.name, wait_cn))
        if held_cn:
            c.equal(count(ivs, held_cn, loc), per_thread, "%s %s: %s held regions (one per entry)"
                    % (tag, loc.name, held_cn))
            lst = ivs[loc]
            for i, iv in enumerate(lst):
                if iv.cn != wait_cn:
                    continue
                nxt = lst[i + 1] if i + 1 < len(lst) else None
                if c.check(nxt is not None and nxt.cn == held_cn, "%s %s: %s not followed by %s "
                           "(next: %r)" % (tag, loc.name, wait_cn, held_cn, nxt and nxt.cn)):
                    c.check(iv.end is not None and nxt.start >= iv.end and nxt.anc == iv.anc,
                            "%s %s: %s does not begin where %s ends" % (tag, loc.name, held_cn,
                                                                       wait_cn))
    waits = {loc: total(ivs, wait_cn, loc) for loc in locs}
    contended = [loc for loc in locs if waits[loc] >= min_wait_ns]
    c.check(len(contended) >= 3, "%s %s: >= %d ns of waiting on %d threads only (%r)"
            % (tag, wait_cn, min_wait_ns, len(contended), sorted(waits.values())))
    if held_cn:
        held = sum(total(ivs, held_cn, loc) for loc in locs)
        c.check(sum(waits.values()) >= 0.25 * held, "%s total %s %d ns < 25%% of the %s held "
                "time %d ns (4 threads contend)" % (tag, wait_cn, sum(waits.values()), held_cn, held))
    else:
        for cn in ("critical", "ordered"):
            c.equal(count(ivs, cn), 0, "%s %s regions (locks are not regions)" % (tag, cn))


def check_reduction(c, tag, t, ivs, master, insts, finals):
    n = count(ivs, "<OMP-reduction>")
    c.check(n >= 1, "%s no <OMP-reduction> region" % tag)
    c.check(count(ivs, "<OMP-reduction>", master) >= 1,
            "%s no <OMP-reduction> on host thread 0 (the root of the tree reduction)" % tag)
    c.equal(count(ivs, "loop"), 8, "%s loop regions (every thread of the team of 8)" % tag)


def check_counts(c, tag, t, ivs, master, insts, finals):
    per_inst_loop, per_inst_single = [], []
    for s, e, _, members in insts:
        nl = ns = 0
        for loc in members:
            for iv in ivs[loc]:
                if s <= iv.start <= e:
                    nl += iv.cn == "loop"
                    ns += iv.cn == "single"
        per_inst_loop.append(nl)
        per_inst_single.append(ns)
    c.equal(per_inst_loop, CNT_TEAMS, "%s loop regions per parallel region instance (one per "
            "thread of the team)" % tag)
    c.check(per_inst_single == [1] * CNT_K or per_inst_single == CNT_TEAMS,
            "%s single regions per parallel region instance %r: want 1 each (the executing "
            "thread) or the team size each (every thread)" % (tag, per_inst_single))
    c.equal(count(ivs, "<OMP-implicit_barrier>"), 3 * sum(CNT_TEAMS),
            "%s <OMP-implicit_barrier> regions (loop, single and parallel end, per thread)" % tag)
    c.equal(count(ivs, "parallel", master), CNT_K, "%s parallel regions on host thread 0" % tag)


def check_tasks(c, tag, t, ivs, master, insts, finals):
    c.equal(count(ivs, "task"), TASK_T, "%s task regions" % tag)
    c.equal(count(ivs, "task create"), TASK_T, "%s task create regions" % tag)
    ids = [A(iv.enter, "task_id") for lst in ivs.values() for iv in lst if iv.cn == "task create"]
    c.equal(len(set(ids)), len(ids), "%s distinct task_id of task create" % tag)
    c.equal(count(ivs, "<OMP-taskwait>"), 1, "%s <OMP-taskwait> regions" % tag)
    creator = [loc for loc, lst in ivs.items() if any(iv.cn == "task create" for iv in lst)]
    if c.equal(len(creator), 1, "%s threads creating tasks" % tag):
        c.equal(count(ivs, "<OMP-taskwait>", creator[0]), 1,
                "%s <OMP-taskwait> on the creating thread" % tag)
        c.equal(count(ivs, "single", creator[0]) >= 1, True,
                "%s the creating thread is in a single region" % tag)


USER_CASE_CHECKS = {
    "imbalance": check_imbalance,
    "barrier": check_barrier,
    "critical": lambda c, tag, t, ivs, m, i, f: check_mutex(c, tag, ivs, "<OMP-critical_section_wait>",
                                                             "critical", CRIT_N),
    "lock": lambda c, tag, t, ivs, m, i, f: check_mutex(c, tag, ivs, "<OMP-lock_wait>", None, LOCK_N),
    "ordered": lambda c, tag, t, ivs, m, i, f: check_mutex(c, tag, ivs, "<OMP-ordered_section_wait>",
                                                            "ordered", ORD_N // 4, inside="loop"),
    "reduction": check_reduction,
    "counts": check_counts,
    "tasks": check_tasks,
}


def user_counts(ivs):
    return collections.Counter(iv.cn for lst in ivs.values() for iv in lst)


def check_user_case(c, case, t, tag):
    ivs = {loc: regions_of(t, loc) for loc in t.cpu_threads()}
    master, insts = check_user(c, tag, t, case, ivs)
    if master is None:
        return None
    finals = check_metrics(c, tag, t, ivs, lambda iv: iv.cn == "parallel",
                           lambda iv: iv.cn in WAIT_STATES,
                           nested_task_cn="task" if case == "tasks" else None)
    USER_CASE_CHECKS[case](c, tag, t, ivs, master, insts, finals)
    return user_counts(ivs)


# ---------------------------------------------------------------- machine mode
def check_machine_case(c, case, t, tag):
    for reg in t.regions:
        cn = reg.canonical_name
        if not c.check(cn in MACHINE, "%s unexpected region %r (%r) in machine mode"
                       % (tag, reg.name, cn)):
            continue
        c.equal(reg.region_role, RR.ARTIFICIAL, "%s role of region %r" % (tag, reg.name))
        c.equal(reg.paradigm, Paradigm.OPENMP, "%s paradigm of region %r" % (tag, reg.name))
    ivs = {loc: regions_of(t, loc) for loc in t.cpu_threads()}
    master = master_of(t)
    if not c.check(master is not None, "%s no location 'host thread 0'" % tag):
        return None
    raw = collections.Counter()
    for loc, lst in ivs.items():
        threads = [iv for iv in lst if iv.cn == "ompt thread"]
        if c.equal(len(threads), 1, "%s %s: ompt thread regions" % (tag, loc.name)):
            c.check(lst[0] is threads[0] and all(iv.anc[:1] == ["ompt thread"] for iv in lst[1:]),
                    "%s %s: ompt thread does not enclose the thread's other regions" % (tag, loc.name))
            c.equal(A(threads[0].enter, "omp_kind"),
                    THREAD_INITIAL if loc == master else THREAD_WORKER,
                    "%s %s: ompt thread omp_kind (ompt_thread_t)" % (tag, loc.name))
        # Open at the end (docs: the recording ends at exit, before libomp
        # shuts down): exactly the thread, its last implicit task (the
        # initial task on host thread 0) and, on a worker, the join
        # barrier it waits in; nothing else.
        open_at_end = [iv for iv in lst if iv.leave is not None and A(iv.leave, "incomplete") == 1]
        want_open = ["ompt thread", "ompt implicit_task"]
        if loc != master:
            want_open += ["ompt sync_region", "ompt sync_region_wait"]
        c.equal(sorted(iv.cn for iv in open_at_end), sorted(want_open),
                "%s %s: regions still open when the recording ended (incomplete=1)" % (tag, loc.name))
        for iv in open_at_end:
            kind = A(iv.enter, "omp_kind") or 0
            if iv.cn == "ompt implicit_task":
                c.equal(bool(kind & TASK_INITIAL), loc == master,
                        "%s %s: the implicit task open at the end is the initial one (omp_kind %r)"
                        % (tag, loc.name, kind))
            elif iv.cn in ("ompt sync_region", "ompt sync_region_wait"):
                c.equal(kind, 9, "%s %s: %s open at the end is not the join barrier "
                        "(barrier_implicit_parallel)" % (tag, loc.name, iv.cn))
                c.check(iv.end == lst[0].end, "%s %s: %s open at the end does not end with the "
                        "thread" % (tag, loc.name, iv.cn))
        for iv in lst:
            missing = [a for a in MACHINE_ATTRS[1:] if A(iv.enter, a) is None]
            c.check(not missing, "%s %s: %s Enter lacks %r" % (tag, loc.name, iv.cn, missing))
            kind = A(iv.enter, "omp_kind")
            if iv.cn in MACHINE_CODEPTR or (iv.cn, kind) in MACHINE_CODEPTR:
                c.check(A(iv.enter, "codeptr_ra") not in (None, 0), "%s %s: %s (omp_kind %r) Enter "
                        "with codeptr_ra %r" % (tag, loc.name, iv.cn, kind, A(iv.enter, "codeptr_ra")))
            if iv.cn in MACHINE_POINTS:
                c.check(iv.end == iv.start, "%s %s: %s is not zero-length" % (tag, loc.name, iv.cn))
            c.check(not iv.cn.startswith("<OMP-"), "%s %s: user-mode region %s in machine mode"
                    % (tag, loc.name, iv.cn))
            raw[(iv.cn, A(iv.enter, "omp_kind"))] += 1
    # parallel ids: ompt parallel (master) -> implicit tasks with the same omp_id
    mark, teams = PARALLEL[case]
    pars = [iv for iv in ivs[master] if iv.cn == "ompt parallel"]
    c.equal([A(iv.enter, "omp_arg") for iv in pars], teams,
            "%s omp_arg (requested team size) of ompt parallel on host thread 0" % tag)
    cps = {A(iv.enter, "codeptr_ra") for iv in pars}
    c.check(len(cps) == 1 and 0 not in cps, "%s codeptr_ra of ompt parallel: %r (one construct)"
            % (tag, cps))
    ids = [A(iv.enter, "omp_id") for iv in pars]
    c.check(len(set(ids)) == len(ids) and 0 not in ids, "%s omp_id of ompt parallel not unique: %r"
            % (tag, ids))
    team_of = collections.defaultdict(set)
    for loc, lst in ivs.items():
        for iv in lst:
            if iv.cn != "ompt implicit_task":
                continue
            kind = A(iv.enter, "omp_kind") or 0
            if kind & TASK_INITIAL:
                c.check(loc == master, "%s %s: initial implicit task on a worker" % (tag, loc.name))
                continue
            c.check(kind & TASK_IMPLICIT, "%s %s: implicit task omp_kind %r" % (tag, loc.name, kind))
            pid = A(iv.enter, "omp_id")
            c.check(pid in ids, "%s %s: implicit task omp_id %r is no ompt parallel's" %
                    (tag, loc.name, pid))
            c.check(loc not in team_of[pid], "%s %s: two implicit tasks of parallel %r"
                    % (tag, loc.name, pid))
            team_of[pid].add(loc)
            want = teams[ids.index(pid)] if pid in ids else None
            c.equal(A(iv.enter, "omp_arg"), want, "%s %s: implicit task omp_arg (team size)"
                    % (tag, loc.name))
    c.equal([len(team_of[i]) for i in ids], teams,
            "%s threads with an implicit task of each ompt parallel (team sizes)" % tag)
    # metrics in machine mode: the raw waits and implicit tasks
    check_metrics(c, tag, t, ivs,
                  lambda iv: iv.cn == "ompt implicit_task" and
                  not ((A(iv.enter, "omp_kind") or 0) & TASK_INITIAL),
                  lambda iv: (iv.cn, A(iv.enter, "omp_kind")) in MACHINE_WAITS)
    check_metric_defs(c, tag, t, True)
    # per case
    if case == "imbalance":
        c.equal(raw[("ompt sync_region_wait", 9)], IMB_NT * IMB_R,
                "%s ompt sync_region_wait of kind barrier_implicit_parallel" % tag)
    elif case == "barrier":
        c.equal(raw[("ompt sync_region_wait", 3)], 4 * BAR_R,
                "%s ompt sync_region_wait of kind barrier_explicit" % tag)
    elif case == "critical":
        c.equal(raw[("ompt mutex_wait", MUTEX_CRITICAL)], 4 * CRIT_N, "%s ompt mutex_wait (critical)" % tag)
        c.equal(raw[("ompt mutex_held", MUTEX_CRITICAL)], 4 * CRIT_N, "%s ompt mutex_held (critical)" % tag)
    elif case == "lock":
        c.equal(raw[("ompt mutex_wait", 1)], 4 * LOCK_N, "%s ompt mutex_wait (lock)" % tag)
        c.equal(raw[("ompt mutex_held", 1)], 4 * LOCK_N, "%s ompt mutex_held (lock)" % tag)
    elif case == "ordered":
        c.equal(raw[("ompt mutex_wait", MUTEX_ORDERED)], ORD_N, "%s ompt mutex_wait (ordered)" % tag)
        c.equal(raw[("ompt mutex_held", MUTEX_ORDERED)], ORD_N, "%s ompt mutex_held (ordered)" % tag)
    elif case == "reduction":
        c.check(sum(n for (cn, _), n in raw.items() if cn == "ompt reduction") >= 1,
                "%s no ompt reduction region" % tag)
    elif case == "counts":
        c.equal(sum(n for (cn, k), n in raw.items() if cn == "ompt work" and k in WORK_LOOPS),
                sum(CNT_TEAMS), "%s ompt work of loop kinds" % tag)
        c.equal(raw[("ompt work", WORK_SINGLE_EXECUTOR)], CNT_K, "%s ompt work single_executor" % tag)
        c.equal(raw[("ompt work", WORK_SINGLE_OTHER)], sum(CNT_TEAMS) - CNT_K,
                "%s ompt work single_other" % tag)
    elif case == "tasks":
        c.equal(sum(n for (cn, _), n in raw.items() if cn == "ompt task_create"), TASK_T,
                "%s ompt task_create" % tag)
        c.equal(sum(n for (cn, _), n in raw.items() if cn == "ompt task_schedule"), 2 * TASK_T,
                "%s ompt task_schedule (to and from each task)" % tag)
        c.equal(raw[("ompt sync_region_wait", SYNC_TASKWAIT)], 1, "%s ompt sync_region_wait taskwait" % tag)
    return raw


def compare_modes(c, case, user, raw):
    """The documented mapping: user-mode region counts from the raw records."""
    tag = "[%s/user vs machine]" % case

    def rawsum(cn, kinds=None):
        return sum(n for (name, k), n in raw.items() if name == cn and (kinds is None or k in kinds))
    want = {
        "parallel": sum(n for (name, k), n in raw.items()
                        if name == "ompt implicit_task" and k is not None and k & TASK_IMPLICIT),
        "<OMP-implicit_barrier>": rawsum("ompt sync_region_wait", SYNC_IMPLICIT),
        "<OMP-explicit_barrier>": rawsum("ompt sync_region_wait", SYNC_EXPLICIT),
        "<OMP-taskwait>": rawsum("ompt sync_region_wait", {SYNC_TASKWAIT}),
        "<OMP-taskgroup>": rawsum("ompt sync_region_wait", {SYNC_TASKGROUP}),
        "<OMP-lock_wait>": rawsum("ompt mutex_wait", MUTEX_LOCKS),
        "<OMP-critical_section_wait>": rawsum("ompt mutex_wait", {MUTEX_CRITICAL}),
        "<OMP-ordered_section_wait>": rawsum("ompt mutex_wait", {MUTEX_ORDERED}),
        "<OMP-atomic_wait>": rawsum("ompt mutex_wait", {MUTEX_ATOMIC}),
        "critical": rawsum("ompt mutex_held", {MUTEX_CRITICAL}),
        "ordered": rawsum("ompt mutex_held", {MUTEX_ORDERED}),
        "loop": rawsum("ompt work", WORK_LOOPS),
        "task create": rawsum("ompt task_create"),
        "<OMP-reduction>": rawsum("ompt reduction"),
    }
    for cn, n in want.items():
        c.equal(user.get(cn, 0), n, "%s %s regions vs the machine-mode records" % (tag, cn))
    single = user.get("single", 0)
    ex, other = rawsum("ompt work", {WORK_SINGLE_EXECUTOR}), rawsum("ompt work", {WORK_SINGLE_OTHER})
    c.check(single in (ex, ex + other), "%s single regions %d vs ompt work single_executor %d "
            "(+ single_other %d)" % (tag, single, ex, other))


# ---------------------------------------------------------------- host states off
def registrations(p):
    out = {}
    for line in p.stderr.decode(errors="replace").splitlines():
        m = re.fullmatch(r"registration (\S+) (-?\d+)", line.strip())
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def check_registrations(c, tag, regs, host, target):
    if not c.check(regs, "%s the program printed no OMPT registration of tracer" % tag):
        return
    for cb in HOST_CALLBACKS if host else HOST_CALLBACKS_ANY:
        if host:
            c.check(regs.get(cb, 0) > OMPT_SET_NEVER, "%s %s not registered (result %r)"
                    % (tag, cb, regs.get(cb)))
        else:
            c.check(cb not in regs, "%s %s registered with host states off" % (tag, cb))
    if not target:
        bad = [cb for cb in TARGET_CALLBACKS if cb in regs]
        c.check(not bad, "%s target callbacks registered without their classes: %r" % (tag, bad))


def check_off(c, t, tag):
    bad = sorted({r.name for r in t.regions if r.canonical_name in USER_ROLES or
                  r.canonical_name.startswith(("ompt ", "<OMP-")) or
                  r.name.startswith(("ompt ", "<OMP-"))})
    c.check(not bad, "%s host-state regions defined with host states off: %r" % (tag, bad))
    n = sum(1 for _, ev in t.enters() if ev.region.paradigm == Paradigm.OPENMP)
    c.equal(n, 0, "%s Enter events of OpenMP regions" % tag)
    check_metric_defs(c, tag, t, False)


# ---------------------------------------------------------------- main
def main():
    c = h.Checker("host_states")
    r = Runner()
    try:
        for case in CASES:
            t, _ = r.run(c, case, "user")
            user = check_user_case(c, case, t, "[%s/user]" % case) if t is not None else None
            t, _ = r.run(c, case, "machine", {"TRACER_MODE": "machine"})
            raw = check_machine_case(c, case, t, "[%s/machine]" % case) if t is not None else None
            if user is not None and raw is not None:
                compare_modes(c, case, user, raw)

        # TRACER_MODE=user explicitly: what the default gives
        t, _ = r.run(c, "counts", "user-explicit", {"TRACER_MODE": "user"})
        if t is not None:
            again = check_user_case(c, "counts", t, "[counts/TRACER_MODE=user]")
            t0, _ = r.run(c, "counts", "user-default")
            if t0 is not None and again is not None:
                default = user_counts({loc: regions_of(t0, loc) for loc in t0.cpu_threads()})
                c.equal(dict(again), dict(default), "[counts] region counts with TRACER_MODE=user "
                        "vs the default")

        # registrations: default, host states off, host states alone
        reg_env = {"OMP_STATES_REGISTRATIONS": "1"}
        t, p = r.run(c, "counts", "registrations-all", reg_env)
        check_registrations(c, "[TRACER_OMPT=all]", registrations(p.traced), True, True)
        # host states off in a host-only program: nothing is recorded, so
        # (as for TRACER_OMPT=none, test_filters) no trace is written
        off = "constructs,data_ops,kernels,link_maps"
        for case in ("counts", "critical"):
            tag = "[%s/TRACER_OMPT=%s]" % (case, off)
            t, p = r.run(c, case, "off", dict(reg_env, TRACER_OMPT=off, TRACER_VERBOSE="1"),
                         archive=False)
            check_registrations(c, tag, registrations(p.traced), False, True)
            err = p.traced.stderr.decode(errors="replace")
            c.check("no events were recorded (TRACER_OMPT leaves out some OpenMP events" in err,
                    "%s tracer does not say that no event was recorded: %r" % (tag, err[-2000:]))
            if t is not None:
                check_off(c, t, tag)
        t, p = r.run(c, "counts", "host-only", dict(reg_env, TRACER_OMPT="host_states"))
        check_registrations(c, "[TRACER_OMPT=host_states]", registrations(p.traced), True, False)
        if t is not None:
            check_user_case(c, "counts", t, "[counts/TRACER_OMPT=host_states]")
    finally:
        r.cleanup()
    c.finish()


if __name__ == "__main__":
    main()
