"""Shared driver code for tracer's tests.

Environment (set by tests/meson.build):
  TEST_TRACER_LIB           full path of libtracer.so
  TEST_BIN             program under test
  TEST_SRC             its source file (kernel line markers `/* KERNEL:tag */`)
  OTF2_PRINT           otf2-print executable (falls back to PATH)
  TEST_SANITIZER_PRELOAD  sanitizer runtimes to preload before libtracer.so
                       (':' or ' ' separated), empty when not sanitizing
"""

import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import otf2                                  # noqa: E402
from otf2.enums import LocationType, LocationGroupType, RegionRole, Paradigm  # noqa: E402
from otf2_trace import Trace                 # noqa: E402

# A signal ignored by whoever started the tests (nohup ignores SIGHUP; a
# script's background job, SIGINT and SIGQUIT) stays ignored in every
# program they run: one that raises it, or is sent it, would go on instead
# of dying of it, and a test of that death would fail for a reason of the
# shell's.  The tests run programs as an interactive shell starts them
# (test_crash's "ignored" case ignores SIGHUP in the program itself).
for _sig in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGXCPU):
    if signal.getsignal(_sig) == signal.SIG_IGN:
        signal.signal(_sig, signal.SIG_DFL)

HOST_DEVICE = 4          # omp_get_initial_device() with LLVM 19's 4 host devices

# canonical name -> (role, optype or None, where)
OMPT_REGIONS = {
    "target": (RegionRole.WRAPPER, None, "host"),
    "target enter data": (RegionRole.WRAPPER, None, "host"),
    "target exit data": (RegionRole.WRAPPER, None, "host"),
    "target update": (RegionRole.WRAPPER, None, "host"),
    "target nowait": (RegionRole.WRAPPER, None, "host"),
    "target enter data nowait": (RegionRole.WRAPPER, None, "host"),
    "target exit data nowait": (RegionRole.WRAPPER, None, "host"),
    "target update nowait": (RegionRole.WRAPPER, None, "host"),
    "alloc": (RegionRole.ALLOCATE, 1, "host"),
    "transfer to device": (RegionRole.DATA_TRANSFER, 2, "host"),
    "transfer from device": (RegionRole.DATA_TRANSFER, 3, "host"),
    "delete": (RegionRole.DEALLOCATE, 4, "host"),
    "associate": (RegionRole.ARTIFICIAL, 5, "host"),
    "disassociate": (RegionRole.ARTIFICIAL, 6, "host"),
    "alloc async": (RegionRole.ALLOCATE, 17, "host"),
    "transfer to device async": (RegionRole.DATA_TRANSFER, 18, "host"),
    "transfer from device async": (RegionRole.DATA_TRANSFER, 19, "host"),
    "delete async": (RegionRole.DEALLOCATE, 20, "host"),
    "kernel": (RegionRole.FUNCTION, None, "device"),
    "device initialize": (RegionRole.ARTIFICIAL, None, "device"),
    "device load": (RegionRole.ARTIFICIAL, None, "device"),
    "device unload": (RegionRole.ARTIFICIAL, None, "device"),
    "device finalize": (RegionRole.ARTIFICIAL, None, "device"),
}
# Host OpenMP states in user mode (docs/trace-model.md, "Host OpenMP states";
# tests/test_host_states.py checks them in depth): regions of any OpenMP
# program, by canonical name.
HOST_STATE_REGIONS = {
    "parallel": RegionRole.PARALLEL, "loop": RegionRole.LOOP, "sections": RegionRole.SECTIONS,
    "single": RegionRole.SINGLE, "workshare": RegionRole.WORKSHARE, "distribute": RegionRole.LOOP,
    "taskloop": RegionRole.LOOP, "scope": RegionRole.CODE, "work": RegionRole.CODE,
    "masked": RegionRole.MASTER, "critical": RegionRole.CRITICAL, "ordered": RegionRole.ORDERED,
    "task": RegionRole.TASK, "task create": RegionRole.TASK_CREATE, "teams": RegionRole.PARALLEL,
    "<OMP-implicit_barrier>": RegionRole.IMPLICIT_BARRIER, "<OMP-explicit_barrier>": RegionRole.BARRIER,
    "<OMP-taskwait>": RegionRole.TASK_WAIT, "<OMP-taskgroup>": RegionRole.TASK_WAIT,
    "<OMP-reduction>": RegionRole.ARTIFICIAL, "<OMP-lock_wait>": RegionRole.ARTIFICIAL,
    "<OMP-critical_section_wait>": RegionRole.CRITICAL,
    "<OMP-ordered_section_wait>": RegionRole.ORDERED, "<OMP-atomic_wait>": RegionRole.ATOMIC,
    "<OMP-overhead>": RegionRole.ARTIFICIAL, "<OMP-idle>": RegionRole.ARTIFICIAL,
}
OMPT_REGIONS.update({n: (role, None, "host") for n, role in HOST_STATE_REGIONS.items()})
WRAPPERS = {n for n, v in OMPT_REGIONS.items() if v[0] == RegionRole.WRAPPER}
DATA_OPS = {n for n, v in OMPT_REGIONS.items() if v[1] is not None}
DEVICE_LIFECYCLE = {"device initialize", "device load", "device unload", "device finalize"}
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer",
                     "WARNING: ThreadSanitizer", "ERROR: ThreadSanitizer")


