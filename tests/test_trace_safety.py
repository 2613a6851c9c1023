#!/usr/bin/python3
"""What tracer creates under a permissive umask, and a second user who plants
links in the trace directory while the program runs (issue 16 item 6).

Program: programs/io_marks.c (N marks "work" 0..N-1 through the API found
with dlsym; with "wait" it stops half-way until a line arrives on stdin);
exit status 5 and its stdout are checked against the untraced run.

  a. umask 000, TRACER_KEEP_JOURNAL=1: the trace directory tracer makes
     (TRACER_OUTPUT, and the default ./tracer-<exe>-<date>-<pid>) and every
     directory and file in it (journal, traces.otf2, traces.def, traces/ and
     its files) is not writable by others; the archive holds the N marks; no
     stage directory is left.
  b. the same for `tracer recover` run under umask 000 (the kept journal of
     a run, its archive removed), `tracer convert`'s output file (0664), and
     for an MPI job (programs/mpi_regions.c, 3
     ranks, TRACER_KEEP_JOURNAL=1: the job's directory, journals/ and the
     rank journals too) when MPICH is built.
  As root, a second user (nobody, uid 65534) then acts while the program
  waits; a file and an empty directory of root's (each case its own) are
  the victims:
  c. umask 000, the directory tracer made: the attacker tries to put links
     traces.def -> the victim file, traces -> the victim directory, and
     traces.otf2 (the claim) -> the victim file in it. Nothing can be
     created; the victims are untouched; the archive is complete.
  d. TRACER_OUTPUT is a directory of root's with mode 0777 (tracer uses an
     empty directory of the user's as it is): the attacker puts those links
     there (and removes the claim to do so). The victims are untouched (OTF2
     writes in a private directory and its files are moved in with rename,
     which never follows a link, never over traces.def or traces/); exit
     status and stdout are the untraced run's; one tracer: line says the
     archive could not be moved into place and the journal is kept; no
     stage directory is left; once the links are removed, `tracer recover`
     writes the complete archive.
  e. as d, but the attacker only replaces the claim traces.otf2 with a link
     to the victim file: the archive is written (the link is replaced, not
     followed), complete, and the victim is untouched."""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

N = 2000
NOBODY = 65534
VICTIM_TEXT = b"root's own file\n"


def want_stdout(wait):
    lines = "".join("io_marks: line %d\n" % k for k in range(1000))
    return lines + ("waiting\n" if wait else "") + "io_marks: %d marks\n" % N


def writable_by_others(root):
    """Paths under (and including) root whose mode lets others write."""
    bad = []
    for dirpath, dirnames, filenames in os.walk(root):
        for p in [dirpath] + [os.path.join(dirpath, n) for n in dirnames + filenames]:
            st = os.lstat(p)
            if not stat.S_ISLNK(st.st_mode) and st.st_mode & stat.S_IWOTH:
                bad.append("%s %o" % (os.path.relpath(p, root), stat.S_IMODE(st.st_mode)))
    return sorted(set(bad))


def stages(d):
    return [n for n in os.listdir(d) if n.startswith(".tracer-stage")] if os.path.isdir(d) else []


def check_marks(c, what, d):
    anchor = os.path.join(d, "traces.otf2")
    if not c.check(os.path.isfile(anchor) and os.path.getsize(anchor) > 0,
                   "%s: no archive in %s (%r)" % (what, d, os.listdir(d) if os.path.isdir(d) else None)):
        return
    t = h.open_checked_trace(c, what, anchor)
    if t is not None:
        values = [h.Trace.attr(ev, "value") for _, ev in t.enters("work")]
        c.check(values == list(range(N)), "%s: marks are not exactly 0..%d (%d, first %r)"
                % (what, N - 1, len(values), values[:5]))


def run_io(cwd, output, umask, extra=None, wait=None):
    """io_marks N [wait] under tracer with @umask; @wait(): called while the
    program waits. (rc, stdout, stderr)."""
    env = h.base_env()
    env["LD_PRELOAD"] = ":".join(h.preload_list())
    if output:
        env["TRACER_OUTPUT"] = output
    env.update(extra or {})
    cmd = [h.env_path("TEST_BIN"), str(N)] + (["wait"] if wait else [])
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, umask=umask)
    out = b""
    if wait:
        for _ in range(1001):
            line = p.stdout.readline()
            out += line
            if line in (b"waiting\n", b""):
                break
        wait()
        p.stdin.write(b"go\n")
    try:
        rest, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        rest, err = p.communicate()
    return p.returncode, (out + rest).decode(errors="replace"), err.decode(errors="replace")


def check_program(c, what, rc, out, err, wait=False):
    c.equal(rc, 5, "%s: exit status" % what)
    c.equal(out, want_stdout(wait), "%s: stdout (as without tracer)" % what)
    for marker in h.SANITIZER_MARKERS:
        c.check(marker not in err, "%s: sanitizer report: %r" % (what, marker))


