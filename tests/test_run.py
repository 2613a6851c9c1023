#!/usr/bin/python3
"""`tracer run [options] [--] COMMAND` (tools/cmd_run.c).

  a. a malformed value (--devices x), an unknown option, a missing value, no
     command: exit 2, exactly one `tracer: run:` line, COMMAND not run.
  b. COMMAND not found: exit 127 and one `tracer: run:` line.
  c. --help lists every TRACER_* variable (from `tracer info --config
     --markdown`) with its option, type and default.
  d. options reach COMMAND as TRACER_* variables (bools: --x, --no-x,
     --x=0); libtracer.so is put first in LD_PRELOAD, after sanitizer
     runtimes, existing entries kept.
  e. `tracer run --output D --devices 0 -- programs/device1` (target regions
     on devices 1 and 0): exit status and stdout of the program, a trace in
     D with events of device 0 only.
  f. MPI: `tracer run --output D -- mpiexec.mpich -n 2 user_api` and
     `mpiexec.mpich -n 2 tracer run --output D -- user_api` (processes that
     never call MPI_Init) each give two traces, D.rank0 and D.rank1, and
     nothing in the working directory (an MPI program's one archive D:
     test readme_commands).
  g. a malformed TRACER_* value inherited from the environment
     (TRACER_MIN_BYTES=abc, TRACER_MODE=foo, TRACER_MAX_MEMORY=1k): exit 2,
     one `tracer: run:` line per bad value naming the variable, its value and
     the expected form (the library's own words), COMMAND not run; an option
     for that variable overrides it and the command runs with the option's
     value; good inherited values reach COMMAND unchanged.
"""
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import extra as x    # noqa: E402
from otf2_trace import Trace  # noqa: E402

DEVICE1_STDOUT = "device1: sum=43800\n"


def sanitizer_preload():
    return ":".join(p for p in re.split(r"[:\s]+", os.environ.get("TEST_SANITIZER_PRELOAD", "")) if p)


def tracer(args, cwd, extra=None, timeout=180):
    # Sanitizer builds: the programs are not instrumented, so the sanitizer
    # runtimes must be preloaded for libtracer.so; tracer run keeps them first.
    env = {"LD_PRELOAD": sanitizer_preload() or None}
    if extra:
        env.update(extra)
    return x.run([h.env_path("TEST_TRACER_CLI")] + args, cwd, extra=env, timeout=timeout)


def variables(cwd):
    rc, out, err = tracer(["info", "--config", "--markdown"], cwd)
    rows = re.findall(r"^\| `(TRACER_\w+)` \| ([a-z ]+) \| `([^`]*)` \|", out, re.M)
    return rows


def case_a(c, cwd):
    marker = os.path.join(cwd, "ran")
    for args, word in ((["--devices", "x"], "--devices 'x' is not "),
                       (["--min-bytes=12Q"], "--min-bytes '12Q' "),
                       (["--verbose=maybe"], "--verbose 'maybe' "),
                       (["--mpit-level", "12"], "--mpit-level '12' "),
                       (["--no-output"], "'--no-output'"),
                       (["--bogus", "1"], "'--bogus'"),
                       (["--no-verbose=1"], "'--no-verbose=1'")):
        rc, out, err = tracer(["run"] + args + ["--", "touch", marker], cwd)
        what = "run %s" % " ".join(args)
        x.check_no_signal(c, rc, what)
        c.equal(rc, 2, "%s: exit code" % what)
        c.equal(out, "", "%s: stdout" % what)
        line = x.check_one_line(c, err, "tracer: run: ", what)
        if line:
            c.check(word in line, "%s: the line does not say %r: %r" % (what, word, line))
        c.check(not os.path.exists(marker), "%s: the command ran" % what)
    for args in (["run"], ["run", "--verbose"], ["run", "--output"], ["run", "--"]):
        rc, out, err = tracer(args, cwd)
        c.equal(rc, 2, "%r: exit code" % args)
        x.check_one_line(c, err, "tracer: run: ", repr(args))