class Checker:
    """Collects failures instead of stopping at the first one."""

    def __init__(self, name):
        self.name = name
        self.failures = []
        self.notes = []
        self._seen = {}        # message -> times seen (identical failures shown once)

    def check(self, cond, msg):
        if not cond:
            if msg in self._seen:
                self._seen[msg] += 1
            else:
                self._seen[msg] = 1
                self.failures.append(msg)
        return bool(cond)

    def equal(self, got, want, what):
        return self.check(got == want, "%s: got %r, want %r" % (what, got, want))

    def note(self, msg):
        self.notes.append(msg)

    def extend(self, errors, prefix):
        for e in errors[:20]:
            self.failures.append("%s: %s" % (prefix, e))
        if len(errors) > 20:
            self.failures.append("%s: ... %d more" % (prefix, len(errors) - 20))

    def finish(self, trace=None):
        for n in self.notes:
            print("NOTE:", n)
        if self.failures:
            if trace is not None:
                print(trace.summary())
            print("%s: %d FAILURE(S)" % (self.name, len(self.failures)))
            for f in self.failures:
                n = self._seen.get(f, 1)
                print("FAIL:", f if n == 1 else "%s  [x%d]" % (f, n))
            sys.exit(1)
        print("%s: OK" % self.name)
        sys.exit(0)


def env_path(name, required=True):
    value = os.environ.get(name, "")
    if required and not value:
        sys.exit("%s is not set (run through meson test)" % name)
    return value


def preload_list():
    extra = os.environ.get("TEST_SANITIZER_PRELOAD", "")
    parts = [p for p in re.split(r"[:\s]+", extra) if p]
    return parts + [env_path("TEST_TRACER_LIB")]


def base_env():
    # Hermetic: no TRACER_* setting of the developer's shell leaks into a test.
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRACER_")}
    env.pop("LD_PRELOAD", None)
    env["OMP_TARGET_OFFLOAD"] = "MANDATORY"
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0:verify_asan_link_order=0")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    return env


def run_env(traced, output=None, extra_env=None):
    env = base_env()
    if traced:
        env["LD_PRELOAD"] = ":".join(preload_list())
    if output is not None:
        env["TRACER_OUTPUT"] = output
    if extra_env:
        env.update(extra_env)
    return env


def run(cmd, cwd, traced, output=None, extra_env=None, timeout=300):
    return subprocess.run(cmd, cwd=cwd, env=run_env(traced, output, extra_env),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)


