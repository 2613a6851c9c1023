#!/usr/bin/python3
"""Where the trace goes, and that tracer never writes anywhere unsafe
(docs/usage.md "Tracing a program", docs/trace-model.md "Archive").

Program: USER_API_BIN (programs/user_api.c, linked with libtracer: it
records without a preload and always writes a trace); OFFLOAD_BIN
(programs/exit_code.c, exits 3) for TRACER_ENABLE=0 and for exit-code
preservation under the preload.

  a. TRACER_OUTPUT=<tmp>/t three times -> t, t.1, t.2; the first archive is
     untouched byte for byte (and mtime); runs 2 and 3 print exactly one
     `tracer:` line naming t.1 / t.2; a trailing slash names the same dir.
  b. an existing empty directory of ours is used as it is.
  c. refused in place (never written through, never modified), trace in
     <path>.1 with one `tracer:` line: a symlink to a directory (also with a
     trailing slash), a dangling symlink (its target is not created), a
     regular file, a directory of another user (root only); a planted
     symlink at <dir>.1 is skipped too (-> <dir>.2).
  d. umask 077 -> no group/other bits anywhere; umask 022 -> dirs 0755,
     files without group/other write; umask 002 -> trace dir 0775.
  e. uncreatable TRACER_OUTPUT (/proc/nonexistent/x, under a regular file,
     a 300-byte component) -> exactly one `tracer:` line, exit code and
     stdout unchanged, no crash; also for the offload program (exit 3).
  g. TRACER_ENABLE=0/off/no/false -> nothing written (neither TRACER_OUTPUT
     nor a default dir), no stderr, exit code and stdout unchanged.
  h. TRACER_OUTPUT=<tmp>/new/a/b/t, its parents missing: made (umask 022 ->
     0755, 077 -> 0700), no `tracer:` line, the archive there.
  (f, the default ./tracer-<exe>-<date>-<pid>, is checked by test_user_api.py.)
"""
import os
import shutil
import stat
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import extra as x    # noqa: E402

OFFLOAD_STDOUT = "exit_code: x[99]=198, returning 3\n"


class Ctx:
    def __init__(self, c, tmp):
        self.c = c
        self.tmp = tmp
        self.cwd = os.path.join(tmp, "cwd")
        os.mkdir(self.cwd)
        self.bin = h.env_path("USER_API_BIN")

    def p(self, *names):
        return os.path.join(self.tmp, *names)

    def user_api(self, output, what, umask=None, extra=None):
        env = {"TRACER_OUTPUT": output}
        env.update(extra or {})
        rc, out, err = x.run([self.bin], self.cwd, extra=env, umask=umask)
        c = self.c
        x.check_no_signal(c, rc, what)
        c.equal(rc, 0, "%s: exit code" % what)
        c.equal(out, x.USER_API_STDOUT, "%s: stdout" % what)
        x.check_no_sanitizer(c, err, what)
        return err

    def cwd_clean(self, what):
        self.c.equal(os.listdir(self.cwd), [], "%s: files written into the cwd" % what)

    def archive_ok(self, d, what):
        anchor = os.path.join(d, "traces.otf2")
        c = self.c
        if not c.check(os.path.isfile(anchor) and not os.path.islink(d),
                       "%s: no archive at %s (listing %r)" % (
                           what, anchor, sorted(os.listdir(d)) if os.path.isdir(d) else None)):
            return
        try:
            t = h.Trace(anchor)
        except Exception as e:   # unreadable archive
            c.check(False, "%s: OTF2 reader failed on %s: %r" % (what, anchor, e))
            return
        # user_api's 3 threads: a worker may take the location of one whose
        # events all came before; each thread's first Enter names its tid
        spans = sum(1 for loc in t.cpu_threads() for ev in t.events[loc] if h.Trace.attr(ev, "thread") is not None)
        c.equal(spans, 3, "%s: host threads (first Enters with `thread`) in %s" % (what, anchor))

    def no_message(self, err, what):
        self.c.equal(x.stderr_lines(err), [], "%s: stderr" % what)

    def one_message(self, err, what, must_name):
        line = x.check_one_line(self.c, err, "tracer:", what)
        if line is not None:
            self.c.check(must_name in line, "%s: the tracer: line %r does not name %s"
                         % (what, line, must_name))


def case_a(k):
    t = k.p("t")
    err = k.user_api(t, "a run 1")
    k.no_message(err, "a run 1")
    k.archive_ok(t, "a run 1")
    before = x.snapshot(t)
    k.c.check("traces.def" in before, "a run 1: no traces.def")

    for n in (1, 2):
        err = k.user_api(t, "a run %d" % (n + 1))
        k.one_message(err, "a run %d" % (n + 1), t + ".%d" % n)
        k.archive_ok(t + ".%d" % n, "a run %d" % (n + 1))
        after = x.snapshot(t)
        k.c.check(after == before, "a run %d: the first archive %s was modified: %r"
                  % (n + 1, t, sorted(r for r in set(before) | set(after)
                                      if before.get(r) != after.get(r))))
    k.c.check(not os.path.exists(t + ".3"), "a: %s.3 exists after 3 runs" % t)
    # a trailing slash names the same directory
    err = k.user_api(t + "//", "a trailing slash")
    k.one_message(err, "a trailing slash", t + ".3")
    k.archive_ok(t + ".3", "a trailing slash")
    k.c.check(x.snapshot(t) == before, "a trailing slash: the first archive was modified")
    k.cwd_clean("a")


