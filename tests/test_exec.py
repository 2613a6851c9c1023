#!/usr/bin/python3
"""programs/exec_image.c (issue 16 item 8): a traced process replaces its
image with exec, without fork. Every image's trace exists, complete:
  chain:   ten images, each exec'd by another exec function (execve, execvp,
           execl, execle, fexecve, execveat, execvpe, execlp, execv):
           TRACER_OUTPUT=t gives t, t.exec1, ... t.exec9, each holding
           exactly its own image's PER marks, "normal end";
  fail:    an exec of a missing file fails as it would (ENOENT) and ends
           nothing: the first image's trace has all 2 PER marks;
  badelf:  an exec that fails after the run ended (ENOEXEC: a file that is
           executable but no program): the program goes on as without
           tracer, untraced; the trace holds the marks before the exec, and
           one tracer: line says so;
  segvexec: the program's SIGSEGV handler (installed before tracing
           starts) execs: nothing that could block runs in the handler (it
           may have interrupted malloc): the first image's journal is saved
           as for a crash, and `tracer recover` finds its PER marks, ended
           by signal 11; the next image is t.exec1 as always;
  silent:  an image that recorded nothing leaves nothing behind (no empty
           claim, no directory), and the next is still t.exec1;
  default: without TRACER_OUTPUT the second image's directory is the
           first's default name (same pid) with .exec1.
Always: exit code and stdout as without tracer, no tracer: line."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import cfgtest as ct  # noqa: E402
import otf2  # noqa: E402

PER = 3000
# segvexec is about the program's handler and tracer's: h.NO_SAN_SIGNALS.
CHAIN = ["execve", "execvp", "execl", "execle", "fexecve", "execveat", "execvpe", "execlp", "execv"]



def check_image(c, what, dir_, image, n, crashed=False):
    """dir_ holds a complete trace of image @image: exactly its marks 0..n-1
    (@crashed: a journal that `tracer recover` makes one of)."""
    anchor = os.path.join(dir_, "traces.otf2")
    if crashed:
        c.equal(sorted(os.listdir(dir_)), ["tracer.journal", "traces.otf2"],
                "%s: files in %s before recover" % (what, os.path.basename(dir_)))
        r = subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover", dir_],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=h.base_env(),
                           timeout=120)
        c.equal(r.returncode, 0, "%s: recover exit code (%r)" % (what, r.stderr))
        c.check("died of a signal, signal 11)" in r.stdout.decode(),
                "%s: recover says %r" % (what, r.stdout.decode()))
    if not c.check(os.path.isfile(anchor) and os.path.getsize(anchor) > 0,
                   "%s: no archive in %s (%r)" % (what, dir_, os.listdir(dir_)
                                                  if os.path.isdir(dir_) else None)):
        return
    c.equal(sorted(os.listdir(dir_)), sorted(["traces", "traces.def", "traces.otf2"]
                                             + (["tracer.journal"] if crashed else [])),
            "%s: files in %s" % (what, os.path.basename(dir_)))
    c.equal(ct.properties(c, anchor, what).get("TRACER::RUN::END"),
            "crashed (signal 11)" if crashed else "normal end", "%s: TRACER::RUN::END" % what)
    t = h.open_checked_trace(c, what, anchor)
    if t is None:
        return
    got = {}
    for loc in t.cpu_threads():
        for ev in t.events[loc]:
            if isinstance(ev, otf2.events.Enter):
                got.setdefault(ev.region.canonical_name, []).append(h.Trace.attr(ev, "value"))
    c.equal(sorted(got), ["image%d" % image], "%s: regions with events" % what)
    values = got.get("image%d" % image, [])
    c.equal(len(values), n, "%s: marks" % what)
    c.check(values == list(range(n)), "%s: mark values are not 0..%d in order" % (what, n - 1))
    c.equal(len(t.events_of(otf2.events.ProgramBegin)), 1, "%s: ProgramBegin" % what)


def case(c, tmp, name, hows, want_dirs, want_marks, output=True, want_lines=(), extra_env=None):
    """want_dirs: directory names in cwd; want_marks: {image: marks}, in the
    order of want_dirs (None: a directory name checked by pattern)."""
    what = name
    cwd = os.path.join(tmp, name)
    os.mkdir(cwd)
    args = [h.env_path("TEST_EXEC_BIN"), str(PER), "1"] + hows
    plain = h.run_or_hang(c, name + " without tracer", args, cwd, traced=False,
                extra_env=dict(extra_env or {}, TRACER_ENABLE="0"))
    p = h.run_or_hang(c, name + " with tracer", args, cwd, traced=True,
            output=os.path.join(cwd, "t") if output else None, extra_env=extra_env)
    if plain is None or p is None:
        return None
    want_stdout = "images: %d\n" % (len(hows) + 1)
    for label, q in (("without tracer", plain), ("with tracer", p)):
        c.equal(q.returncode, 0, "%s: exit code %s (stderr %r)"
                % (what, label, q.stderr.decode(errors="replace")[-2000:]))
        c.equal(q.stdout.decode(errors="replace"), want_stdout, "%s: stdout %s" % (what, label))
        for m in h.SANITIZER_MARKERS:
            c.check(m not in q.stderr.decode(errors="replace"),
                    "%s: sanitizer output %s: %s" % (what, label, m))
    c.equal(h.tracer_lines(p), list(want_lines), "%s: tracer: lines" % what)
    dirs = sorted(os.listdir(cwd), key=lambda d: (len(d), d))
    if want_dirs is not None:
        c.equal(dirs, want_dirs, "%s: directories written" % what)
    for d, (image, n, *crashed) in zip(dirs, want_marks):
        check_image(c, "%s image %d" % (what, image), os.path.join(cwd, d), image, n, *crashed)
    if c.failures:
        print("--- %s stderr:\n%s" % (what, p.stderr.decode(errors="replace")[-3000:]))
    return dirs


def main():
    c = h.Checker("exec")
    tmp = tempfile.mkdtemp(prefix="tracer-test-exec-")
    try:
        case(c, tmp, "chain", CHAIN, ["t"] + ["t.exec%d" % i for i in range(1, len(CHAIN) + 1)],
             [(i, PER) for i in range(1, len(CHAIN) + 2)])
        case(c, tmp, "fail", ["fail"], ["t", "t.exec1"], [(1, 2 * PER), (2, PER)])
        case(c, tmp, "badelf", ["badelf"], ["t", "t.exec1"], [(1, PER), (2, PER)],
             want_lines=["tracer: exec failed (Exec format error); the trace was written before "
                         "it, and this process is no longer traced"])
        case(c, tmp, "segvexec", ["segvexec"], ["t", "t.exec1"], [(1, PER, True), (2, PER)],
             extra_env=h.NO_SAN_SIGNALS)
        case(c, tmp, "silent", ["silent"], ["t.exec1"], [(2, PER)])
        dirs = case(c, tmp, "default", ["execv"], None, [(1, PER), (2, PER)], output=False)
        if dirs is not None:
            m = [re.fullmatch(r"tracer-exec_image-\d{8}-\d{6}-(\d+)(\.exec1)?", d) for d in dirs]
            c.check(len(dirs) == 2 and all(m) and not m[0].group(2) and m[1].group(2)
                    and m[0].group(1) == m[1].group(1),
                    "default: directories %r are not the default name and its .exec1 (one pid)"
                    % dirs)
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
