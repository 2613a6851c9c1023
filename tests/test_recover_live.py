#!/usr/bin/python3
"""Issue 34, item 5: `tracer recover` on a run that is still going, and on
runs whose processes are still dying. programs/live_marks.c makes N marks
"live" (values 0, 1, 2, ...) each time the test says so, and says how many
it made: the ground truth.

- live, same pid namespace: recover exits 1 with one line that the run is
  still going and writes nothing (no archive, the in-flight file kept);
  the program then goes on, ends normally, writes its own archive without a
  `tracer:` line, and it holds exactly 0..3N-1.
- live, recover in another pid namespace (`unshare -pf --mount-proc`, same
  /dev/shm; root only): the same refusal, the in-flight file is not taken;
  the program marks again and is killed by SIGKILL with its last marks only
  in that file (a long TRACER_FLUSH_INTERVAL); recover then gets exactly
  0..2N-1 back and removes the file.
- a run killed (SIGKILL), or ending normally, one second after recover
  started: recover waits for it to let go of its in-flight file, then
  takes exactly 0..N-1 (killed; its last marks were only in that file), or
  says the run wrote its own trace, which holds exactly 0..N-1 (ended).
- a killed run whose forked child lives on: the child does not hold the
  run's file, so recover does not wait for it (well under its 5 s wait) and
  gets 0..N-1 back.
- two recovers at once on one killed run: exactly one writes the archive
  (0..M-1); the other says another recover is working on the directory, or
  that a trace is there; neither prints "not written by tracer". While the
  test itself holds the directory's lock, recover does nothing at all.
- a recover started while the run writes its own trace at its end (its
  in-flight file already gone, its archive not yet written): it says the
  run is writing and does nothing; the run's archive holds exactly
  0..M-1, and the run prints no `tracer:` line.
- an MPICH job in which rank 1 calls MPI_Abort, recovered as soon as
  mpiexec returns (the rank it killed may still be dying): 2 of 2 ranks,
  no `tracer:` line, each rank's marks exactly its lines or one more
  (programs/mpi_abort.c; tests/test_mpi_abort.py checks the rest), 6 jobs
  run as `tracer run --output D -- mpiexec -n 2 ...`.
"""
import fcntl
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import otf2  # noqa: E402
from otf2_trace import RankView  # noqa: E402

N = 2000
# Enough for two recovers started together to overlap
RACE_MARKS = 400000
# Jobs recovered as soon as mpiexec returns: before the fix, 2 of 5 found a
# rank "still running" here
JOBS = 6
HOLDER_WAIT_S = 5        # tools/cmd_recover.c, HOLDER_WAIT_NS


class Live:
    """live_marks under tracer, driven one command at a time."""

    def __init__(self, out, extra_env=None):
        env = h.run_env(True, output=out, extra_env=extra_env)
        self.p = subprocess.Popen([h.env_path("TEST_BIN"), str(N)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)

    def say(self, cmd):
        self.p.stdin.write((cmd + "\n").encode())
        self.p.stdin.flush()
        return self.p.stdout.readline().decode().strip()

    def end(self):
        """Ends its input; (stdout, stderr) of the rest of its run."""
        self.p.stdin.close()
        out, err = self.p.stdout.read(), self.p.stderr.read()
        self.p.wait(timeout=300)
        self.p.stdout.close()
        self.p.stderr.close()
        return out.decode(errors="replace"), sanitizer_free(err.decode(errors="replace"), "live_marks")

    def kill(self):
        self.p.kill()
        self.p.wait(timeout=60)
        self.p.stdin.close()
        self.p.stdout.close()
        self.p.stderr.close()

    def inflight(self):
        return glob.glob("/dev/shm/tracer-%d-*" % self.p.pid)


def recover(args, **kw):
    t = time.monotonic()
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=h.base_env(), timeout=300, **kw)
    return p, time.monotonic() - t


SANITIZER_REPORTS = []   # (what, marker) found in any stderr read


def sanitizer_free(text, what):
    SANITIZER_REPORTS.extend((what, m) for m in h.SANITIZER_MARKERS if m in text)
    return text


def lines_of(p):
    text = sanitizer_free(p.stderr.decode(errors="replace"), "tracer recover")
    return [ln for ln in text.splitlines() if ln.startswith("tracer:")]


