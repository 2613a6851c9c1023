#!/usr/bin/python3
"""Offload programs built for sm_80, run by LLVM 19's real CUDA plugin on
tests/fakecuda (a CUDA driver test double), or on a real GPU's driver.

  test_fakecuda.py CASE      CASE: offload, devices, crash, mpi, fail, fail_copy, info

Ground truth is libomptarget's own log (LIBOMPTARGET_INFO=0x38: map entries
created and removed, every copy with its host and device address, size and
name, every kernel launched), read from the same run tracer traced:
  * every alloc, transfer and delete tracer recorded is one the log shows,
    with the same device, host address, device address and size, and none
    is missing; on one host thread, in the log's order;
  * device addresses are never host addresses (the double hands out
    addresses no host pointer can have);
  * the kernels launched on each device, in order, by entry symbol;
  * data ops on the named global carry its name (`variable`), whichever way
    the bytes go;
  * the host side of a data op is the initial device (number of devices),
    never a GPU's number;
  * device initialize reports the type sm_<SM>; device load the size of the
    image the binary embeds;
  * declare target link: each link map's device storage and reference
    pointer are those the log shows being created and written.
Kernels do not run on the double, so no result is checked.

Environment (tests/meson.build):
  TEST_CUDA_SKIP      set when CUDA's ptxas/nvlink are missing: the programs
                      could not be built; the test says so and is skipped
  TEST_FAKECUDA_DIR   directory of the double's libcuda.so
  TEST_CUDA_DRIVER    "real": use the machine's own libcuda.so (a GPU
                      machine); the tests run unchanged, the checks that
                      need the double's numbers (device count, sm_80,
                      its address range, error injection) are left out
  TEST_GPU_<NAME>_BIN the programs; TEST_GPU_STEPS_MPI_BIN the MPI build
  TEST_MPIEXEC        MPICH's mpiexec (mpi case)
  TEST_TRACER_CLI     the tracer command
"""
import collections
import os
import re
import subprocess
import sys
import tempfile
import shutil

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
from otf2_trace import Trace, RankView  # noqa: E402

A = Trace.attr
SM = 80
FAKE_BASE = 0xd000000000000000
INFO = str(0x38)

LOG_PREFIX = re.compile(r'^(?:omptarget|"PluginInterface"|CUDA) device (\d+) info: (.*)$')
CREATE = re.compile(r"Creating new map entry with HstPtrBase=(0x[0-9a-f]+), HstPtrBegin=(0x[0-9a-f]+), "
                    r"TgtAllocBegin=(0x[0-9a-f]+), TgtPtrBegin=(0x[0-9a-f]+), Size=(\d+), .*Name=(.*)$")
TO_DEV = re.compile(r"Copying data from host to device, HstPtr=(0x[0-9a-f]+), TgtPtr=(0x[0-9a-f]+), "
                    r"Size=(\d+), Name=(.*)$")
FROM_DEV = re.compile(r"Copying data from device to host, TgtPtr=(0x[0-9a-f]+), HstPtr=(0x[0-9a-f]+), "
                      r"Size=(\d+), Name=(.*)$")
REMOVE = re.compile(r"Removing map entry with HstPtrBegin=(0x[0-9a-f]+), TgtPtrBegin=(0x[0-9a-f]+), "
                    r"Size=(\d+), Name=(.*)$")
LAUNCH = re.compile(r"Launching kernel (\S+) with")

OPS = {"alloc": "alloc", "alloc async": "alloc",
       "transfer to device": "to", "transfer to device async": "to",
       "transfer from device": "from", "transfer from device async": "from",
       "delete": "delete", "delete async": "delete"}


def real_driver():
    return os.environ.get("TEST_CUDA_DRIVER") == "real"


def fake_dir():
    return "" if real_driver() else os.environ.get("TEST_FAKECUDA_DIR", "")


def library_path():
    """LD_LIBRARY_PATH for the programs: the double's directory first, or,
    on the real driver, without it (meson puts it there for every test
    that depends on the library)."""
    double = os.environ.get("TEST_FAKECUDA_DIR", "")
    parts = [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p and p != double]
    return ":".join(([double] if fake_dir() else []) + parts)


def gpu_env(extra=None):
    env = {"LIBOMPTARGET_INFO": INFO, "LD_LIBRARY_PATH": library_path()}
    env.update(extra or {})
    return env