def case_b(k):
    d = k.p("pre")
    os.mkdir(d, 0o700)
    err = k.user_api(d, "b empty dir")
    k.no_message(err, "b empty dir")
    k.archive_ok(d, "b empty dir")
    k.c.check(not os.path.exists(d + ".1"), "b: %s.1 created although %s was empty" % (d, d))
    k.c.equal(stat.S_IMODE(os.stat(d).st_mode), 0o700, "b: mode of the user's dir")
    k.cwd_clean("b")


def refused(k, path, what, guard, must_exist_as=None):
    """Run with TRACER_OUTPUT=path (a planted non-directory); guard is a
    directory that must stay exactly as it is."""
    before = x.snapshot(guard)
    link_before = os.readlink(path.rstrip("/")) if os.path.islink(path.rstrip("/")) else None
    err = k.user_api(path, what)
    base = path.rstrip("/")
    k.c.equal(x.snapshot(guard), before, "%s: contents of %s (must not be written through)"
              % (what, guard))
    if link_before is not None:
        k.c.check(os.path.islink(base) and os.readlink(base) == link_before,
                  "%s: the symlink %s was replaced or changed" % (what, base))
    return err, base


def case_c(k):
    target = k.p("target")
    os.mkdir(target)
    link = k.p("link")
    os.symlink(target, link)
    err, base = refused(k, link, "c symlink", k.tmp + "/target")
    k.one_message(err, "c symlink", link + ".1")
    k.c.equal(os.listdir(target), [], "c symlink: target directory")
    k.archive_ok(link + ".1", "c symlink")
    k.c.check(not os.path.islink(link + ".1"), "c symlink: %s.1 is a symlink" % link)

    err, _ = refused(k, link + "/", "c symlink with trailing slash", target)
    k.one_message(err, "c symlink with trailing slash", link + ".2")
    k.archive_ok(link + ".2", "c symlink with trailing slash")
    k.c.equal(os.listdir(target), [], "c symlink with trailing slash: target directory")

    # dangling symlink: mkdir must not create its target
    nowhere = k.p("nowhere")
    dang = k.p("dang")
    os.symlink(nowhere, dang)
    err = k.user_api(dang, "c dangling symlink")
    k.c.check(not os.path.lexists(nowhere), "c dangling symlink: its target %s was created"
              % nowhere)
    k.c.check(os.path.islink(dang), "c dangling symlink: the link was replaced")
    k.one_message(err, "c dangling symlink", dang + ".1")
    k.archive_ok(dang + ".1", "c dangling symlink")

    # a regular file
    f = k.p("afile")
    with open(f, "w") as fp:
        fp.write("user data\n")
    err = k.user_api(f, "c regular file")
    with open(f) as fp:
        k.c.equal(fp.read(), "user data\n", "c regular file: its contents")
    k.one_message(err, "c regular file", f + ".1")
    k.archive_ok(f + ".1", "c regular file")

    # a symlink planted at the first suffix is skipped as well
    s = k.p("s")
    target2 = k.p("target2")
    os.mkdir(target2)
    k.user_api(s, "c suffix run 1")
    os.symlink(target2, s + ".1")
    err = k.user_api(s, "c suffix run 2")
    k.c.equal(os.listdir(target2), [], "c planted %s.1: target directory" % s)
    k.c.check(os.path.islink(s + ".1"), "c planted %s.1: the link was replaced" % s)
    k.one_message(err, "c planted suffix link", s + ".2")
    k.archive_ok(s + ".2", "c planted suffix link")

    # an empty directory of another user is not ours to fill
    if os.geteuid() == 0:
        o = k.p("other")
        os.mkdir(o, 0o777)
        os.chown(o, 65534, 65534)
        err = k.user_api(o, "c dir of another user")
        k.c.equal(os.listdir(o), [], "c dir of another user: its contents")
        k.one_message(err, "c dir of another user", o + ".1")
        k.archive_ok(o + ".1", "c dir of another user")
    else:
        k.c.note("c: not root, the other-user directory case is not run")
    k.cwd_clean("c")


def modes(root):
    out = {root: stat.S_IMODE(os.lstat(root).st_mode)}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            out[p] = stat.S_IMODE(os.lstat(p).st_mode)
    return out