def no_archive(d):
    anchor = os.path.join(d, "traces.otf2")
    return ((not os.path.exists(anchor) or os.path.getsize(anchor) == 0) and
            not os.path.exists(os.path.join(d, "traces.def")) and not os.path.exists(os.path.join(d, "traces")))


def marks(c, what, d):
    t = h.open_checked_trace(c, what, os.path.join(d, "traces.otf2"))
    return None if t is None else [h.Trace.attr(ev, "value") for _, ev in t.enters("live")]


def check_marks(c, what, d, n):
    got = marks(c, what, d)
    if got is not None:
        c.check(got == list(range(n)), "%s: the archive holds %d marks, want exactly 0..%d (first wrong at %r)"
                % (what, len(got), n - 1, next((i for i, v in enumerate(got) if v != i), None)))


def check_refused(c, what, p, d, live):
    lines = lines_of(p)
    c.equal(p.returncode, 1, "%s: recover's exit status (%r)" % (what, lines))
    c.check(len(lines) == 1 and "still going" in lines[0],
            "%s: want one line that the run is still going, got %r" % (what, lines))
    c.check(no_archive(d), "%s: recover wrote something: %r" % (what, sorted(os.listdir(d))))
    c.check(len(live.inflight()) == 1, "%s: the live run's in-flight file was taken: %r" % (what, live.inflight()))


def same_namespace(c, tmp, cli):
    what = "live, same pid namespace"
    d = os.path.join(tmp, "same")
    live = Live(d)
    c.equal(live.say("mark"), "marked %d" % N, "%s: the program's line" % what)
    p, _ = recover([cli, "recover", d])
    check_refused(c, what, p, d, live)
    p, _ = recover([cli, "recover", "--force", d])
    check_refused(c, what + ", --force", p, d, live)
    c.equal(live.say("mark"), "marked %d" % (2 * N), "%s: the program's line" % what)
    c.equal(live.say("mark"), "marked %d" % (3 * N), "%s: the program's line" % what)
    out, err = live.end()
    c.equal((live.p.returncode, out.strip()), (0, "done %d" % (3 * N)), "%s: the program's end" % what)
    c.equal([ln for ln in err.splitlines() if ln.startswith("tracer:")], [], "%s: the program's tracer: lines" % what)
    check_marks(c, what + ", the program's own archive", d, 3 * N)


def other_namespace(c, tmp, cli):
    what = "live, another pid namespace"
    if os.geteuid() != 0 or subprocess.run(["unshare", "-pf", "--mount-proc", "true"],
                                           stderr=subprocess.DEVNULL).returncode:
        c.note("%s: not run (unshare -pf --mount-proc needs root)" % what)
        return
    d = os.path.join(tmp, "other")
    live = Live(d, {"TRACER_FLUSH_INTERVAL": "10min"})
    c.equal(live.say("mark"), "marked %d" % N, "%s: the program's line" % what)
    p, _ = recover(["unshare", "-pf", "--mount-proc", cli, "recover", d])
    check_refused(c, what, p, d, live)
    c.equal(live.say("mark"), "marked %d" % (2 * N), "%s: the program's line" % what)
    files = live.inflight()
    live.kill()
    p, _ = recover([cli, "recover", d])
    c.equal(p.returncode, 0, "%s, then SIGKILL: recover's exit status (%r)" % (what, lines_of(p)))
    check_marks(c, what + ", then SIGKILL", d, 2 * N)
    c.check(files and not any(os.path.exists(f) for f in files),
            "%s, then SIGKILL: the in-flight file %r is left" % (what, files))