def base_name(name):
    """A map clause's variable: 'buf[0:n]' -> 'buf'."""
    return name.split("[", 1)[0].strip()


class Log:
    """libomptarget's log of one process: ops as (kind, device, host, tgt,
    size, name) in order, kernels per device, link reference pointer writes."""

    def __init__(self, text):
        self.ops = []
        self.kernels = collections.defaultdict(list)
        self.devices = set()
        for line in text.splitlines():
            m = LOG_PREFIX.match(line)
            if not m:
                continue
            dev, rest = int(m.group(1)), m.group(2)
            self.devices.add(dev)
            for kind, rx in (("alloc", CREATE), ("to", TO_DEV), ("from", FROM_DEV),
                             ("delete", REMOVE), ("kernel", LAUNCH)):
                g = rx.search(rest)
                if not g:
                    continue
                if kind == "alloc":
                    self.ops.append(("alloc", dev, int(g.group(2), 16), int(g.group(3), 16),
                                     int(g.group(5)), g.group(6)))
                elif kind == "to":
                    self.ops.append(("to", dev, int(g.group(1), 16), int(g.group(2), 16),
                                     int(g.group(3)), g.group(4)))
                elif kind == "from":
                    self.ops.append(("from", dev, int(g.group(2), 16), int(g.group(1), 16),
                                     int(g.group(3)), g.group(4)))
                elif kind == "delete":
                    self.ops.append(("delete", dev, int(g.group(1), 16), int(g.group(2), 16),
                                     int(g.group(3)), g.group(4)))
                else:
                    self.kernels[dev].append(g.group(1))
                break

    def key_ops(self):
        # A delete's host address is not an OMPT field; compare device side.
        return [(k, d, None if k == "delete" else hst, tgt, n) for k, d, hst, tgt, n, _ in self.ops]


def trace_ops(t, locations=None):
    """Data ops tracer recorded, in time order per host thread, as (kind,
    device, host, tgt, size), plus the host-side device numbers and the
    events themselves."""
    out, host_devs, evs = [], set(), []
    locs = locations if locations is not None else t.cpu_threads()
    for loc in locs:
        for ev in t.events[loc]:
            if ev.__class__.__name__ != "Enter":
                continue
            kind = OPS.get(ev.region.canonical_name)
            if not kind:
                continue
            src, dst = A(ev, "src_addr"), A(ev, "dst_addr")
            if kind in ("alloc", "to"):
                dev, host, tgt = A(ev, "dst_device"), src, dst
                host_devs.add(A(ev, "src_device"))
            elif kind == "from":
                dev, host, tgt = A(ev, "src_device"), dst, src
                host_devs.add(A(ev, "dst_device"))
            else:
                dev, host, tgt = A(ev, "src_device"), None, src
            out.append((kind, dev, host, tgt, A(ev, "bytes")))
            evs.append(ev)
    return out, host_devs, evs


def image_size(path):
    """Bytes of the CUDA ELF image the binary embeds (its extent)."""
    data = open(path, "rb").read()
    at = data.find(b"\x7fELF", 1)
    while at != -1:
        if int.from_bytes(data[at + 18:at + 20], "little") == 190:
            shoff = int.from_bytes(data[at + 40:at + 48], "little")
            shentsize = int.from_bytes(data[at + 58:at + 60], "little")
            shnum = int.from_bytes(data[at + 60:at + 62], "little")
            phoff = int.from_bytes(data[at + 32:at + 40], "little")
            phentsize = int.from_bytes(data[at + 54:at + 56], "little")
            phnum = int.from_bytes(data[at + 56:at + 58], "little")
            end = max(shoff + shnum * shentsize, phoff + phnum * phentsize)
            for i in range(shnum):
                sh = at + shoff + i * shentsize
                stype = int.from_bytes(data[sh + 4:sh + 8], "little")
                off = int.from_bytes(data[sh + 24:sh + 32], "little")
                size = int.from_bytes(data[sh + 32:sh + 40], "little")
                if stype != 8:
                    end = max(end, off + size)
            return end
        at = data.find(b"\x7fELF", at + 1)
    return None


