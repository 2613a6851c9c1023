#!/usr/bin/python3
"""programs/crash.c and programs/offload_crash.c: runs that do not end
normally (SIGSEGV, abort, _exit, SIGKILL) leave a journal that
`tracer recover DIR` turns into an archive holding every event recorded
before the end (the crash handler flushes everything, on a fault, abort,
SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU sent to the process, and _exit
right after the last event; SIGKILL comes 3 flush intervals after it). A
death by a signal prints one tracer: line naming the journal and `tracer
recover` (test_signal_death.py has the other signals). A SIGHUP ignored
before tracing starts stays ignored; a SIGTERM handler of the program's own
runs, and the run goes on. The application's behaviour (exit
status, its own SIGSEGV handler) is unchanged. Also `tracer recover`'s
errors: a directory with a complete trace (exit 1 unless --force, which
replaces it whole, stale location files included, silently), a missing
directory (exit 1), usage errors (exit 2)."""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import otf2  # noqa: E402

N = 5000
FLUSH_MS = 50
# Sanitizer runtimes catch SIGSEGV/SIGABRT themselves (report + exit 1);
# the point here is tracer's handler, so they are told to leave them alone.
NO_SAN_SIGNALS = ("handle_segv=0:handle_abort=0:handle_sigbus=0:handle_sigfpe=0:"
                  "handle_sigill=0")


def env_for(traced_dir=None, extra=None):
    env = {
        "ASAN_OPTIONS": "detect_leaks=0:verify_asan_link_order=0:" + NO_SAN_SIGNALS,
        "UBSAN_OPTIONS": "print_stacktrace=1:" + NO_SAN_SIGNALS,
        "TSAN_OPTIONS": (os.environ.get("TSAN_OPTIONS", "") + ":" + NO_SAN_SIGNALS).lstrip(":"),
        "TRACER_FLUSH_INTERVAL": "%dms" % FLUSH_MS,
    }
    if traced_dir is None:
        env["TRACER_ENABLE"] = "0"
    if extra:
        env.update(extra)
    return env


def tracer_lines(p):
    return [ln for ln in p.stderr.decode(errors="replace").splitlines()
            if ln.startswith("tracer:")]


def no_sanitizer(c, what, p):
    err = p.stderr.decode(errors="replace")
    for marker in h.SANITIZER_MARKERS + ("AddressSanitizer", "UndefinedBehaviorSanitizer"):
        c.check(marker not in err, "%s: sanitizer output %r" % (what, marker))


def recover(dir_, *opts):
    return subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover"] + list(opts) + [dir_],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=h.base_env(),
                          timeout=120)


def read_archive(c, what, dir_):
    anchor = os.path.join(dir_, "traces.otf2")
    if not c.check(os.path.isfile(anchor) and os.path.getsize(anchor) > 0,
                   "%s: no archive in %s (%r)" % (what, dir_, os.listdir(dir_))):
        return None
    t = h.open_checked_trace(c, what, anchor)
    if t is None:
        return None
    return t


def marks(t, name="step"):
    out = []
    for loc in t.cpu_threads():
        for ev in t.events[loc]:
            if isinstance(ev, otf2.events.Enter) and ev.region.region_role == otf2.enums.RegionRole.ARTIFICIAL:
                out.append((ev.region.canonical_name, h.Trace.attr(ev, "value")))
    return out


def check_marks(c, what, t, n):
    got = marks(t)
    values = [v for _, v in got]
    names = sorted({name for name, _ in got})
    c.equal(len(values), n, "%s: marks recovered" % what)
    c.check(values == list(range(n)), "%s: mark values are not exactly 0..%d in order "
            "(first wrong at %r)" % (what, n - 1, next((i for i, v in enumerate(values)
                                                        if v != i), None)))
    c.equal(names, ["step"], "%s: names of the mark region in the recovered trace "
            "(the name was registered before any event)" % what)


def death_line(signame, out):
    """The one line a run that a signal ends prints (issue 34 item 3)."""
    return ("tracer: %s ends the run; every event recorded is in the journal %s/tracer.journal: "
            "'tracer recover %s' writes the trace" % (signame, out, out))


NO_TRACE_YET = ("no trace written yet, only the run's journal (the run died, still runs, or ran with "
                "TRACER_WRITE_AT_END=0): 'tracer recover %s' writes it")


