#!/usr/bin/python3
"""Issue 34 item 3: deaths by every signal whose default action ends the
process (programs/signal_death.c). Before, only the TERM family and the
faults were handled: SIGPIPE (app | head), SIGALRM, SIGUSR1, SIGUSR2,
SIGVTALRM, SIGPROF, ... left a 64 MiB file in /dev/shm, the last chunks
only there, and no word to the user.

For each such signal, sent (kill) or the kernel's own (a pipe whose reader
is gone, alarm, interval timers, a file size limit):
- the exit status is the signal, as without tracer, and stdout is the same;
- one tracer: line names the signal, the journal and the command that
  writes the trace;
- no in-flight file is left in /dev/shm;
- `tracer recover` writes an archive of exactly the marks made: 0..N-1 in
  order (SIGPIPE: as many as the program's side file has lines).
A SIGUSR1 handler the program installs after tracing started runs and the
run goes on; a SIGUSR1 ignored before it started stays ignored: both end
normally, the trace written at exit with N+1 marks and no tracer: line.

SIGTERM while the trace is written at the end (the stage directory is
there): the process dies of SIGTERM, one tracer: line says the journal is
complete and how to write the trace, no .tracer-stage-* directory is left,
and recover writes all N marks."""
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from test_crash import check_marks, death_line, env_for, no_sanitizer, read_archive, recover, tracer_lines  # noqa: E402

N = 3000
SENT = ["SIGPIPE", "SIGALRM", "SIGUSR1", "SIGUSR2", "SIGVTALRM", "SIGPROF", "SIGXFSZ", "SIGIO",
        "SIGSTKFLT", "SIGPWR", "SIGSYS", "SIGTRAP"]
KERNEL = [("alarm", "SIGALRM"), ("virtual", "SIGVTALRM"), ("prof", "SIGPROF"), ("fsize", "SIGXFSZ")]
# sanitizer runtimes must not take the signals this test is about
SAN_SIGNALS = "handle_sigtrap=0:handle_sigill=0:handle_abort=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0"


def env(out=None, extra=None):
    e = env_for(out, extra)
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"):
        e[k] = e[k] + ":" + SAN_SIGNALS
    return e


# In-flight files that were in /dev/shm before the process of their pid
# started: left by an earlier process of the same pid (another test's run
# killed and never recovered), not by this one.
EARLIER = {}


def inflight_files(pid):
    return sorted(set(glob.glob("/dev/shm/tracer-%d-*" % pid)) - EARLIER.get(pid, set()))


def popen(args, cwd, traced, out, extra=None, **kw):
    earlier = set(glob.glob("/dev/shm/tracer-*"))
    p = subprocess.Popen(args, cwd=cwd, env=h.run_env(traced, out, env(out if traced else None, extra)),
                         stderr=subprocess.PIPE, **kw)
    EARLIER[p.pid] = {f for f in earlier if f.startswith("/dev/shm/tracer-%d-" % p.pid)}
    return p


def check_death(c, what, tmp, out, name, p, err, marks, stdout=b"", plain_stdout=b""):
    sig = getattr(signal, name)
    c.equal(p.returncode, -sig, "%s: exit status with tracer" % what)
    c.equal(stdout, plain_stdout, "%s: stdout with tracer" % what)
    q = subprocess.CompletedProcess(p.args, p.returncode, stdout, err)
    no_sanitizer(c, what, q)
    c.equal(tracer_lines(q), [death_line(name, out)], "%s: tracer: lines" % what)
    c.equal(inflight_files(p.pid), [], "%s: in-flight files left in /dev/shm" % what)
    r = recover(out)
    c.equal(r.returncode, 0, "%s: tracer recover exit code (stderr %r)" % (what, r.stderr.decode(errors="replace")))
    c.equal(tracer_lines(r), [], "%s: tracer recover's complaints" % what)
    t = read_archive(c, what, out)
    if t is not None:
        check_marks(c, what, t, marks)


def simple(c, tmp, mode, name, file_arg=False):
    """kill to itself, or the kernel's signal: N marks, then death."""
    what = mode
    bin_ = h.env_path("TEST_SIGNAL_DEATH_BIN")
    args = [bin_, mode, str(N)] + ([os.path.join(tmp, mode + ".file")] if file_arg else [])
    plain = h.run(args, tmp, traced=False, extra_env=env())
    c.equal(plain.returncode, -getattr(signal, name), "%s: exit status without tracer" % what)
    out = os.path.join(tmp, "t-" + mode)
    p = popen(args, tmp, True, out, stdout=subprocess.PIPE)
    try:
        stdout, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        c.check(False, "%s: hangs (killed after 120 s)" % what)
        return
    check_death(c, what, tmp, out, name, p, err, N, stdout, plain.stdout)


