#!/usr/bin/python3
"""Issue 34, item 6: what another user puts at the in-flight file's name
never hangs `tracer recover`, nor is trusted.

The journal names the run's in-flight file in /dev/shm, where anyone may
create names; a run that ended removed its file, so the name is free. Here
programs/live_marks.c makes N marks and ends normally with
TRACER_WRITE_AT_END=0 (its journal holds everything, no archive yet); then
the test puts at that name, in turn: a FIFO of another user (nobody), a
FIFO of the journal's owner, a symbolic link to a file of the owner's, a
regular file of another user. Each time `tracer recover` must end within
60 s (an open of the FIFO for reading would block for ever: nobody writes
to it), exit 0, print one `tracer:` line that names the path and says it is
not used, write the archive from the journal with exactly the marks
0..N-1, and leave what was planted where it was. Another user's things are
made only as root; otherwise only the owner's are tried."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

N = 3000
NOBODY = 65534


def one(c, tmp, kind, plant):
    what = "a %s at the in-flight file's name" % kind
    d = os.path.join(tmp, kind.replace(" ", "-"))
    p = subprocess.run([h.env_path("TEST_BIN"), str(N)], input=b"mark\n", stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=h.run_env(True, output=d, extra_env={"TRACER_WRITE_AT_END": "0"}),
                       timeout=300)
    c.equal((p.returncode, p.stdout.decode().split()), (0, ["marked", str(N), "done", str(N)]),
            "%s: the program's run" % what)
    with open(os.path.join(d, "tracer.journal"), "rb") as f:
        m = re.search(rb"/dev/shm/tracer-\d+-[0-9a-f]{16}", f.read())
    if not c.check(m, "%s: the journal names no in-flight file" % what):
        return
    path = m.group(0).decode()
    if not c.check(not os.path.lexists(path), "%s: the run left %s" % (what, path)):
        return
    plant(path, tmp)
    try:
        try:
            r = subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover", d], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=h.base_env(), timeout=60)
        except subprocess.TimeoutExpired:
            c.check(False, "%s: tracer recover hangs (killed after 60 s)" % what)
            return
        lines = h.tracer_lines(r)
        err = r.stderr.decode(errors="replace")
        for marker in h.SANITIZER_MARKERS:
            c.check(marker not in err, "%s: sanitizer report from recover: %r" % (what, marker))
        c.equal(r.returncode, 0, "%s: recover's exit status (%r)" % (what, lines))
        c.check(len(lines) == 1 and path in lines[0] and "not used" in lines[0],
                "%s: want one line that %s is not used, got %r" % (what, path, lines))
        t = h.open_checked_trace(c, what, os.path.join(d, "traces.otf2")) if r.returncode == 0 else None
        if t is not None:
            got = [h.Trace.attr(ev, "value") for _, ev in t.enters("live")]
            c.check(got == list(range(N)), "%s: %d marks in the archive, want exactly 0..%d" % (what, len(got), N - 1))
        c.check(os.path.lexists(path), "%s: recover removed what was planted" % what)
    finally:
        if os.path.lexists(path):
            os.unlink(path)


def fifo(owner):
    def plant(path, tmp):
        os.mkfifo(path, 0o666)
        if owner is not None:
            os.chown(path, owner, owner)
    return plant


def link(path, tmp):
    target = os.path.join(tmp, "target")
    with open(target, "wb") as f:
        f.write(b"\0" * 8192)
    os.symlink(target, path)


def others_file(path, tmp):
    with open(path, "wb") as f:
        f.write(b"\0" * 8192)
    os.chown(path, NOBODY, NOBODY)


def main():
    c = h.Checker("recover_planted")
    tmp = tempfile.mkdtemp(prefix="tracer-test-recover-planted-")
    try:
        root = os.geteuid() == 0
        if root:
            one(c, tmp, "FIFO of another user", fifo(NOBODY))
        one(c, tmp, "FIFO of the owner", fifo(None))
        one(c, tmp, "symbolic link", link)
        if root:
            one(c, tmp, "file of another user", others_file)
        else:
            c.note("not root: nothing of another user's was planted")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