def check_readers_before_recover(c, what, tmp, out):
    """`tracer summary` and `tracer convert` on the directory of a run that
    died say what to run (issue 35, item 3): exit 1 and one line naming the
    recover command, not "not an OTF2 archive: Zero bytes to read!"."""
    cli = h.env_path("TEST_TRACER_CLI")
    for cmd, verb in ((["summary", out], "read trace"),
                      (["convert", out, "-o", os.path.join(tmp, what + ".pftrace")], "convert")):
        q = subprocess.run([cli] + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=h.base_env(),
                           timeout=120)
        c.equal((q.returncode, q.stderr.decode(errors="replace").splitlines()),
                (1, ["tracer: %s: cannot %s '%s': %s" % (cmd[0], verb, out, NO_TRACE_YET % out)]),
                "%s: tracer %s before tracer recover (exit code, stderr)" % (what, cmd[0]))


def crash_case(c, tmp, mode, want_rc, want_stdout, extra_args=(), n=N, want_marks=None,
               want_how=None, signame=None):
    what = mode
    bin_ = h.env_path("TEST_CRASH_BIN")
    args = [bin_, mode, str(n)] + list(extra_args)
    plain = h.run(args, tmp, traced=False, extra_env=env_for())
    out = os.path.join(tmp, "t-" + mode)
    traced = h.run(args, tmp, traced=True, output=out, extra_env=env_for(out))
    for label, p in (("without tracer", plain), ("with tracer", traced)):
        c.equal(p.returncode, want_rc, "%s: exit status %s" % (what, label))
        c.equal(p.stdout.decode(errors="replace"), want_stdout, "%s: stdout %s" % (what, label))
        no_sanitizer(c, "%s %s" % (what, label), p)
    # a signal's end says where the journal is (the program's own handler
    # ending the process included); _exit and SIGKILL say nothing
    c.equal(tracer_lines(traced), [death_line(signame, out)] if signame else [],
            "%s: tracer: lines of the dying run" % what)
    if not c.check(os.path.isfile(os.path.join(out, "tracer.journal")),
                   "%s: no journal in %s: %r" % (what, out, os.listdir(out)
                                                 if os.path.isdir(out) else None)):
        return None
    check_readers_before_recover(c, what, tmp, out)
    r = recover(out)
    c.equal(r.returncode, 0, "%s: tracer recover exit code (stderr %r)"
            % (what, r.stderr.decode(errors="replace")))
    c.equal(tracer_lines(r), [], "%s: tracer recover stderr of an intact journal" % what)
    if want_how:
        c.check(re.search(want_how, r.stdout.decode()),
                "%s: recover says %r, want %r" % (what, r.stdout.decode(), want_how))
    t = read_archive(c, what, out)
    if t is not None and want_marks is not None:
        check_marks(c, what, t, want_marks)
    return t