def check_against_log(c, what, t, log, locations=None, ordered=True, globals_=(), ndevices=None,
                      device_locs=None):
    got, host_devs, evs = trace_ops(t, locations)
    want = log.key_ops()
    if ordered:
        c.equal(got, want, "%s: data ops (kind, device, host, device addr, bytes) in order" % what)
    else:
        c.equal(sorted(got, key=repr), sorted(want, key=repr),
                "%s: data ops (kind, device, host, device addr, bytes) as a multiset" % what)
    c.check(len(want) > 0, "%s: the log shows no data op (LIBOMPTARGET_INFO not honoured?)" % what)
    for k, d, hst, tgt, n in got:
        c.check(tgt != hst, "%s: %s of %d bytes has device address = host address 0x%x"
                % (what, k, n, tgt or 0))
        if fake_dir():
            c.check(tgt >= FAKE_BASE, "%s: %s device address 0x%x is not the double's"
                    % (what, k, tgt or 0))
    gpu_devs = {d for _, d, _, _, _ in got}
    c.check(not (host_devs & gpu_devs), "%s: host side numbered as a GPU: host %r, GPUs %r"
            % (what, host_devs, gpu_devs))
    if ndevices is not None:
        c.equal(host_devs, {ndevices}, "%s: host side's device number (the initial device)" % what)
    # names: the log names every op's variable (as the map clause spells
    # it); tracer names globals, a function's static qualified by it
    # (clang's symbol "main.a"). Ops are matched by their key.
    names = collections.defaultdict(list)
    for kind, dev, hst, tgt, n, name in log.ops:
        names[(kind, dev, None if kind == "delete" else hst, tgt, n)].append(base_name(name))
    for key, ev in zip(got, evs):
        kind, dev, _, _, n = key
        var, want = A(ev, "variable"), (names.get(key) or [None]).pop(0)
        same = var is not None and want is not None and re.fullmatch(
            r"(?:\w+(?:\.|::))?%s" % re.escape(want), var)
        if want in globals_:
            c.check(same, "%s: variable of %s %d bytes on device %r: got %r, want %r"
                    % (what, kind, n, dev, var, want))
        elif var is not None:
            c.check(same, "%s: %s %d bytes named %r, the log says %r" % (what, kind, n, var, want))
    # kernels per device, by entry symbol, in order
    got_k = collections.defaultdict(list)
    for loc in (device_locs if device_locs is not None else t.locations):
        dev = Trace.stream_device(loc)
        if dev is None:
            continue
        for ev in t.events[loc]:
            if ev.__class__.__name__ == "Enter" and ev.region.canonical_name == "kernel":
                e = h.kernel_entry(ev.region)
                got_k[dev].append((ev.time, e[0] if e else ev.region.description))
    got_k = {d: [n for _, n in sorted(v)] for d, v in got_k.items()}
    c.equal(got_k, dict(log.kernels), "%s: kernels launched per device (entry symbols, in order)" % what)


def check_devices(c, what, t, binary, device_locs=None):
    want_type = ("sm_%d" % SM) if fake_dir() else None
    size = image_size(binary)
    for loc in (device_locs if device_locs is not None else t.locations):
        for ev in t.events[loc]:
            if ev.__class__.__name__ != "Enter":
                continue
            cn = ev.region.canonical_name
            if cn == "device initialize":
                typ = A(ev, "device_type")
                if want_type:
                    c.equal(typ, want_type, "%s: device_type of device %r" % (what, A(ev, "device")))
                else:
                    c.check(typ and re.match(r"sm_\d+$", typ), "%s: device_type %r" % (what, typ))
            elif cn == "device load":
                c.equal(A(ev, "bytes"), size, "%s: device load bytes (the embedded image)" % what)


class Run:
    def __init__(self, name):
        self.tmp = tempfile.mkdtemp(prefix="tracer-test-fakecuda-%s-" % name)
        self.out = os.path.join(self.tmp, "trace")
        self.procs = []

    def run(self, cmd, extra=None, traced=True, timeout=120):
        p = h.run(cmd, self.tmp, traced=traced, output=self.out if traced else None,
                  extra_env=gpu_env(extra), timeout=timeout)
        self.procs.append((cmd, p))
        return p

    def show(self):
        for cmd, p in self.procs:
            print("--- %r: rc=%d" % (cmd, p.returncode))
            print("stdout:", p.stdout.decode(errors="replace")[-2000:])
            print("stderr:", p.stderr.decode(errors="replace")[-6000:])

    def cleanup(self):
        if os.environ.get("TEST_KEEP"):
            print("kept", self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)