def case_d(k):
    d = k.p("u077")
    k.user_api(d, "d umask 077", umask=0o077)
    k.archive_ok(d, "d umask 077")
    if os.path.isdir(d):
        m = modes(d)
        bad = {p: oct(v) for p, v in m.items() if v & 0o077}
        k.c.check(not bad, "d umask 077: group/other bits set: %r" % bad)
        k.c.equal(oct(m[d]), oct(0o700), "d umask 077: mode of the trace dir")
    d = k.p("u022")
    k.user_api(d, "d umask 022", umask=0o022)
    k.archive_ok(d, "d umask 022")
    if os.path.isdir(d):
        m = modes(d)
        k.c.equal(oct(m[d]), oct(0o755), "d umask 022: mode of the trace dir")
        bad = {p: oct(v) for p, v in m.items() if v & 0o022}
        k.c.check(not bad, "d umask 022: group/other write bits: %r" % bad)
        dirs = {p: oct(v) for p, v in m.items() if os.path.isdir(p) and v != 0o755}
        k.c.check(not dirs, "d umask 022: directories not 0755: %r" % dirs)
    # umask 002: group write stays, so a hard-coded mode shows
    d = k.p("u002")
    k.user_api(d, "d umask 002", umask=0o002)
    k.archive_ok(d, "d umask 002")
    if os.path.isdir(d):
        m = modes(d)
        k.c.equal(oct(m[d]), oct(0o775), "d umask 002: mode of the trace dir")
        bad = {p: oct(v) for p, v in m.items() if v & 0o002}
        k.c.check(not bad, "d umask 002: other write bits: %r" % bad)


def case_e(k, offload):
    f = k.p("plainfile")
    with open(f, "w") as fp:
        fp.write("x\n")
    bad_paths = ["/proc/nonexistent/x", f + "/x", k.p("a" * 300)]
    if os.geteuid() != 0:
        ro = k.p("readonly")
        os.mkdir(ro, 0o555)
        bad_paths.append(os.path.join(ro, "x"))
    for path in bad_paths:
        what = "e TRACER_OUTPUT=%s" % (path if len(path) < 80 else path[:60] + "...")
        err = k.user_api(path, what)
        x.check_one_line(k.c, err, "tracer:", what)
    with open(f) as fp:
        k.c.equal(fp.read(), "x\n", "e: the regular file's contents")
    k.cwd_clean("e")
    if offload is None:
        return
    for path in bad_paths[:2]:
        what = "e offload TRACER_OUTPUT=%s" % path
        rc, out, err = x.run([offload], k.cwd, extra={"TRACER_OUTPUT": path}, preload=True)
        x.check_no_signal(k.c, rc, what)
        k.c.equal(rc, 3, "%s: exit code" % what)
        k.c.equal(out, OFFLOAD_STDOUT, "%s: stdout" % what)
        x.check_no_sanitizer(k.c, err, what)
        x.check_one_line(k.c, err, "tracer:", what)
    k.cwd_clean("e offload")


def case_g(k, offload):
    for value in ("0", "off", "no", "false"):
        for output in (k.p("disabled"), None):
            what = "g TRACER_ENABLE=%s TRACER_OUTPUT=%s" % (value, output)
            env = {"TRACER_ENABLE": value}
            if output:
                env["TRACER_OUTPUT"] = output
            if offload is not None:
                rc, out, err = x.run([offload], k.cwd, extra=env, preload=True)
                x.check_no_signal(k.c, rc, what)
                k.c.equal(rc, 3, "%s: exit code" % what)
                k.c.equal(out, OFFLOAD_STDOUT, "%s: stdout" % what)
                k.c.equal(x.stderr_lines(err), [], "%s: stderr" % what)
            # user_api: tracer_region_register() returns 0 when disabled
            # (include/tracer.h), which this program reports itself; only
            # check that nothing is written and tracer says nothing.
            rc, out, err = x.run([k.bin], k.cwd, extra=env)
            x.check_no_signal(k.c, rc, what + " (user_api)")
            k.c.equal(x.stderr_lines(err), [], "%s (user_api): stderr" % what)
            if output:
                k.c.check(not os.path.lexists(output), "%s: %s was created" % (what, output))
            k.cwd_clean(what)


def case_h(k):
    """TRACER_OUTPUT whose parents do not exist: made as `mkdir -p` would,
    less the umask (issue 35, item 8: the run was not traced, one line at
    the start said "cannot create ... No such file or directory")."""
    for umask, want in ((0o022, 0o755), (0o077, 0o700)):
        top = k.p("new%o" % umask)
        d = os.path.join(top, "a", "b", "t")
        what = "h TRACER_OUTPUT with missing parents, umask %03o" % umask
        err = k.user_api(d, what, umask=umask)
        k.no_message(err, what)
        k.archive_ok(d, what)
        for parent in (top, os.path.join(top, "a"), os.path.join(top, "a", "b")):
            k.c.equal(oct(stat.S_IMODE(os.stat(parent).st_mode)), oct(want), "%s: mode of %s" % (what, parent))
    k.cwd_clean("h")


def main():
    c = h.Checker("output_dir")
    tmp = tempfile.mkdtemp(prefix="tracer-test-output-dir-")
    k = Ctx(c, tmp)
    offload = os.environ.get("OFFLOAD_BIN") or None
    if offload is None:
        c.note("OFFLOAD_BIN not set (no offload compiler): offload cases not run")
    try:
        case_a(k)
        case_b(k)
        case_c(k)
        case_d(k)
        case_e(k, offload)
        case_g(k, offload)
        case_h(k)
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