def main():
    c = h.Checker("crash")
    tmp = tempfile.mkdtemp(prefix="tracer-test-crash-")
    try:
        sleep = str(3 * FLUSH_MS)
        crash_case(c, tmp, "segv", -signal.SIGSEGV, "", want_marks=N,
                   want_how=r"died of a signal, signal %d\)" % signal.SIGSEGV, signame="SIGSEGV")
        crash_case(c, tmp, "abort", -signal.SIGABRT, "", want_marks=N,
                   want_how=r"died of a signal, signal %d\)" % signal.SIGABRT, signame="SIGABRT")
        # _exit right after the last event: everything is saved, and the
        # journal says how the run ended
        crash_case(c, tmp, "_exit", 5, "", extra_args=["0"], want_marks=N,
                   want_how=r"ended in _exit, status 5\)")
        crash_case(c, tmp, "kill", -signal.SIGKILL, "", extra_args=[sleep], want_marks=N,
                   want_how=r"did not end normally")
        # the signals that end a process from outside (a batch system's
        # time limit, Ctrl-C, a launcher after MPI_Abort): everything
        # recorded is saved at once, and the process dies of the signal
        for mode, sig in (("term", signal.SIGTERM), ("int", signal.SIGINT), ("hup", signal.SIGHUP),
                          ("quit", signal.SIGQUIT), ("xcpu", signal.SIGXCPU)):
            crash_case(c, tmp, mode, -sig, "", want_marks=N,
                       want_how=r"died of a signal, signal %d\)" % sig, signame=signal.Signals(sig).name)
        # SIGHUP ignored before tracing starts (nohup) stays ignored, and a
        # SIGTERM handler of the program's own still runs: both runs go on
        # and end normally, with the trace written at exit
        # (vfork: the child's _exit after a failed exec is not the end of
        # the parent's run, which shares its memory)
        for mode, want_stdout in (("ignored", ""), ("ownterm", "own term\n"), ("vfork", "")):
            out = os.path.join(tmp, "t-" + mode)
            args = [h.env_path("TEST_CRASH_BIN"), mode, str(N)]
            plain = h.run(args, tmp, traced=False, extra_env=env_for())
            traced = h.run(args, tmp, traced=True, output=out, extra_env=env_for(out))
            for label, p in (("without tracer", plain), ("with tracer", traced)):
                c.equal(p.returncode, 0, "%s: exit status %s" % (mode, label))
                c.equal(p.stdout.decode(errors="replace"), want_stdout, "%s: stdout %s" % (mode, label))
            c.equal(tracer_lines(traced), [], "%s: tracer: lines" % mode)
            c.check(not os.path.exists(os.path.join(out, "tracer.journal")),
                    "%s: the journal is still there: the run did not end normally" % mode)
            t = read_archive(c, mode, out)
            if t is not None:
                check_marks(c, mode, t, N + 1)
        # a stack overflow: the handler runs on tracer's alternate signal
        # stack (sanitizers handle this fault themselves: plain builds only)
        if not os.environ.get("TEST_SANITIZER_PRELOAD"):
            crash_case(c, tmp, "overflow", -signal.SIGSEGV, "", want_marks=N,
                       want_how=r"died of a signal, signal %d\)" % signal.SIGSEGV, signame="SIGSEGV")
        # the application's own SIGSEGV handler, installed before tracing
        # starts, still runs (tracer chains to it) and its exit code stays
        crash_case(c, tmp, "own", 3, "own handler\n", want_marks=N,
                   want_how=r"died of a signal, signal %d\)" % signal.SIGSEGV, signame="SIGSEGV")

        # an open user region at the crash: closed, marked incomplete
        t = crash_case(c, tmp, "region", -signal.SIGSEGV, "", signame="SIGSEGV")
        if t is not None:
            seq = []
            for loc in t.cpu_threads():
                for ev in t.events[loc]:
                    if isinstance(ev, (otf2.events.Enter, otf2.events.Leave)):
                        # by role (mark: ARTIFICIAL, region: FUNCTION); the
                        # names are checked on their own below
                        seq.append((type(ev).__name__, str(ev.region.region_role).split(".")[-1],
                                    h.Trace.attr(ev, "value"), h.Trace.attr(ev, "incomplete")))
            want = []
            for i in range(N):
                want += [("Enter", "ARTIFICIAL", i, None), ("Leave", "ARTIFICIAL", None, None)]
            want += [("Enter", "FUNCTION", None, None), ("Enter", "ARTIFICIAL", N, None),
                     ("Leave", "ARTIFICIAL", None, None), ("Leave", "FUNCTION", None, 1)]
            c.equal(sorted({ev.region.canonical_name for _, ev in t.enters()}), ["open", "step"],
                    "region: region names in the recovered trace (registered before any event)")
            if seq != want:
                bad = next((i for i, (a, b) in enumerate(zip(seq, want)) if a != b),
                           min(len(seq), len(want)))
                c.check(False, "region: Enter/Leave sequence differs at %d: got %r, want %r "
                        "(lengths %d / %d)" % (bad, seq[bad:bad + 4], want[bad:bad + 4],
                                                len(seq), len(want)))

        # a normal run with the journal kept: recover refuses to replace the
        # trace unless --force
        out = os.path.join(tmp, "t-return")
        p = h.run([h.env_path("TEST_CRASH_BIN"), "return", str(N)], tmp, traced=True,
                  output=out, extra_env=env_for(out, {"TRACER_KEEP_JOURNAL": "1"}))
        c.equal(p.returncode, 0, "return: exit code")
        c.equal(tracer_lines(p), [], "return: tracer: lines")
        anchor = os.path.join(out, "traces.otf2")
        before = open(anchor, "rb").read() if os.path.isfile(anchor) else None
        c.check(before, "return: no archive")
        r = recover(out)
        c.equal(r.returncode, 1, "recover on a complete trace: exit code")
        c.equal(len(tracer_lines(r)), 1, "recover on a complete trace: tracer: lines (%r)"
                % r.stderr.decode(errors="replace"))
        c.equal(r.stderr.decode(errors="replace").count("\n"), 1,
                "recover on a complete trace: stderr lines")
        c.check("--force" in r.stderr.decode(errors="replace"),
                "recover on a complete trace: the line does not mention --force")
        c.equal(r.stdout, b"", "recover on a complete trace: stdout")
        c.check(os.path.isfile(anchor) and open(anchor, "rb").read() == before,
                "recover without --force changed the existing trace")
        # a location file the new archive does not have (an older trace's)
        stale = os.path.join(out, "traces", "999.evt")
        with open(stale, "wb") as f:
            f.write(b"stale")
        r = recover(out, "--force")
        c.equal(r.returncode, 0, "recover --force: exit code (%r)" % r.stderr.decode(errors="replace"))
        c.equal(r.stderr.decode(errors="replace"), "", "recover --force: stderr (replacing needs no warning)")
        c.check(not os.path.exists(stale), "recover --force kept a location file of the replaced trace")
        c.check(re.search(r"the run ended normally", r.stdout.decode()),
                "recover --force: stdout %r" % r.stdout.decode())
        c.check(os.path.isfile(os.path.join(out, "tracer.journal")),
                "recover --force removed the journal")
        t = read_archive(c, "recover --force", out)
        if t is not None:
            check_marks(c, "recover --force", t, N)
            pe = t.events_of(otf2.events.ProgramEnd)
            c.check(len(pe) == 1 and pe[0][1].exit_status == 0,
                    "recover --force: ProgramEnd exit status")

        # missing directory, missing journal, usage errors
        r = recover(os.path.join(tmp, "no-such-dir"))
        c.equal(r.returncode, 1, "recover on a missing dir: exit code")
        c.equal(len(tracer_lines(r)), 1, "recover on a missing dir: tracer: lines")
        empty = os.path.join(tmp, "empty")
        os.mkdir(empty)
        r = recover(empty)
        c.equal(r.returncode, 1, "recover on a dir without journal: exit code")
        c.equal(len(tracer_lines(r)), 1, "recover on a dir without journal: tracer: lines")
        c.equal(os.listdir(empty), [], "recover on a dir without journal wrote files")
        cli = h.env_path("TEST_TRACER_CLI")
        for args in ([], ["--bogus", empty], [empty, empty]):
            q = subprocess.run([cli, "recover"] + args, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=h.base_env())
            c.equal(q.returncode, 2, "recover %r: exit code" % args)
            c.equal(len(tracer_lines(q)), 1, "recover %r: tracer: lines" % args)

        # offload: SIGSEGV inside a kernel run by the host device
        bin_ = os.environ.get("TEST_OFFLOAD_CRASH_BIN")
        if bin_:
            otmp = os.path.join(tmp, "offload")
            os.mkdir(otmp)
            plain = h.run([bin_, "crash"], otmp, traced=False, extra_env=env_for())
            out = os.path.join(otmp, "t")
            traced = h.run([bin_, "crash"], otmp, traced=True, output=out,
                           extra_env=env_for(out))
            for label, p in (("without", plain), ("with", traced)):
                c.equal(p.returncode, -signal.SIGSEGV, "offload: exit status %s tracer" % label)
                no_sanitizer(c, "offload %s tracer" % label, p)
            r = recover(out)
            c.equal(r.returncode, 0, "offload: recover exit code (%r)" % r.stderr)
            t = read_archive(c, "offload", out)
            if t is not None:
                targets = t.intervals("target")
                c.equal(len(targets), 2, "offload: target regions")
                c.equal([h.Trace.attr(lv, "incomplete") for _, _, lv in targets], [None, 1],
                        "offload: incomplete attribute of the two targets' Leaves")
                kernels = t.intervals("kernel")
                c.equal(len(kernels), 2, "offload: kernels")
                c.equal([h.Trace.attr(lv, "incomplete") for _, _, lv in
                         sorted(kernels, key=lambda k: k[1].time)], [None, 1],
                        "offload: incomplete attribute of the two kernels' Leaves")
                if len(kernels) == 2:
                    k = sorted(kernels, key=lambda k: k[1].time)[1]
                    c.check(k[2].time > k[1].time, "offload: the crashed kernel has no duration "
                            "(it must last until the crash)")
                # every data op of the first target made it
                c.equal(len(t.enters("transfer to device")) >= 1, True,
                        "offload: transfers to device")
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