def case_b(c, cwd):
    for cmd in ("/nonexistent/program", "tracer-no-such-command"):
        rc, out, err = tracer(["run", "--", cmd], cwd)
        x.check_no_signal(c, rc, cmd)
        c.equal(rc, 127, "run %s: exit code" % cmd)
        line = x.check_one_line(c, err, "tracer: run: ", "run %s" % cmd)
        if line:
            c.check(cmd in line, "run %s: the line does not name it: %r" % (cmd, line))


def case_c(c, cwd, rows):
    rc, out, err = tracer(["run", "--help"], cwd)
    c.equal(rc, 0, "run --help: exit code")
    c.check(out.startswith("usage: tracer run"), "run --help: %r" % out[:100])
    c.check(rows, "no variables from tracer info --config --markdown")
    for name, typ, default in rows:
        opt = "--" + name[len("TRACER_"):].lower().replace("_", "-")
        m = re.search(r"^  (%s\S*)(?:, --no-\S+)?(?: [A-Z]+)?\s+%s \(%s, default %s\)$"
                      % (re.escape(opt), name, re.escape(typ), re.escape(default)), out, re.M)
        c.check(m, "run --help does not list %s as %s with type %r and default %r"
                % (name, opt, typ, default))
    rc2, out2, _ = tracer(["help", "run"], cwd)
    c.equal((rc2, out2), (rc, out), "help run vs run --help")


def case_d(c, cwd):
    show = 'printf "%s|%s|%s|%s|%s" "$TRACER_VERBOSE" "$TRACER_ENABLE" "$TRACER_DEVICES" ' \
           '"$TRACER_MIN_BYTES" "$LD_PRELOAD"'
    lib = h.env_path("TEST_TRACER_LIB")
    san = sanitizer_preload()
    rc, out, err = tracer(["run", "--verbose", "--no-enable", "--devices=0-1", "--min-bytes", "64k",
                           "--", "/bin/sh", "-c", show], cwd)
    c.equal(rc, 0, "run sh: exit code")
    parts = out.split("|")
    if c.equal(len(parts), 5, "run sh: output %r" % out):
        c.equal(parts[:4], ["1", "0", "0-1", "64k"], "run sh: TRACER_* values")
        preload = parts[4].split(":")
        want_first = len([p for p in san.split(":") if p])
        c.check(len(preload) > want_first and os.path.realpath(preload[want_first])
                == os.path.realpath(lib), "run sh: LD_PRELOAD %r does not have %s after the "
                "sanitizer runtimes" % (parts[4], lib))
    rc, out, err = tracer(["run", "--verbose=0", "--", "/bin/sh", "-c", show], cwd,
                          extra={"LD_PRELOAD": ":".join(p for p in (san, "/nonexistent/keep.so") if p)})
    parts = out.split("|")
    if c.equal(len(parts), 5, "run sh (LD_PRELOAD set): output %r" % out):
        c.equal(parts[0], "0", "run --verbose=0: TRACER_VERBOSE")
        c.check(parts[4].endswith(":/nonexistent/keep.so"),
                "run: existing LD_PRELOAD entries not kept: %r" % parts[4])


def case_e(c, cwd):
    prog = os.environ.get("TEST_BIN")
    if not prog:
        c.note("no offload compiler: the --devices case is skipped")
        return
    out_dir = os.path.join(cwd, "dev0")
    rc, out, err = tracer(["run", "--output", out_dir, "--devices", "0", "--", prog], cwd)
    c.equal(rc, 0, "run device1: exit code (stderr %r)" % err[-500:])
    c.equal(out, DEVICE1_STDOUT, "run device1: stdout")
    x.check_no_sanitizer(c, err, "run device1")
    anchor = os.path.join(out_dir, "traces.otf2")
    if not c.check(os.path.isfile(anchor), "run device1: no trace at %s" % anchor):
        return
    t = Trace(anchor)
    c.equal(sorted(t.streams_of_device()), [0], "run --devices 0: devices with a stream")
    devices = set()
    for _, ev in t.all_events():
        d = Trace.attr(ev, "device")
        if d is not None:
            devices.add(d)
    c.equal(devices, {0}, "run --devices 0: 'device' attributes in the trace")
    c.equal(len(t.enters("kernel")), 1, "run --devices 0: kernels")