def pipe_case(c, tmp, traced, k=5):
    """app | head -n k: the program dies of SIGPIPE at its first write after
    the reader is gone; its side file has one line per mark made."""
    bin_ = h.env_path("TEST_SIGNAL_DEATH_BIN")
    side = os.path.join(tmp, "pipe-%s.side" % ("traced" if traced else "plain"))
    out = os.path.join(tmp, "t-pipe") if traced else None
    r, w = os.pipe()
    head = subprocess.Popen(["head", "-n", str(k)], stdin=r, stdout=subprocess.PIPE)
    os.close(r)
    p = popen([bin_, "pipe", "0", side], tmp, traced, out, stdout=w)
    os.close(w)
    shown = head.communicate(timeout=120)[0]
    _, err = p.communicate(timeout=120)
    with open(side) as f:
        made = f.read().splitlines()
    return p, err, shown, made, out


def end_case(c, tmp):
    """SIGTERM while the trace is written from the complete journal."""
    what = "SIGTERM while the trace is written"
    bin_ = h.env_path("TEST_SIGNAL_DEATH_BIN")
    for n in (300000, 1000000, 3000000):
        out = os.path.join(tmp, "t-end%d" % n)
        p = popen([bin_, "end", str(n)], tmp, True, out, stdout=subprocess.PIPE)
        stage = []
        deadline = time.time() + 120
        while p.poll() is None and not stage and time.time() < deadline:
            stage = glob.glob(os.path.join(out, ".tracer-stage-*"))
            if not stage:
                time.sleep(0.001)
        if not stage:
            p.communicate(timeout=120)
            c.note("%d marks: the trace was written before a stage was seen; more marks" % n)
            continue
        p.send_signal(signal.SIGTERM)
        stdout, err = p.communicate(timeout=120)
        q = subprocess.CompletedProcess(p.args, p.returncode, stdout, err)
        c.equal(p.returncode, -signal.SIGTERM, "%s: exit status" % what)
        no_sanitizer(c, what, q)
        c.equal(tracer_lines(q), ["tracer: SIGTERM while the trace was being written; the journal "
                                  "%s/tracer.journal is complete: 'tracer recover %s' writes the trace"
                                  % (out, out)], "%s: tracer: lines" % what)
        c.equal(glob.glob(os.path.join(out, ".tracer-stage-*")), [], "%s: stage directories left" % what)
        c.equal(inflight_files(p.pid), [], "%s: in-flight files left in /dev/shm" % what)
        r = recover(out)
        c.equal(r.returncode, 0, "%s: tracer recover exit code (stderr %r)"
                % (what, r.stderr.decode(errors="replace")))
        t = read_archive(c, what, out)
        if t is not None:
            check_marks(c, what, t, n)
        return
    c.check(False, "%s: the trace was always written before the test saw its stage" % what)


def main():
    c = h.Checker("signal_death")
    tmp = tempfile.mkdtemp(prefix="tracer-test-signal-death-")
    try:
        for name in SENT:
            simple(c, tmp, name, name)
        for mode, name in KERNEL:
            simple(c, tmp, mode, name, file_arg=(mode == "fsize"))

        plain, _, plain_shown, plain_made, _ = pipe_case(c, tmp, False)
        c.equal(plain.returncode, -signal.SIGPIPE, "pipe: exit status without tracer")
        p, err, shown, made, out = pipe_case(c, tmp, True)
        c.equal(shown, plain_shown, "pipe: what head shows, with tracer")
        c.equal(made, [str(i) for i in range(len(made))], "pipe: the side file's lines")
        check_death(c, "pipe", tmp, out, "SIGPIPE", p, err, len(made))

        # the program's handler installed after tracing started, and a
        # signal ignored before: the run goes on and ends normally
        for mode, want_stdout in (("own", b"own usr1\n"), ("ignored", b"")):
            args = [h.env_path("TEST_SIGNAL_DEATH_BIN"), mode, str(N)]
            out = os.path.join(tmp, "t-" + mode)
            plain = h.run(args, tmp, traced=False, extra_env=env())
            traced = h.run(args, tmp, traced=True, output=out, extra_env=env(out))
            for label, q in (("without tracer", plain), ("with tracer", traced)):
                c.equal(q.returncode, 0, "%s: exit status %s" % (mode, label))
                c.equal(q.stdout, want_stdout, "%s: stdout %s" % (mode, label))
            c.equal(tracer_lines(traced), [], "%s: tracer: lines" % mode)
            c.check(not os.path.exists(os.path.join(out, "tracer.journal")),
                    "%s: the journal is still there: the run did not end normally" % mode)
            t = read_archive(c, mode, out)
            if t is not None:
                check_marks(c, mode, t, N + 1)

        end_case(c, tmp)
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