def run_group(cmd, cwd, traced, output=None, extra_env=None, timeout=300):
    """run(), in a session of its own, for programs that fork: when it ends,
    and on timeout, every process left in it (a child or grandchild that
    hangs) is killed, not only the first. Raises subprocess.TimeoutExpired
    (with what was read) like run()."""
    p = subprocess.Popen(cmd, cwd=cwd, env=run_env(traced, output, extra_env),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)

    def kill_group():
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group()
        out, err = p.communicate()
        raise subprocess.TimeoutExpired(cmd, timeout, output=out, stderr=err)
    kill_group()
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def otf2_print_cmd():
    exe = os.environ.get("OTF2_PRINT") or shutil.which("otf2-print")
    return exe


def open_checked_trace(c, what, anchor):
    """otf2-print must read the archive, and the Python reader too; its
    timestamps must not go back and its regions must nest. The Trace, or None."""
    exe = otf2_print_cmd()
    if c.check(exe, "otf2-print not found"):
        q = subprocess.run([exe, anchor], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        c.equal(q.returncode, 0, "%s: otf2-print exit code" % what)
    try:
        t = Trace(anchor)
    except Exception as e:  # noqa: BLE001
        c.check(False, "%s: otf2 reader failed: %r" % (what, e))
        return None
    c.extend(t.check_timestamps(), "%s: timestamps" % what)
    c.extend(t.check_nesting(), "%s: nesting" % what)
    return t


def source_marks(src, word):
    """{tag: line} of `/* WORD:tag */` markers in the source."""
    out = {}
    with open(src) as f:
        for n, line in enumerate(f, 1):
            m = re.search(r"/\* %s:(\w+) \*/" % word, line)
            if m:
                out[m.group(1)] = n
    return out


def kernel_lines(src):
    """{tag: line} of `/* KERNEL:tag */` markers in the source."""
    return source_marks(src, "KERNEL")


def kernel_name_re(line, func="main"):
    """A kernel's display name (issue 35): "kernel <function as written>
    (<file>:<line>)", or "(line <line>)" without -g."""
    return re.compile(r"kernel %s \((?:[^()]*:|line )%d\)" % (re.escape(func), line))


KERNEL_LINE = re.compile(r"(?::|line )(\d+)\)$")
ENTRY_RE = re.compile(r"; entry (__omp_offloading_[0-9a-f]+_[0-9a-f]+_(\w+)_l(\d+))$")


def kernel_entry(region):
    """(entry symbol, its function, its line) of a kernel region, from its
    description ("...; entry __omp_offloading_<dev>_<file>_<fn>_l<line>"),
    or None."""
    m = ENTRY_RE.search(region.description or "")
    return (m.group(1), m.group(2), int(m.group(3))) if m else None


SKIP = 77     # meson: test skipped


class OffloadRun:
    """Runs TEST_BIN without and with the tracer in a fresh temp dir."""

    def __init__(self, name, args=()):
        self.name = name
        self.bin = env_path("TEST_BIN")
        self.src = os.environ.get("TEST_SRC", "")
        self.tmp = tempfile.mkdtemp(prefix="tracer-test-%s-" % name)
        self.cwd = os.path.join(self.tmp, "cwd")
        os.mkdir(self.cwd)
        self.output = os.path.join(self.tmp, "trace")
        cmd = [self.bin] + list(args)
        self.plain = run(cmd, self.cwd, traced=False)
        self.traced = run(cmd, self.cwd, traced=True, output=self.output)
        self.trace = None

    def cleanup(self):
        if os.environ.get("TEST_KEEP"):
            print("kept", self.tmp)
            return
        shutil.rmtree(self.tmp, ignore_errors=True)

    def show(self):
        for label, p in (("plain", self.plain), ("traced", self.traced)):
            print("--- %s run: rc=%d" % (label, p.returncode))
            print("stdout:", p.stdout.decode(errors="replace"))
            print("stderr:", p.stderr.decode(errors="replace")[-4000:])


def check_run_basics(c, r, want_rc, want_stdout):
    """Output and exit code unchanged; trace directory created; otf2-print ok."""
    c.equal(r.plain.returncode, want_rc, "exit code without tracer")
    c.equal(r.traced.returncode, want_rc, "exit code with tracer")
    c.equal(r.plain.stdout.decode(), want_stdout, "stdout without tracer")
    c.equal(r.traced.stdout.decode(), r.plain.stdout.decode(),
            "stdout with tracer (vs without)")
    err = r.traced.stderr.decode(errors="replace")
    for marker in SANITIZER_MARKERS:
        c.check(marker not in err, "sanitizer report in traced stderr: %r" % marker)
    leftovers = os.listdir(r.cwd)
    c.check(not leftovers, "files written into the cwd although TRACER_OUTPUT was set: %r"
            % leftovers)
    anchor = os.path.join(r.output, "traces.otf2")
    if not c.check(os.path.isfile(anchor), "no archive at %s (dir has %r)"
                   % (anchor, os.listdir(r.output) if os.path.isdir(r.output) else None)):
        return None
    exe = otf2_print_cmd()
    if c.check(exe, "otf2-print not found (install otf2-tools)"):
        p = subprocess.run([exe, anchor], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        c.check(p.returncode == 0, "otf2-print exit %d: %s"
                % (p.returncode, p.stderr.decode(errors="replace")[-2000:]))
    try:
        r.trace = Trace(anchor)
    except Exception as e:     # unreadable archive
        c.check(False, "otf2 reader failed on %s: %r" % (anchor, e))
        return None
    return r.trace


def check_structure(c, t, want_exit_status):
    """Contract checks that hold for every offload trace."""
    c.extend(t.check_timestamps(), "timestamps")
    c.extend(t.check_nesting(), "nesting")
    inc = t.incomplete_leaves()
    c.check(not inc, "Leaves with incomplete=1: %r"
            % [(loc.name, ev.region.canonical_name) for loc, ev in inc])

    # clock
    cp = t.clock_properties
    c.equal(cp.timer_resolution, 1000000000, "ClockProperties.timer_resolution")
    times = [ev.time for _, ev in t.all_events()]
    if times:
        c.equal(cp.global_offset, min(times), "ClockProperties.global_offset (earliest stamp)")
        c.equal(cp.trace_length, max(times) - min(times), "ClockProperties.trace_length")

    # locations and groups
    threads = t.cpu_threads()
    streams = t.device_streams()
    c.check(threads, "no CPU_THREAD location")
    for loc in threads:
        c.check(re.fullmatch(r"host thread \d+", loc.name), "host location name %r" % loc.name)
        c.check(loc.group.location_group_type == LocationGroupType.PROCESS,
                "%s: group %r not PROCESS" % (loc.name, loc.group.name))
        c.check(re.fullmatch(r"process \d+", loc.group.name),
                "process group name %r" % loc.group.name)
    for d, loc in streams.items():
        c.equal(loc.group.name, "device %d" % d, "group of %s" % loc.name)
        c.equal(loc.group.location_group_type, LocationGroupType.ACCELERATOR,
                "group type of %s" % loc.name)
    all_streams = t.locations_of_type(LocationType.ACCELERATOR_STREAM)
    for loc in all_streams:
        d = Trace.stream_device(loc)
        if c.check(d is not None, "stream location name %r" % loc.name):
            c.equal(loc.group.name, "device %d" % d, "group of %s" % loc.name)
    c.equal(sorted(streams), sorted(t.streams_of_device()),
            "every device with streams has a first 'device <d> stream'")
    refs_threads = [loc._ref for loc in threads]
    refs_streams = [loc._ref for loc in streams.values()]
    if refs_threads and refs_streams:
        c.check(max(refs_threads) < min(refs_streams),
                "location ids: host threads must come before device streams (%r / %r)"
                % (refs_threads, refs_streams))
    c.equal(sorted(refs_threads), list(range(len(refs_threads))), "host thread location ids")

    # regions
    for reg in t.regions:
        if reg.canonical_name in OMPT_REGIONS:
            role = OMPT_REGIONS[reg.canonical_name][0]
            c.equal(reg.region_role, role, "role of region %r" % reg.canonical_name)
            c.equal(reg.paradigm, Paradigm.OPENMP, "paradigm of region %r" % reg.canonical_name)
    for loc, ev in t.enters():
        cn = ev.region.canonical_name
        if cn not in OMPT_REGIONS:
            c.check(False, "%s: unexpected region %r" % (loc.name, cn))
            continue
        where = OMPT_REGIONS[cn][2]
        if where == "host":
            c.check(loc.type == LocationType.CPU_THREAD,
                    "%r recorded on %s, not a host thread" % (cn, loc.name))
        else:
            c.check(loc.type == LocationType.ACCELERATOR_STREAM,
                    "%r recorded on %s, not a device stream" % (cn, loc.name))

    # ProgramBegin / ProgramEnd
    pb = t.events_of(otf2.events.ProgramBegin)
    pe = t.events_of(otf2.events.ProgramEnd)
    c.equal(len(pb), 1, "number of ProgramBegin")
    c.equal(len(pe), 1, "number of ProgramEnd")
    if len(pb) == 1 and len(pe) == 1:
        c.equal(pb[0][0].name, "host thread 0", "location of ProgramBegin")
        c.equal(pe[0][0].name, "host thread 0", "location of ProgramEnd")
        c.equal(pe[0][1].exit_status, want_exit_status, "ProgramEnd exit status")
        c.check(os.path.basename(str(pb[0][1].program_name)) == os.path.basename(
            env_path("TEST_BIN")) or str(pb[0][1].program_name).endswith(
                os.path.basename(env_path("TEST_BIN"))),
                "ProgramBegin name %r" % pb[0][1].program_name)
        proc_times = [ev.time for loc in threads for ev in t.events[loc]]
        c.check(pb[0][1].time <= min(proc_times), "ProgramBegin is not the earliest host event")
        c.check(pe[0][1].time >= max(proc_times), "ProgramEnd is not the latest host event")

    check_attributes(c, t)
    check_rma(c, t)


def _open_wrapper_target_id(stack):
    for ev in reversed(stack):
        if ev.region.canonical_name in WRAPPERS:
            return Trace.attr(ev, "target_id")
    return None


def check_attributes(c, t):
    """Attribute contract on Enter events; target_id / host_op_id linkage."""
    A = Trace.attr
    target_ids = {}          # target_id -> device
    host_ops = collections.Counter()
    for loc in t.cpu_threads():
        stack = []
        for ev in t.events[loc]:
            if isinstance(ev, otf2.events.Leave):
                if stack:
                    stack.pop()
                continue
            if not isinstance(ev, otf2.events.Enter):
                continue
            cn = ev.region.canonical_name
            if cn in WRAPPERS:
                tid = A(ev, "target_id")
                dev = A(ev, "device")
                if c.check(tid not in (None, 0), "%s Enter without target_id" % cn):
                    c.check(tid not in target_ids, "target_id %r reused" % tid)
                    target_ids[tid] = dev
                c.check(dev is not None, "%s Enter without device" % cn)
                c.check(A(ev, "codeptr_ra") not in (None, 0), "%s Enter without codeptr_ra" % cn)
            elif cn in DATA_OPS:
                # The region is the op type (OMPT_REGIONS[cn][1]): an attribute
                # repeating it would cost every data op about 5 bytes.
                c.equal(A(ev, "optype"), None, "optype attribute of %s (its region says it)" % cn)
                for name in ("host_op_id", "src_addr", "src_device", "dst_device", "bytes",
                             "codeptr_ra"):
                    c.check(A(ev, name) is not None, "%s Enter lacks attribute %s" % (cn, name))
                hop = A(ev, "host_op_id")
                host_ops[hop] += 1
                enclosing = _open_wrapper_target_id(stack)
                c.equal(A(ev, "target_id"), enclosing,
                        "target_id of %s vs enclosing target construct" % cn)
            stack.append(ev)
    for loc, ev in t.enters("kernel"):
        tid = A(ev, "target_id")
        dev = A(ev, "device")
        c.check(tid in target_ids, "kernel target_id %r matches no target Enter" % tid)
        if tid in target_ids:
            c.equal(dev, target_ids[tid], "kernel 'device' attribute vs its target's device")
            c.equal(Trace.stream_device(loc), target_ids[tid],
                    "device of the kernel's stream (%s) vs its target's device" % loc.name)
        hop = A(ev, "host_op_id")
        c.check(hop not in (None, 0), "kernel Enter without host_op_id")
        host_ops[hop] += 1
        c.check(A(ev, "requested_teams") is not None, "kernel Enter without requested_teams")
    dup = [h for h, n in host_ops.items() if n > 1]
    c.check(not dup, "host_op_id not unique: %r" % dup[:10])


def check_rma(c, t):
    """Every transfer is Enter, RmaPut/RmaGet ... RmaOpCompleteBlocking, Leave
    with matching ids, windows and remote = the device stream."""
    A = Trace.attr
    streams = t.device_streams()
    threads = t.cpu_threads()
    # windows and their communicators
    for d, stream in streams.items():
        win = t.win_by_name(t.window_name(d))
        if not c.check(win is not None, "no RmaWin %r" % t.window_name(d)):
            continue
        members = list(win.comm.group.members)
        c.check(members and members[0] == stream,
                "first member of the comm group of window %d is not its stream" % d)
        c.equal(sorted(m.name for m in members[1:]), sorted(l.name for l in threads),
                "host members of comm group for device %d" % d)
        creates = [ev for _, ev in t.events_of(otf2.events.RmaWinCreate) if ev.win == win]
        destroys = [ev for _, ev in t.events_of(otf2.events.RmaWinDestroy) if ev.win == win]
        c.equal(len(creates), 1, "RmaWinCreate for device %d" % d)
        c.equal(len(destroys), 1, "RmaWinDestroy for device %d" % d)

    for loc in threads:
        evs = t.events[loc]
        for i, ev in enumerate(evs):
            if isinstance(ev, otf2.events.Enter) and ev.region.canonical_name in (
                    "transfer to device", "transfer from device"):
                to = ev.region.canonical_name == "transfer to device"
                cls = otf2.events.RmaPut if to else otf2.events.RmaGet
                dev = A(ev, "dst_device" if to else "src_device")
                nxt = evs[i + 1] if i + 1 < len(evs) else None
                if not c.check(isinstance(nxt, cls), "%s: Enter(%s) not followed by %s (got %s)"
                               % (loc.name, ev.region.canonical_name, cls.__name__,
                                  type(nxt).__name__)):
                    continue
                c.equal(nxt.bytes, A(ev, "bytes"), "%s bytes vs Enter bytes" % cls.__name__)
                c.equal(nxt.matching_id, A(ev, "host_op_id"),
                        "%s matching id vs host_op_id" % cls.__name__)
                c.equal(nxt.win.name, t.window_name(dev), "%s window" % cls.__name__)
                if dev in streams:
                    try:
                        remote = nxt.win.location(nxt.remote)
                    except Exception:
                        remote = None
                    c.check(remote == streams[dev], "%s remote %r is not device %s stream"
                            % (cls.__name__, nxt.remote, dev))
                # find the Leave of this Enter
                depth = 0
                for j in range(i + 1, len(evs)):
                    e2 = evs[j]
                    if isinstance(e2, otf2.events.Enter):
                        depth += 1
                    elif isinstance(e2, otf2.events.Leave):
                        if depth == 0:
                            prev = evs[j - 1]
                            if c.check(isinstance(prev, otf2.events.RmaOpCompleteBlocking),
                                       "%s: Leave(%s) not preceded by RmaOpCompleteBlocking"
                                       % (loc.name, ev.region.canonical_name)):
                                c.equal(prev.matching_id, A(ev, "host_op_id"),
                                        "RmaOpCompleteBlocking matching id")
                                c.equal(prev.win, nxt.win, "RmaOpCompleteBlocking window")
                            break
                        depth -= 1


def data_op_summary(t):
    """{(canonical, device): [bytes, ...]} for data op Enters; device is the
    destination for alloc/transfer to, the source for delete/transfer from."""
    A = Trace.attr
    out = collections.defaultdict(list)
    for loc, ev in t.enters():
        cn = ev.region.canonical_name
        if cn in ("alloc", "transfer to device"):
            out[(cn, A(ev, "dst_device"))].append(A(ev, "bytes"))
        elif cn in ("delete", "transfer from device"):
            out[(cn, A(ev, "src_device"))].append(A(ev, "bytes"))
    return {k: sorted(v) for k, v in out.items()}


def transfer_summary(t):
    """{(kind, device): sorted [bytes]} from RmaPut/RmaGet, device taken
    from the window name."""
    out = collections.defaultdict(list)
    for tr in t.transfers():
        dev = t.window_device(tr.win)
        if dev is None:
            dev = tr.win.name
        out[(tr.kind, dev)].append(tr.bytes)
    return {k: sorted(v) for k, v in out.items()}


def check_memory(c, t, single_thread, host_device=HOST_DEVICE):
    """alloc/delete pairing per device, delete bytes = alloc bytes, and the
    device_memory_in_use metric. Ops are paired in time order across host
    threads: a device address freed on one thread may be taken again on
    another (a GPU driver hands it out again at once)."""
    A = Trace.attr
    streams = t.device_streams()
    allocs = {}
    events = []          # (leave time, device, +/- bytes)
    for loc, enter, leave in sorted(t.intervals(), key=lambda i: i[1].time):
        cn = enter.region.canonical_name
        if cn == "alloc":
            dev = A(enter, "dst_device")
            addr = A(enter, "dst_addr")
            c.check(addr not in (None, 0), "alloc without dst_addr (device address at its end)")
            c.check(host_device is None or A(enter, "src_device") == host_device,
                    "alloc src_device %r, want host %d" % (A(enter, "src_device"), host_device))
            allocs[(dev, addr)] = A(enter, "bytes")
            events.append((leave.time, dev, A(enter, "bytes")))
        elif cn == "delete":
            dev = A(enter, "src_device")
            addr = A(enter, "src_addr")
            want = allocs.pop((dev, addr), None)
            c.check(want is not None, "delete of %#x on device %r without a matching alloc"
                    % (addr or 0, dev))
            c.equal(A(enter, "bytes"), want, "delete bytes (size of the matching alloc)")
            events.append((leave.time, dev, -(want or 0)))
    c.check(not allocs, "allocs never deleted: %r" % allocs)
    events.sort(key=lambda e: e[0])
    per_dev = collections.defaultdict(list)
    for _, dev, delta in events:
        per_dev[dev].append(delta)
    for dev, deltas in per_dev.items():
        stream = streams.get(dev)
        if not c.check(stream is not None, "no stream for device %r with allocs" % dev):
            continue
        vals = [v for _, _, v in t.metric_values("device_memory_in_use", stream)]
        c.equal(len(vals), len(deltas),
                "device_memory_in_use samples on device %d (one per alloc/delete end)" % dev)
        if vals:
            c.equal(vals[-1], 0, "final device_memory_in_use on device %d" % dev)
        if single_thread:
            running, want = 0, []
            for d in deltas:
                running += d
                want.append(running)
            c.equal(vals, want, "device_memory_in_use sequence on device %d" % dev)
    for dev, stream in streams.items():
        if dev not in per_dev:
            vals = t.metric_values("device_memory_in_use", stream)
            c.equal(len(vals), 0, "device_memory_in_use samples on unused device %d" % dev)


def check_counts(c, t, want):
    """Exact Enter counts of every OpenMP construct / data op / kernel
    (device lifecycle regions are checked separately)."""
    got = t.count_enters()
    for name in sorted(set(OMPT_REGIONS) - DEVICE_LIFECYCLE):
        c.equal(got.get(name, 0), want.get(name, 0), "number of %r regions" % name)


def check_kernels(c, t, want_per_device, want_lines_in_order):
    """Kernel count per device stream, and display names "kernel main
    (<file>:<line>)" in execution order, each region's description giving
    its entry symbol `__omp_offloading_<dev>_<file>_main_l<line>`."""
    streams = t.device_streams()
    for dev, n in want_per_device.items():
        stream = streams.get(dev)
        if not c.check(stream is not None, "no 'device %d stream' location" % dev):
            continue
        on_dev = t.streams_of_device().get(dev, [])
        c.equal(sum(len(t.enters("kernel", s)) for s in on_dev), n,
                "kernels on device %d's streams" % dev)
        c.equal(stream.type, LocationType.ACCELERATOR_STREAM, "type of device %d stream" % dev)
        # Kernels that overlapped in time must be on different streams.
        for s in on_dev:
            spans = sorted((a.time, b.time) for _, a, b in t.intervals("kernel", s))
            for (s0, e0), (s1, e1) in zip(spans, spans[1:]):
                c.check(s1 >= e0, "kernels overlap on %s: %r then %r" % (s.name, (s0, e0), (s1, e1)))
    total = sum(want_per_device.values())
    c.equal(len(t.enters("kernel")), total, "kernels in total")
    for dev, on_dev in t.streams_of_device().items():
        if dev not in want_per_device:
            c.equal(sum(len(t.enters("kernel", s)) for s in on_dev), 0,
                    "kernels on device %d's streams" % dev)
    for dev, stream in streams.items():
        inits = len(t.enters("device initialize", stream))
        c.check(inits <= 1, "device %d initialized %d times" % (dev, inits))
    for dev in want_per_device:
        if dev in streams:
            c.equal(len(t.enters("device initialize", streams[dev])), 1,
                    "device initialize on device %d stream" % dev)
    if want_lines_in_order is None:
        return
    names = [ev.region.name for _, ev in sorted(t.enters("kernel"), key=lambda le: le[1].time)]
    bad = []
    for name in set(names):
        if not any(kernel_name_re(line).fullmatch(name) for line in want_lines_in_order):
            bad.append(name)
    ok = c.check(not bad, "KERNEL NAMING: kernel display names %r are not 'kernel main "
                 "(<file>:<line>)' for lines %r" % (sorted(bad), sorted(set(want_lines_in_order))))
    if ok:
        lines = [int(KERNEL_LINE.search(n).group(1)) for n in names]
        c.equal(lines, want_lines_in_order, "kernel lines in execution order")
    kernel_regions = t.regions_by_canonical("kernel")
    for reg in kernel_regions:
        entry = kernel_entry(reg)
        c.check(entry and entry[1] == "main" and KERNEL_LINE.search(reg.name)
                and int(KERNEL_LINE.search(reg.name).group(1)) == entry[2],
                "kernel region %r: its description %r does not give the entry symbol "
                "__omp_offloading_*_main_l<its line>" % (reg.name, reg.description))
        m = KERNEL_LINE.search(reg.name)
        if m and reg.begin_line_number and reg.begin_line_number != int(m.group(1)):
            c.note("kernel region %r has source line %d, its symbol says line %s "
                   "(the -O1 line table maps the call to another line)"
                   % (reg.name, reg.begin_line_number, m.group(1)))
    c.equal(len({r.name for r in kernel_regions}), len(kernel_regions),
            "one kernel region per distinct name")


# Sanitizer runtimes catch SIGSEGV and friends themselves (and refuse the
# program's handler): tests about the program's handlers and tracer's turn
# that off (test_exec, test_handled_fault).
_NO_SAN = "handle_segv=0:handle_abort=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0"
# TSAN_OPTIONS keeps what meson's test setup gave (tests/tsan.supp).
NO_SAN_SIGNALS = {"ASAN_OPTIONS": "detect_leaks=0:verify_asan_link_order=0:" + _NO_SAN,
                  "UBSAN_OPTIONS": "print_stacktrace=1:" + _NO_SAN,
                  "TSAN_OPTIONS": (os.environ.get("TSAN_OPTIONS", "") + ":" + _NO_SAN).lstrip(":")}


def tracer_lines(p):
    """The `tracer:` lines of a finished process's stderr."""
    return [ln for ln in p.stderr.decode(errors="replace").splitlines()
            if ln.startswith("tracer:")]


def run_or_hang(c, what, args, cwd, **kw):
    """run(); a hang is a failure of @c (killed after 120 s), and None."""
    try:
        return run(args, cwd, timeout=120, **kw)
    except subprocess.TimeoutExpired:
        c.check(False, "%s: hangs (killed after 120 s)" % what)
        return None
