#!/usr/bin/python3
"""programs/handled_fault.c (issue 16 item 7): a fault the program handles
itself is not the end of the run.
  recover, nodefer, later: the program's SIGSEGV handler (installed before
      tracing starts; with SA_NODEFER and a plain longjmp; installed after)
      recovers from FAULTS faults: exit 0 and stdout as without tracer, no
      tracer: line, and the archive written at exit holds every mark, in
      order, and says "normal end";
  oneshot, reset: the handler (SA_RESETHAND; restoring SIG_DFL and
      returning) lets a later fault kill the process: it dies of SIGSEGV as
      without tracer, one tracer: line says where the journal is, and
      `tracer recover` finds every mark up to the fatal fault and says the
      run died of signal 11."""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import cfgtest as ct  # noqa: E402
import otf2  # noqa: E402

FAULTS = 5
PER = 20000
# Sanitizer runtimes catch SIGSEGV themselves (and refuse the program's
# handler): the point here is the program's handler and tracer's.
ENV = h.NO_SAN_SIGNALS


def mark_values(t):
    out = []
    for loc in t.cpu_threads():
        for ev in t.events[loc]:
            if isinstance(ev, otf2.events.Enter) and ev.region.canonical_name == "step":
                out.append(h.Trace.attr(ev, "value"))
    return out


def check_marks(c, what, t, n):
    got = mark_values(t)
    c.equal(len(got), n, "%s: marks in the trace" % what)
    c.check(got == list(range(n)), "%s: mark values are not exactly 0..%d in order (first "
            "wrong at %r)" % (what, n - 1, next((i for i, v in enumerate(got) if v != i), None)))


def case(c, tmp, mode, faults, want_rc, want_recovered, want_marks):
    what = mode
    cwd = os.path.join(tmp, mode)
    os.mkdir(cwd)
    out = os.path.join(cwd, "t")
    args = [h.env_path("TEST_HANDLED_FAULT_BIN"), mode, str(faults), str(PER)]
    plain = h.run_or_hang(c, mode + " without tracer", args, cwd, traced=False,
                extra_env=dict(ENV, TRACER_ENABLE="0"))
    p = h.run_or_hang(c, mode + " with tracer", args, cwd, traced=True, output=out, extra_env=ENV)
    if plain is None or p is None:
        return
    want_stdout = "faults recovered: %d\n" % want_recovered
    for label, q in (("without tracer", plain), ("with tracer", p)):
        c.equal(q.returncode, want_rc, "%s: exit status %s" % (what, label))
        c.equal(q.stdout.decode(errors="replace"), want_stdout, "%s: stdout %s" % (what, label))
        err = q.stderr.decode(errors="replace")
        for m in h.SANITIZER_MARKERS:
            c.check(m not in err, "%s: sanitizer output %s: %s" % (what, label, m))
    # a run that SIGSEGV ends says where its journal is (issue 34 item 3)
    want_lines = [] if want_rc == 0 else [
        "tracer: SIGSEGV ends the run; every event recorded is in the journal %s/tracer.journal: "
        "'tracer recover %s' writes the trace" % (out, out)]
    c.equal(h.tracer_lines(p), want_lines, "%s: tracer: lines" % what)
    c.equal(sorted(os.listdir(cwd)), ["t"], "%s: directories written" % what)
    if want_rc == 0:
        c.check(not os.path.exists(os.path.join(out, "tracer.journal")),
                "%s: journal left in %s" % (what, out))
        how = "normal end"
    else:
        if not c.check(os.path.isfile(os.path.join(out, "tracer.journal")),
                       "%s: no journal in %s: %r" % (what, out, os.listdir(out)
                                                     if os.path.isdir(out) else None)):
            return
        r = subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover", out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=h.base_env(),
                           timeout=120)
        c.equal(r.returncode, 0, "%s: tracer recover exit code (stderr %r)"
                % (what, r.stderr.decode(errors="replace")))
        c.check(re.search(r"died of a signal, signal %d\)" % signal.SIGSEGV, r.stdout.decode()),
                "%s: recover says %r" % (what, r.stdout.decode()))
        how = "crashed (signal %d)" % signal.SIGSEGV
    anchor = os.path.join(out, "traces.otf2")
    if not c.check(os.path.isfile(anchor) and os.path.getsize(anchor) > 0,
                   "%s: no archive in %s" % (what, out)):
        return
    c.equal(ct.properties(c, anchor, what).get("TRACER::RUN::END"), how,
            "%s: TRACER::RUN::END" % what)
    t = h.open_checked_trace(c, what, anchor)
    if t is not None:
        check_marks(c, what, t, want_marks)
        if want_rc == 0:
            pe = t.events_of(otf2.events.ProgramEnd)
            c.check(len(pe) == 1 and pe[0][1].exit_status == 0, "%s: ProgramEnd exit status 0"
                    % what)
    if c.failures:
        print("--- %s stderr:\n%s" % (what, p.stderr.decode(errors="replace")[-3000:]))


def main():
    c = h.Checker("handled_fault")
    tmp = tempfile.mkdtemp(prefix="tracer-test-handled-fault-")
    try:
        modes = ["recover", "nodefer", "later"]
        # GCC 12's ThreadSanitizer cannot run nodefer even without tracer
        # (the program dies of SIGSEGV): the handler leaves by siglongjmp
        # with SA_NODEFER, and TSan then takes everything after, exit
        # included, as running inside a signal handler. Plain, ASan and
        # UBSan builds run it.
        if "tsan" in os.environ.get("TEST_SANITIZER_PRELOAD", ""):
            modes.remove("nodefer")
            c.note("nodefer skipped under ThreadSanitizer (the program alone dies under it)")
        for mode in modes:
            case(c, tmp, mode, FAULTS, 0, FAULTS, (FAULTS + 1) * PER)
        case(c, tmp, "oneshot", 0, -signal.SIGSEGV, 1, 2 * PER)
        case(c, tmp, "reset", FAULTS, -signal.SIGSEGV, FAULTS, (FAULTS + 1) * PER)
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