def recover(c, r):
    """`tracer recover` of the run's output directory, which must succeed."""
    q = subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover", r.out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=h.base_env(), timeout=120)
    r.procs.append((["tracer", "recover"], q))
    c.equal(q.returncode, 0, "tracer recover exit code")


def no_sanitizer(c, what, p):
    err = p.stderr.decode(errors="replace")
    for marker in h.SANITIZER_MARKERS:
        c.check(marker not in err, "%s: sanitizer report: %r" % (what, marker))


# ---- cases ----

PROGRAMS = {
    # name: (args, globals named by tracer, link variables, one host thread)
    "basic": ((), (), (), True),
    "link_main": ((), ("a", "c", "d"), ("a", "c", "d"), True),
    "cross_delete": ((), ("g0", "g1", "g2", "g3"), (), False),
    "nowait_names": ((), (), (), False),
    "steps": (("4",), ("gvec",), (), True),
}


def check_links(c, what, t, log, link_vars):
    """Each link map's device storage is the log's map entry for the
    variable, its reference pointer the address the log shows written."""
    creates = [(base_name(n), hst, tgt, size) for k, _, hst, tgt, size, n in log.ops
               if k == "alloc" and base_name(n) in link_vars]
    refs = {}
    for k, _, hst, tgt, size, n in log.ops:
        m = re.match(r"(\w+)_decl_tgt_ref_ptr$", n)
        if k == "to" and m:
            refs.setdefault(m.group(1), tgt)
    maps = [ev for loc in t.cpu_threads() for ev in t.events[loc]
            if ev.__class__.__name__ == "Enter" and ev.region.canonical_name == "link map"]
    got = [(A(ev, "variable"), A(ev, "host_addr"), A(ev, "device_addr"), A(ev, "bytes")) for ev in maps]
    c.equal(got, creates, "%s: link maps (variable, host, device storage, bytes) = the log's entries"
            % what)
    c.check(refs, "%s: the log shows no reference pointer written" % what)
    for ev in maps:
        var = A(ev, "variable")
        if A(ev, "ref_ptr_written"):
            c.equal(A(ev, "ref_ptr"), refs.get(var), "%s: ref_ptr of %s (the device address the "
                    "runtime wrote)" % (what, var))
    c.equal(sum(1 for ev in maps if A(ev, "ref_ptr_written")), len(
        [1 for k, _, _, _, _, n in log.ops if k == "to" and n.endswith("_decl_tgt_ref_ptr")]),
        "%s: link maps whose reference pointer was written = the log's writes" % what)


def case_offload(c):
    for name, (args, globals_, link_vars, one_thread) in PROGRAMS.items():
        binary = h.env_path("TEST_GPU_%s_BIN" % name.upper())
        r = Run(name)
        try:
            p = r.run([binary] + list(args))
            c.equal(p.returncode, 0, "%s: exit code" % name)
            no_sanitizer(c, name, p)
            t = h.open_checked_trace(c, name, os.path.join(r.out, "traces.otf2"))
            if t is None:
                continue
            log = Log(p.stderr.decode(errors="replace"))
            check_against_log(c, name, t, log, ordered=one_thread, globals_=globals_,
                              ndevices=1 if fake_dir() else None)
            check_devices(c, name, t, binary)
            h.check_memory(c, t, single_thread=one_thread, host_device=1 if fake_dir() else None)
            if link_vars:
                check_links(c, name, t, log, link_vars)
        finally:
            if c.failures:
                r.show()
            r.cleanup()


def case_devices(c):
    """Two devices: steps alternate between them."""
    if not fake_dir():
        print("devices: the real driver's device count decides; run on a 2-GPU machine")
    binary = h.env_path("TEST_GPU_STEPS_BIN")
    r = Run("devices")
    try:
        p = r.run([binary, "4"], extra={"FAKECUDA_DEVICES": "2"})
        c.equal(p.returncode, 0, "exit code")
        no_sanitizer(c, "devices", p)
        t = h.open_checked_trace(c, "devices", os.path.join(r.out, "traces.otf2"))
        if t is not None:
            log = Log(p.stderr.decode(errors="replace"))
            if fake_dir():
                c.equal(log.devices, {0, 1}, "devices in the log")
            check_against_log(c, "devices", t, log, globals_=("gvec",),
                              ndevices=2 if fake_dir() else None)
            check_devices(c, "devices", t, binary)
            h.check_memory(c, t, single_thread=True, host_device=2 if fake_dir() else None)
    finally:
        if c.failures:
            r.show()
        r.cleanup()


