"""Helpers shared by test_config_values.py and test_filters.py (on top of
harness).

Environment (set by tests/meson.build):
  TEST_USER_API_BIN   programs/user_api.c linked with libtracer (always built)
  TEST_BASIC_BIN      programs/basic.c built for offload (absent without clang-19)
  TEST_BASIC_SRC      its source (kernel line markers)
  TEST_DEVICE1_BIN    programs/device1.c built for offload (absent without clang-19)
  TEST_DEVICE1_SRC    its source
"""

import os
import re
import shutil
import subprocess
import tempfile
import time

import harness as h

USER_API_STDOUT = ("user_api: handles distinct=1 same-name-same-handle=1 null-refused=1\n"
                   "user_api: 2 threads x 100 regions, failures=0\n")
BASIC_STDOUT = "basic: sum(b)=999000 sum(c)=97920 b[10]=20 c[10]=30\n"
DEVICE1_STDOUT = "device1: sum=43800\n"


class Program:
    def __init__(self, name, path, preload, stdout, src=None):
        self.name = name
        self.path = path
        self.preload = preload      # needs LD_PRELOAD of libtracer (offload programs)
        self.stdout = stdout        # normal stdout (rc 0)
        self.src = src


def user_api():
    return Program("user_api", h.env_path("TEST_USER_API_BIN"), False, USER_API_STDOUT)


def _offload(name, var, stdout, c):
    path = os.environ.get("TEST_%s_BIN" % var, "")
    if not path:
        c.note("%s: no offload program (TEST_%s_BIN unset: no clang-19); its checks are skipped"
               % (name, var))
        return None
    return Program(name, path, True, stdout, os.environ.get("TEST_%s_SRC" % var, ""))


def basic(c):
    return _offload("basic", "BASIC", BASIC_STDOUT, c)


def device1(c):
    return _offload("device1", "DEVICE1", DEVICE1_STDOUT, c)


class Result:
    def __init__(self, what, cwd, output, proc, t0, t1):
        self.what = what
        self.cwd = cwd
        self.output = output
        if proc is None:
            self.rc, self.out, self.err = None, "", "TIMEOUT"
        else:
            self.rc = proc.returncode
            self.out = proc.stdout.decode(errors="replace")
            self.err = proc.stderr.decode(errors="replace")
        self.t0, self.t1 = t0, t1
        self.anchor = os.path.join(output, "traces.otf2")
        self._trace = None

    @property
    def lines(self):
        return [l for l in self.err.splitlines() if l.strip()]

    @property
    def written(self):
        return os.path.isfile(self.anchor)

    @property
    def nothing_written(self):
        """Neither TRACER_OUTPUT (with or without a .rank<N> suffix) nor
        anything in the cwd was created: the run directory holds only cwd."""
        run_dir = os.path.dirname(self.output)
        return (not os.path.lexists(self.output) and not os.listdir(self.cwd)
                and os.listdir(run_dir) == [os.path.basename(self.cwd)])

    def trace(self):
        if self._trace is None:
            self._trace = h.Trace(self.anchor)
        return self._trace

    def describe(self):
        return ("%s: rc=%r\n  stdout=%r\n  stderr=%r\n  output=%s (%r) cwd=%r"
                % (self.what, self.rc, self.out, self.err[-3000:], self.output,
                   os.listdir(self.output) if os.path.isdir(self.output) else None,
                   os.listdir(self.cwd)))


LAUNCHER_RANK_VARS = ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID")


class Runner:
    """Every run gets a fresh cwd and TRACER_OUTPUT=<run dir>/trace (unless the
    case sets TRACER_OUTPUT itself; None removes a variable)."""

    def __init__(self, name):
        self.tmp = tempfile.mkdtemp(prefix="tracer-test-%s-" % name)
        self.n = 0

    def run(self, prog, env=None, what=None, prefix=(), output=True, timeout=120):
        self.n += 1
        d = os.path.join(self.tmp, "run%03d" % self.n)
        cwd = os.path.join(d, "cwd")
        os.makedirs(cwd)
        out = os.path.join(d, "trace")
        e = h.base_env()
        if prog.preload:
            e["LD_PRELOAD"] = ":".join(h.preload_list())
        if output:
            e["TRACER_OUTPUT"] = out
        for k, v in (env or {}).items():
            if v is None:
                e.pop(k, None)
            else:
                e[k] = v
        t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        try:
            p = subprocess.run(list(prefix) + [prog.path], cwd=cwd, env=e, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            p = None
        t1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        if what is None:
            what = "%s %s" % (prog.name, " ".join("%s=%r" % kv for kv in (env or {}).items()))
        # A process with a launcher rank writes to <TRACER_OUTPUT>.rank<N>.
        rank = next((e[v] for v in LAUNCHER_RANK_VARS if e.get(v)), None)
        if rank is not None and output:
            out += ".rank%s" % rank
        return Result(what, cwd, out, p, t0, t1)

    def cleanup(self):
        if os.environ.get("TEST_KEEP"):
            print("kept", self.tmp)
            return
        shutil.rmtree(self.tmp, ignore_errors=True)


def properties(c, anchor, what):
    """{name: value} of the archive properties, from `otf2-print -I`."""
    exe = h.otf2_print_cmd()
    if not c.check(exe, "otf2-print not found (install otf2-tools)"):
        return {}
    p = subprocess.run([exe, "-I", anchor], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if not c.check(p.returncode == 0, "%s: otf2-print -I exit %d: %s"
                   % (what, p.returncode, p.stderr.decode(errors="replace")[-1000:])):
        return {}
    props, name = {}, None
    for line in p.stdout.decode(errors="replace").splitlines():
        m = re.match(r"Property name\s+(.*)$", line)
        if m:
            name = m.group(1).strip()
            continue
        m = re.match(r"Property value\s+(.*)$", line)
        if m and name is not None:
            props[name] = m.group(1).strip()
            name = None
    return props


def otf2_print_ok(c, anchor, what):
    exe = h.otf2_print_cmd()
    if not c.check(exe, "otf2-print not found (install otf2-tools)"):
        return False
    p = subprocess.run([exe, anchor], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return c.check(p.returncode == 0, "%s: otf2-print exit %d: %s"
                   % (what, p.returncode, p.stderr.decode(errors="replace")[-1000:]))


def check_no_sanitizer(c, r):
    for marker in h.SANITIZER_MARKERS:
        c.check(marker not in r.err, "%s: sanitizer report in stderr: %r" % (r.what, marker))


def check_normal(c, r, prog, stderr_empty=True):
    """Normal exit code and stdout; optionally nothing on stderr."""
    ok = c.equal(r.rc, 0, "%s: exit code" % r.what)
    ok &= c.equal(r.out, prog.stdout, "%s: stdout" % r.what)
    if stderr_empty:
        ok &= c.equal(r.lines, [], "%s: stderr" % r.what)
    check_no_sanitizer(c, r)
    return ok


def check_traced(c, r):
    """A trace was written and otf2-print reads it."""
    if not c.check(r.written, "%s: no trace at %s" % (r.what, r.anchor)):
        print(r.describe())
        return False
    return otf2_print_ok(c, r.anchor, r.what)


def check_untraced(c, r):
    """No trace directory, nothing in the cwd."""
    ok = c.check(r.nothing_written, "%s: something was written although the run is not traced"
                 % r.what)
    if not ok:
        print(r.describe())
    return ok