def untraced_matches(c, tmp):
    cwd = os.path.join(tmp, "plain")
    os.mkdir(cwd)
    for wait in (False, True):
        p = subprocess.run([h.env_path("TEST_BIN"), str(N)] + (["wait"] if wait else []), cwd=cwd,
                           env=h.base_env(), input=b"go\n", stdout=subprocess.PIPE, timeout=60)
        c.equal(p.returncode, 5, "untraced run: exit status")
        c.equal(p.stdout.decode(), want_stdout(wait), "untraced run: stdout")


def case_a(c, tmp):
    cwd = os.path.join(tmp, "a")
    os.mkdir(cwd)
    for label, output in (("TRACER_OUTPUT", os.path.join(cwd, "t")), ("default name", None)):
        what = "a umask 000, %s" % label
        before = set(os.listdir(cwd))
        rc, out, err = run_io(cwd, output, 0, {"TRACER_KEEP_JOURNAL": "1"})
        check_program(c, what, rc, out, err)
        c.equal([ln for ln in err.splitlines() if ln.strip()], [], "%s: stderr" % what)
        new = sorted(set(os.listdir(cwd)) - before)
        if not c.check(len(new) == 1, "%s: want one new directory, got %r" % (what, new)):
            continue
        d = os.path.join(cwd, new[0])
        c.equal(sorted(os.listdir(d)), ["tracer.journal", "traces", "traces.def", "traces.otf2"],
                "%s: the trace directory" % what)
        c.equal(writable_by_others(d), [], "%s: writable by others" % what)
        check_marks(c, what, d)


def case_b(c, tmp):
    cwd = os.path.join(tmp, "b")
    os.mkdir(cwd)
    d = os.path.join(cwd, "t")
    what = "b umask 000, tracer recover"
    rc, out, err = run_io(cwd, d, 0, {"TRACER_KEEP_JOURNAL": "1"})
    check_program(c, what, rc, out, err)
    shutil.rmtree(os.path.join(d, "traces"), ignore_errors=True)
    for name in ("traces.def", "traces.otf2"):
        if os.path.exists(os.path.join(d, name)):
            os.unlink(os.path.join(d, name))
    p = subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover", d], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120, umask=0)
    c.equal(p.returncode, 0, "%s: exit status (stderr %r)" % (what, p.stderr.decode(errors="replace")))
    c.equal(writable_by_others(d), [], "%s: writable by others" % what)
    c.equal(stages(d), [], "%s: stage directories left" % what)
    check_marks(c, what, d)
    what = "b umask 000, tracer convert"
    f = os.path.join(cwd, "trace.pftrace")
    p = subprocess.run([h.env_path("TEST_TRACER_CLI"), "convert", "-o", f, d], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120, umask=0)
    c.equal(p.returncode, 0, "%s: exit status (stderr %r)" % (what, p.stderr.decode(errors="replace")))
    if c.check(os.path.isfile(f), "%s: no output" % what):
        c.equal(oct(stat.S_IMODE(os.stat(f).st_mode)), oct(0o664), "%s: mode of the output" % what)

    mpiexec, prog = os.environ.get("TEST_MPIEXEC"), os.environ.get("TEST_MPI_BIN")
    if not (mpiexec and prog):
        c.note("b: no MPI program built: the MPI job under umask 000 is not checked")
        return
    what = "b umask 000, MPI job of 3 ranks"
    d = os.path.join(cwd, "job")
    env = h.base_env()
    env.update({"HYDRA_LAUNCHER": "fork", "TRACER_OUTPUT": d, "TRACER_KEEP_JOURNAL": "1"})
    p = subprocess.run([mpiexec, "-n", "3", "env", "LD_PRELOAD=" + ":".join(h.preload_list()), prog], cwd=cwd,
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180, umask=0)
    c.equal(p.returncode, 0, "%s: exit status (stderr %r)" % (what, p.stderr.decode(errors="replace")[-2000:]))
    if c.check(os.path.isdir(d), "%s: no directory %s" % (what, d)):
        c.equal(sorted(os.listdir(d)), ["journals", "traces", "traces.def", "traces.otf2"],
                "%s: the job's directory" % what)
        c.equal(sorted(os.listdir(os.path.join(d, "journals"))) if os.path.isdir(os.path.join(d, "journals"))
                else None, ["rank0.journal", "rank1.journal", "rank2.journal"], "%s: journals" % what)
        c.equal(writable_by_others(d), [], "%s: writable by others" % what)


class Victims:
    """A file and an empty directory of root's, of each case its own."""

    def __init__(self, top):
        self.file = os.path.join(top, "victim.txt")
        self.dir = os.path.join(top, "victimdir")
        with open(self.file, "wb") as f:
            f.write(VICTIM_TEXT)
        os.chmod(self.file, 0o644)
        os.mkdir(self.dir, 0o755)

    def check(self, c, what):
        with open(self.file, "rb") as f:
            c.equal(f.read(), VICTIM_TEXT, "%s: the victim file's content" % what)
        c.equal(os.listdir(self.dir), [], "%s: the victim directory" % what)