def ends_while_recover_waits(c, tmp, cli, how):
    """A run that dies (SIGKILL) or ends (normally) a second after recover
    started: recover waits for it, then takes everything it left (dies), or
    finds the trace it wrote (ends)."""
    what = "%s while recover waits" % how
    d = os.path.join(tmp, how)
    # the last marks only in the in-flight file
    live = Live(d, {"TRACER_FLUSH_INTERVAL": "10min"})
    c.equal(live.say("mark"), "marked %d" % N, "%s: the program's line" % what)
    rec = subprocess.Popen([cli, "recover", d], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=h.base_env())
    time.sleep(1)
    if how == "dies":
        live.kill()
    else:
        out, err = live.end()
        c.equal((live.p.returncode, out.strip()), (0, "done %d" % N), "%s: the program's end" % what)
        c.equal([ln for ln in err.splitlines() if ln.startswith("tracer:")], [],
                "%s: the program's tracer: lines" % what)
    _, err = rec.communicate(timeout=300)
    lines = [ln for ln in sanitizer_free(err.decode(errors="replace"), "tracer recover").splitlines()
             if ln.startswith("tracer:")]
    if how == "dies":
        c.equal((rec.returncode, lines), (0, []), "%s: recover's exit status and lines" % what)
    else:
        c.check(rec.returncode == 1 and len(lines) == 1 and "already holds a trace" in lines[0],
                "%s: recover: want exit status 1 and one line that the run wrote its trace, got %d %r"
                % (what, rec.returncode, lines))
    check_marks(c, what, d, N)


def forked_child(c, tmp, cli):
    what = "killed, its forked child alive"
    d = os.path.join(tmp, "child")
    live = Live(d)
    c.equal(live.say("mark"), "marked %d" % N, "%s: the program's line" % what)
    m = re.fullmatch(r"child (\d+)", live.say("fork"))
    c.check(m, "%s: no child" % what)
    try:
        live.kill()
        p, took = recover([cli, "recover", d])
        c.equal((p.returncode, lines_of(p)), (0, []), "%s: recover's exit status and lines" % what)
        c.check(took < HOLDER_WAIT_S - 1, "%s: recover took %.1f s: it waited for the child" % (what, took))
        check_marks(c, what, d, N)
    finally:
        if m:
            os.kill(int(m.group(1)), signal.SIGKILL)