def case_crash(c):
    """SIGKILL after step 1 of 4; `tracer recover` writes what the journal
    and the in-flight buffers hold: every op the log shows."""
    binary = h.env_path("TEST_GPU_STEPS_BIN")
    r = Run("crash")
    try:
        p = r.run([binary, "4", "1"], extra={"TRACER_FLUSH_INTERVAL": "1h"})
        c.equal(p.returncode, -9, "killed by SIGKILL")
        c.equal(p.stdout.decode().count("\n"), 2, "stdout lines up to the kill (steps 0 and 1)")
        recover(c, r)
        t = h.open_checked_trace(c, "crash", os.path.join(r.out, "traces.otf2"))
        if t is not None:
            log = Log(p.stderr.decode(errors="replace"))
            c.equal(sum(len(k) for k in log.kernels.values()), 2, "kernels in the log before the kill")
            check_against_log(c, "crash", t, log, globals_=("gvec",),
                              ndevices=1 if fake_dir() else None)
            check_devices(c, "crash", t, binary)
    finally:
        if c.failures:
            r.show()
        r.cleanup()


def case_mpi(c):
    """mpiexec -n 2: each rank has its own (fake) device 0; each rank's part
    of the job archive matches that rank's own log."""
    binary = h.env_path("TEST_GPU_STEPS_MPI_BIN")
    mpiexec = h.env_path("TEST_MPIEXEC")
    r = Run("mpi")
    try:
        logs = os.path.join(r.tmp, "log")
        script = 'exec "$0" "$@" 2>"%s.$PMI_RANK"' % logs
        p = r.run([mpiexec, "-n", "2", "sh", "-c", script, binary, "3"],
                  extra={"HYDRA_LAUNCHER": "fork"}, timeout=180)
        c.equal(p.returncode, 0, "mpiexec exit code")
        t = h.open_checked_trace(c, "mpi", os.path.join(r.out, "traces.otf2"))
        if t is not None:
            for rank in (0, 1):
                with open("%s.%d" % (logs, rank), errors="replace") as f:
                    text = f.read()
                for marker in h.SANITIZER_MARKERS:
                    c.check(marker not in text, "rank %d: sanitizer report" % rank)
                log = Log(text)
                v = RankView(t, rank)
                what = "rank %d" % rank
                if fake_dir():
                    c.equal(log.devices, {0}, "%s: devices in its log" % what)
                check_against_log(c, what, v, log, locations=v.cpu_threads(), globals_=("gvec",),
                                  ndevices=1 if fake_dir() else None, device_locs=v.locations)
                check_devices(c, what, v, binary, device_locs=v.locations)
                sizes = sorted(n for k, _, _, _, n, nm in log.ops if k == "to" and nm.startswith("buf"))
                c.equal(sizes, [8 * (256 * (s + 1) + 64 * rank) for s in range(3)],
                        "%s: its arrays' transfers" % what)
    finally:
        if c.failures:
            r.show()
        r.cleanup()


def case_fail(c):
    """The double fails the second kernel launch: libomptarget aborts the
    program (MANDATORY offload); tracer says the journal holds the run, and
    `tracer recover` writes what happened up to the failure."""
    if not fake_dir():
        print("fail: needs the double's error injection; nothing to do on a real driver")
        return
    binary = h.env_path("TEST_GPU_STEPS_BIN")
    r = Run("fail")
    try:
        p = r.run([binary, "4"], extra={"FAKECUDA_FAIL": "launch=2"})
        err = p.stderr.decode(errors="replace")
        c.check(p.returncode != 0, "the runtime ends the program when a launch fails (rc %d)"
                % p.returncode)
        c.check("injected failure: launch call 2" in err, "the double's injection line")
        c.check(re.search(r"^tracer: SIGABRT ends the run.*'tracer recover ", err, re.M),
                "tracer's line on the abort")
        recover(c, r)
        t = h.open_checked_trace(c, "fail", os.path.join(r.out, "traces.otf2"))
        if t is not None:
            log = Log(err)
            # the plugin logs a launch before the driver refuses it
            c.equal(len(log.kernels.get(0, [])), 2, "launches in the log (the failed one too)")
            check_against_log(c, "fail", t, log, globals_=("gvec",), ndevices=1)
            steps = [ev for loc, ev in t.enters() if ev.region.canonical_name == "target"]
            c.equal(len(steps), 2, "target regions recorded (the failed one too)")
    finally:
        if c.failures:
            r.show()
        r.cleanup()