def case_f(c, cwd):
    mpiexec = shutil.which("mpiexec.mpich")
    prog = h.env_path("USER_API_BIN")
    if not mpiexec:
        c.note("mpiexec.mpich not found: the MPI cases are skipped")
        return
    cli = h.env_path("TEST_TRACER_CLI")
    for label, cmd in (("tracer run -- mpiexec", ["run", "--output", "{D}", "--", mpiexec, "-n", "2", prog]),
                       ("mpiexec -- tracer run", None)):
        work = tempfile.mkdtemp(prefix="cwd-", dir=cwd)
        d = os.path.join(cwd, "mpi-%d" % len(os.listdir(cwd)))
        if cmd:
            rc, out, err = tracer([a.replace("{D}", d) for a in cmd], work)
        else:
            env = {"LD_PRELOAD": sanitizer_preload() or None}
            rc, out, err = x.run([mpiexec, "-n", "2", cli, "run", "--output", d, "--", prog], work,
                                 extra=env, timeout=180)
        x.check_no_signal(c, rc, label)
        c.equal(rc, 0, "%s: exit code (stderr %r)" % (label, err[-500:]))
        c.equal(out, x.USER_API_STDOUT * 2, "%s: stdout" % label)
        # Each rank's archive is named after its launcher rank.
        for path in (d + ".rank0", d + ".rank1"):
            c.check(os.path.isfile(os.path.join(path, "traces.otf2")), "%s: no trace in %s" % (label, path))
        for path in (d, d + ".1", d + ".rank2"):
            c.check(not os.path.exists(path), "%s: an unexpected trace %s" % (label, path))
        c.check("tracer:" not in err, "%s: tracer: lines on stderr: %r" % (label, err[-300:]))
        c.equal(os.listdir(work), [], "%s: files in the working directory" % label)


def case_g(c, cwd):
    marker = os.path.join(cwd, "ran-env")
    bad = (("TRACER_MIN_BYTES", "abc", "is not a size in bytes"),
           ("TRACER_MODE", "foo", "is not one of user, machine"),
           ("TRACER_MAX_MEMORY", "1k", "is below the minimum of 131072 bytes"))
    for name, value, words in bad:
        rc, out, err = tracer(["run", "--", "touch", marker], cwd, extra={name: value})
        what = "%s=%s in the environment" % (name, value)
        x.check_no_signal(c, rc, what)
        c.equal(rc, 2, "%s: exit code" % what)
        c.equal(out, "", "%s: stdout" % what)
        line = x.check_one_line(c, err, "tracer: run: ", what)
        if line:
            c.check(line.startswith("tracer: run: %s='%s' " % (name, value)) and words in line,
                    "%s: the line does not name the variable, value and %r: %r" % (what, words, line))
        c.check(not os.path.exists(marker), "%s: the command ran" % what)
    # Two at once: one line each, still nothing run.
    rc, out, err = tracer(["run", "--", "touch", marker], cwd,
                          extra={name: value for name, value, _ in bad[:2]})
    c.equal(rc, 2, "two bad values: exit code")
    lines = x.stderr_lines(err)
    c.equal(sorted(l.split("=")[0] for l in lines),
            ["tracer: run: TRACER_MIN_BYTES", "tracer: run: TRACER_MODE"], "two bad values: lines %r" % lines)
    c.check(not os.path.exists(marker), "two bad values: the command ran")
    # An option overrides the environment; good values pass unchanged.
    show = 'printf "%s|%s" "$TRACER_MODE" "$TRACER_MIN_BYTES"'
    rc, out, err = tracer(["run", "--mode", "machine", "--", "/bin/sh", "-c", show], cwd,
                          extra={"TRACER_MODE": "foo", "TRACER_MIN_BYTES": "64k"})
    c.equal((rc, out, err), (0, "machine|64k", ""), "--mode over TRACER_MODE=foo, TRACER_MIN_BYTES=64k")


def main():
    c = h.Checker("run")
    tmp = tempfile.mkdtemp(prefix="tracer-test-run-")
    try:
        rows = variables(tmp)
        case_a(c, tmp)
        case_b(c, tmp)
        case_c(c, tmp, rows)
        case_d(c, tmp)
        case_e(c, tmp)
        case_f(c, tmp)
        case_g(c, tmp)
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