def attack(d, links):
    """As nobody: each (name, target) link made in @d; returns {name: "made" or the error}."""
    code = ("import json, os, sys\n"
            "d, links = sys.argv[1], json.loads(sys.argv[2])\n"
            "out = {}\n"
            "for name, target in links:\n"
            "    p = os.path.join(d, name)\n"
            "    try:\n"
            "        if name == 'traces.otf2' and os.path.lexists(p):\n"
            "            os.unlink(p)\n"
            "        os.symlink(target, p)\n"
            "        out[name] = 'made'\n"
            "    except OSError as e:\n"
            "        out[name] = e.strerror\n"
            "print(json.dumps(out))\n")
    p = subprocess.run([sys.executable, "-c", code, d, json.dumps(links)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, user=NOBODY, group=NOBODY, extra_groups=[], timeout=60,
                       env={"PATH": "/usr/bin:/bin"})
    try:
        return json.loads(p.stdout.decode())
    except ValueError:
        return {"error": p.stderr.decode(errors="replace")}


def case_c(c, tmp):
    top = os.path.join(tmp, "c")
    os.mkdir(top, 0o755)
    v = Victims(top)
    d = os.path.join(top, "t")
    what = "c umask 000, planting in the directory tracer made"
    result = {}
    links = [("traces.def", v.file), ("traces", v.dir), ("traces.otf2", v.file)]
    rc, out, err = run_io(top, d, 0, wait=lambda: result.update(attack(d, links)))
    check_program(c, what, rc, out, err, wait=True)
    c.equal(result, {n: "Permission denied" for n, _ in links}, "%s: what the attacker could do" % what)
    v.check(c, what)
    c.equal(writable_by_others(d), [], "%s: writable by others" % what)
    check_marks(c, what, d)


def case_d(c, tmp):
    top = os.path.join(tmp, "d")
    os.mkdir(top, 0o755)
    v = Victims(top)
    d = os.path.join(top, "t")
    os.mkdir(d)
    os.chmod(d, 0o777)
    what = "d a directory of root's with mode 0777, links planted"
    result = {}
    links = [("traces.def", v.file), ("traces", v.dir), ("traces.otf2", v.file)]
    rc, out, err = run_io(top, d, 0o022, wait=lambda: result.update(attack(d, links)))
    check_program(c, what, rc, out, err, wait=True)
    c.equal(result, {n: "made" for n, _ in links}, "%s: the attacker's links" % what)
    v.check(c, what)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    c.check(len(lines) == 1 and lines[0].startswith("tracer: writer: ") and "into place" in lines[0] and
            "tracer.journal is kept" in lines[0], "%s: want one tracer: line that the archive could not be "
            "moved into place and the journal is kept, got %r" % (what, lines))
    c.equal(stages(d), [], "%s: stage directories left" % what)
    c.check(os.path.isfile(os.path.join(d, "tracer.journal")), "%s: the journal was not kept" % what)
    for name, _ in links:
        os.unlink(os.path.join(d, name))
    p = subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover", d], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    c.equal(p.returncode, 0, "%s: `tracer recover` once the links are gone (stderr %r)"
            % (what, p.stderr.decode(errors="replace")))
    check_marks(c, what + ", recovered", d)
    v.check(c, what + ", recovered")


def case_e(c, tmp):
    top = os.path.join(tmp, "e")
    os.mkdir(top, 0o755)
    v = Victims(top)
    d = os.path.join(top, "t")
    os.mkdir(d)
    os.chmod(d, 0o777)
    what = "e a directory of root's with mode 0777, the claim replaced by a link"
    result = {}
    links = [("traces.otf2", v.file)]
    rc, out, err = run_io(top, d, 0o022, wait=lambda: result.update(attack(d, links)))
    check_program(c, what, rc, out, err, wait=True)
    c.equal(result, {"traces.otf2": "made"}, "%s: the attacker's link" % what)
    c.equal([ln for ln in err.splitlines() if ln.strip()], [], "%s: stderr" % what)
    v.check(c, what)
    c.check(not os.path.islink(os.path.join(d, "traces.otf2")), "%s: traces.otf2 is still the link" % what)
    check_marks(c, what, d)


def main():
    c = h.Checker("trace_safety")
    tmp = tempfile.mkdtemp(prefix="tracer-test-trace-safety-")
    os.chmod(tmp, 0o755)  # the second user must reach the trace directories
    try:
        untraced_matches(c, tmp)
        case_a(c, tmp)
        case_b(c, tmp)
        if os.geteuid() == 0:
            case_c(c, tmp)
            case_d(c, tmp)
            case_e(c, tmp)
        else:
            c.note("not root: the second user's attacks (c, d, e) are not run")
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