def case_fail_copy(c):
    """The double fails a copy to the device: libomptarget aborts; the
    recovered trace holds the failed transfer and the ops before it, as the
    log shows them, and the construct the runtime aborted in, incomplete. A failed allocation, which the
    plugin's memory manager retries after freeing its cache, leaves a run
    whose trace still matches the log op for op."""
    if not fake_dir():
        print("fail_copy: needs the double's error injection; nothing to do on a real driver")
        return
    binary = h.env_path("TEST_GPU_STEPS_BIN")
    r = Run("fail-copy")
    try:
        p = r.run([binary, "4"], extra={"FAKECUDA_FAIL": "htod=2"})
        err = p.stderr.decode(errors="replace")
        c.check(p.returncode != 0, "the runtime ends the program when a copy fails (rc %d)" % p.returncode)
        c.check("injected failure: htod call 2" in err, "the double's injection line")
        recover(c, r)
        t = h.open_checked_trace(c, "fail copy", os.path.join(r.out, "traces.otf2"))
        if t is not None:
            log = Log(err)
            check_against_log(c, "fail copy", t, log, globals_=("gvec",), ndevices=1)
            inc = [ev.region.canonical_name for _, ev in t.incomplete_leaves()]
            # OMPT ends the failed transfer (it has no status to report);
            # the construct never ends: the runtime aborts inside it
            c.equal(inc, ["target enter data"], "regions left open by the failed copy (incomplete)")
        p = r.run([binary, "4"], extra={"FAKECUDA_FAIL": "alloc=3"})
        err = p.stderr.decode(errors="replace")
        c.equal(p.returncode, 0, "exit code when an allocation fails once (retried)")
        c.check("injected failure: alloc call 3" in err, "the double's injection line (alloc)")
        t = h.open_checked_trace(c, "fail alloc", os.path.join(r.out + ".1", "traces.otf2"))
        if t is not None:
            check_against_log(c, "fail alloc", t, Log(err), globals_=("gvec",), ndevices=1)
            c.check(not t.incomplete_leaves(), "fail alloc: incomplete regions")
    finally:
        if c.failures:
            r.show()
        r.cleanup()


def case_info(c):
    """`tracer info` names the CUDA devices and their type."""
    cli = h.env_path("TEST_TRACER_CLI")
    env = h.base_env()
    env["LD_LIBRARY_PATH"] = library_path()
    env["FAKECUDA_DEVICES"] = "2"
    q = subprocess.run([cli, "info"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       timeout=120)
    out = q.stdout.decode(errors="replace")
    c.equal(q.returncode, 0, "tracer info exit code")
    lines = [l.strip() for l in out.splitlines() if l.strip().startswith("CUDA")]
    if fake_dir():
        c.equal(lines[:3], ["CUDA driver:      libcuda.so, version 12.4, 2 devices",
                            "CUDA device 0:    fakecuda device 0 (sm_80), sm_80, 256 MiB",
                            "CUDA device 1:    fakecuda device 1 (sm_80), sm_80, 256 MiB"],
                "tracer info's CUDA lines")
    else:
        c.check(lines and re.match(r"CUDA driver: +libcuda\.so", lines[0]), "CUDA driver line: %r" % lines)
    if c.failures:
        print(out, q.stderr.decode(errors="replace"))


CASES = {"offload": case_offload, "devices": case_devices, "crash": case_crash, "mpi": case_mpi,
         "fail": case_fail, "fail_copy": case_fail_copy, "info": case_info}


def main():
    case = sys.argv[1] if len(sys.argv) > 1 else ""
    if case not in CASES:
        sys.exit("usage: test_fakecuda.py %s" % "|".join(CASES))
    skip = os.environ.get("TEST_CUDA_SKIP")
    if skip:
        print("SKIP: %s" % skip)
        sys.exit(h.SKIP)
    c = h.Checker("fakecuda " + case)
    CASES[case](c)
    c.finish(None)


if __name__ == "__main__":
    main()