def two_at_once(c, tmp, cli):
    what = "two recovers at once"
    d = os.path.join(tmp, "two")
    live = Live(d)
    for k in range(RACE_MARKS // N):
        live.say("mark")
    live.kill()
    race = d + "-race"
    shutil.copytree(d, race)
    journal = os.path.join(d, "tracer.journal")
    with open(journal, "rb") as f:
        saved = f.read()
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        p, _ = recover([cli, "recover", d])
        c.equal(p.returncode, 1, "%s: recover while another holds the directory: exit status" % what)
        c.check(len(lines_of(p)) == 1 and "another 'tracer recover'" in lines_of(p)[0],
                "%s: recover while another holds the directory: want one line, got %r" % (what, lines_of(p)))
        with open(journal, "rb") as f:
            c.check(f.read() == saved, "%s: recover changed the journal while another held the directory" % what)
        c.check(no_archive(d), "%s: recover wrote while another held the directory" % what)
    finally:
        os.close(fd)
    ps = [subprocess.Popen([cli, "recover", race], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=h.base_env())
          for _ in range(2)]
    results = [(q.wait(timeout=300), sanitizer_free(q.stderr.read().decode(errors="replace"), "tracer recover"))
               for q in ps]
    for q in ps:
        q.stdout.close()
        q.stderr.close()
    c.equal(sorted(rc for rc, _ in results), [0, 1], "%s: exit statuses (%r)" % (what, results))
    for rc, err in results:
        c.check("not written by tracer" not in err, "%s: a false 'not written by tracer' line: %r" % (what, err))
        if rc == 1:
            c.check(re.fullmatch(r"tracer: recover: (another 'tracer recover'.* is working on|\S+ already holds a "
                                 r"trace).*\n", err), "%s: the other recover's line: %r" % (what, err))
    check_marks(c, what, race, RACE_MARKS)


def during_the_runs_write(c, tmp, cli):
    what = "recover during the run's own write"
    for attempt in range(3):
        d = os.path.join(tmp, "writing%d" % attempt)
        live = Live(d)
        for k in range(RACE_MARKS // N):
            live.say("mark")
        shm = live.inflight()
        live.p.stdin.close()  # the run ends: journal, in-flight file gone, then the write
        anchor = os.path.join(d, "traces.otf2")
        deadline = time.monotonic() + 120
        while (live.p.poll() is None and time.monotonic() < deadline and
               any(os.path.exists(f) for f in shm)):
            time.sleep(0.0005)
        in_window = live.p.poll() is None and os.path.getsize(anchor) == 0
        p = recover([cli, "recover", d])[0] if in_window else None
        in_window = in_window and live.p.poll() is None
        out, err = live.p.stdout.read(), live.p.stderr.read()
        live.p.wait(timeout=300)
        live.p.stdout.close()
        live.p.stderr.close()
        err = sanitizer_free(err.decode(errors="replace"), "live_marks")
        c.check(not [ln for ln in err.splitlines() if ln.startswith("tracer:")],
                "%s: the run's own lines: %r" % (what, err))
        if not in_window:
            c.note("%s: the run's write ended before recover could start (attempt %d)" % (what, attempt + 1))
            continue
        c.equal(p.returncode, 1, "%s: recover's exit status (%r)" % (what, lines_of(p)))
        c.check(len(lines_of(p)) == 1 and "the run itself writing its trace" in lines_of(p)[0],
                "%s: want one line that the run is writing, got %r" % (what, lines_of(p)))
        check_marks(c, what, d, RACE_MARKS)
        return
    c.check(False, "%s: never caught the run between its in-flight file and its archive" % what)


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def job_after_abort(c, tmp, cli, k):
    what = "MPI_Abort job %d, recovered at once" % k
    top = os.path.join(tmp, "job%d" % k)
    lines_dir = os.path.join(top, "lines")
    os.makedirs(lines_dir)
    out = os.path.join(top, "out")
    e = h.base_env()
    # as a user would run it: mpiexec and its proxies traced too (their
    # slower end lets mpiexec return sooner after the kill, which is the case)
    sanitizers = h.preload_list()[:-1]
    if sanitizers:
        e["LD_PRELOAD"] = ":".join(sanitizers)
    p = subprocess.run([cli, "run", "--output", out, "--", h.env_path("TEST_MPIEXEC"), "-n", "2",
                        h.env_path("TEST_MPI_ABORT_BIN"), lines_dir, "2500"], cwd=top, env=e,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
    c.equal(p.returncode, 7, "%s: mpiexec's exit status" % what)
    r, _ = recover([cli, "recover", out])
    text = r.stdout.decode(errors="replace")
    c.equal((r.returncode, lines_of(r)), (0, []), "%s: recover's exit status and lines" % what)
    c.check(" 2 of 2 ranks" in text, "%s: recover's line: %r" % (what, text))
    deadline = time.monotonic() + 30
    for rank in range(2):
        with open(os.path.join(lines_dir, "rank%d.pid" % rank)) as f:
            pid = int(f.read())
        while time.monotonic() < deadline and alive(pid):
            time.sleep(0.01)
    t = h.open_checked_trace(c, what, os.path.join(out, "traces.otf2")) if r.returncode == 0 else None
    for rank in range(2):
        with open(os.path.join(lines_dir, "rank%d.lines" % rank)) as f:
            text = f.read()
        n = len(text.splitlines()) - (1 if text and not text.endswith("\n") else 0)
        if t is None:
            continue
        view = RankView(t, rank)
        got = [h.Trace.attr(ev, "value") for loc in view.cpu_threads() for ev in view.events[loc]
               if isinstance(ev, otf2.events.Enter) and ev.region.canonical_name == "step"]
        c.check(got == list(range(len(got))) and n <= len(got) <= n + 1,
                "%s: rank %d: %d marks in the archive for %d lines" % (what, rank, len(got), n))


def main():
    c = h.Checker("recover_live")
    cli = h.env_path("TEST_TRACER_CLI")
    tmp = tempfile.mkdtemp(prefix="tracer-test-recover-live-")
    try:
        same_namespace(c, tmp, cli)
        other_namespace(c, tmp, cli)
        ends_while_recover_waits(c, tmp, cli, "dies")
        ends_while_recover_waits(c, tmp, cli, "ends")
        forked_child(c, tmp, cli)
        two_at_once(c, tmp, cli)
        during_the_runs_write(c, tmp, cli)
        if os.environ.get("TEST_MPI_ABORT_BIN"):
            for k in range(JOBS):
                job_after_abort(c, tmp, cli, k)
        else:
            c.note("MPICH not found: the job after MPI_Abort is not run")
        c.equal(SANITIZER_REPORTS, [], "sanitizer reports")
    finally:
        if not os.environ.get("TEST_KEEP"):
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("kept", tmp)
    c.finish()


if __name__ == "__main__":
    main()
