#!/usr/bin/python3
"""Every TRACER_* value type with good and bad values (src/core/config_table.c).

Bad value of a variable (a configuration error):
  - the program runs as it does untraced: same exit code and stdout.
    programs/basic.c (preloaded) exits 0 with its usual output; user_api.c
    (linked with libtracer) behaves as with TRACER_ENABLE=0 (its register
    calls then return 0, documented in tracer.h, and it reports that);
  - stderr is exactly one line, "tracer: <NAME>='<value>' ...", which states
    the expected form of the value and that the run is not traced;
  - no trace is written (no TRACER_OUTPUT directory, nothing in the cwd).
Good value: no stderr (TRACER_VERBOSE=1 prints its own tracer: lines), a
trace is written and records TRACER::CONFIG::<NAME> = "<value> (environment)".
Unknown TRACER_* name: one warning naming the closest known variable; the
run is still traced. TRACER_STRICT=1: a configuration error exits with
status 1 before main (empty stdout), naming the variable; good values or
only an unknown name run normally.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import cfgtest as ct  # noqa: E402

# The expected form each type's message must state (tr_cfg_form); any one.
FORMS = {
    "bool": ["1, 0, yes, no, true, false, on or off"],
    "integer": ["an integer from 1 to 9"],
    "size": ["a size"],
    "duration": ["a duration"],
    "path": ["a path"],
    "choice": ["one of auto, tsc, monotonic"],
    "list": ["all, none or a comma-separated list of constructs, data_ops, kernels, "
             "link_maps, host_states"],
    "globs": ["a comma-separated list of patterns"],
    "ranges": ["all or a comma-separated list of numbers and ranges such as 0-3,8",
               "numbers from 0 to 2147483647"],
}

# (type, variable, good values, bad values)
CASES = [
    ("bool", "TRACER_VERBOSE", ["1", "0", "yes", "No", "TRUE", "off"], ["maybe", ""]),
    ("integer", "TRACER_MPIT_LEVEL", ["1", "9"],
     ["0", "10", "-1", "3x", "99999999999999999999", ""]),
    ("size", "TRACER_MIN_BYTES", ["0", "4096", "64k", "16M", "1G", "2KiB", "100B"],
     ["-1", "12Q", "k", "1.5M", "99999999999999999999", "20000000000T", ""]),
    ("duration", "TRACER_CALIBRATION", ["1ms", "500us", "0.5s", "20ms", "0ms"],
     ["20", "-5ms", "5 ms", "abc", ""]),
    ("path", "TRACER_OUTPUT", [], ["", "/tmp/" + "p" * 4000]),
    ("choice", "TRACER_CLOCK", ["auto", "tsc", "monotonic"], ["rdtsc"]),
    ("list", "TRACER_OMPT", ["all", "none", "kernels,data_ops"],
     ["kernel", "constructs,,kernels", ""]),
    ("globs", "TRACER_REGIONS", ["*", "inner*,!*x*"],
     [",", "a,,b", "!", ",".join("p%d" % i for i in range(33)), "x" * 1024]),
    ("ranges", "TRACER_DEVICES", ["all", "0", "0-3,8"],
     ["3-1", "a", "1-", "-1", "0,,1", "99999999999", ",".join(str(i) for i in range(65))]),
]

# One good value per type, also run under the offload program.
BASIC_GOOD = [("TRACER_VERBOSE", "off"), ("TRACER_MPIT_LEVEL", "1"), ("TRACER_MIN_BYTES", "16M"),
              ("TRACER_CALIBRATION", "500us"), ("TRACER_CLOCK", "monotonic"),
              ("TRACER_OMPT", "kernels,data_ops"), ("TRACER_REGIONS", "*"),
              ("TRACER_DEVICES", "0-3,8")]

VERBOSE_ON = {"1", "yes", "true", "on"}

ALL_GOOD = {
    "TRACER_ENABLE": "1", "TRACER_VERBOSE": "0", "TRACER_STRICT": "1", "TRACER_OMPT": "all",
    "TRACER_DEVICES": "all", "TRACER_MIN_BYTES": "0", "TRACER_RANKS": "all",
    "TRACER_REGIONS": "*", "TRACER_MPIT_EVENTS": "*", "TRACER_MPIT_LEVEL": "9",
    "TRACER_CLOCK": "auto", "TRACER_CALIBRATION": "0ms",
}


def tsc_invariant():
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return False
    return "constant_tsc" in flags and "nonstop_tsc" in flags


def check_bad(c, r, ttype, name, value, baseline):
    """One configuration error: untraced behaviour, one line, nothing written."""
    c.equal(r.rc, baseline[0], "%s: exit code (as untraced)" % r.what)
    c.equal(r.out, baseline[1], "%s: stdout (as untraced)" % r.what)
    ct.check_no_sanitizer(c, r)
    lines = r.lines
    # the message quotes at most 200 characters of the value
    prefix = "tracer: %s='%s'" % (name, value[:200])
    if c.check(len(lines) == 1 and lines[0].startswith(prefix),
               "%s: want exactly one stderr line starting %r, got %r" % (r.what, prefix, lines)):
        line = lines[0]
        c.check(any(f in line for f in FORMS[ttype]),
                "%s: the message does not state the expected form (%s): %r"
                % (r.what, " / ".join(repr(f) for f in FORMS[ttype]), line))
        c.check("this run is not traced" in line,
                "%s: the message does not say the run is not traced: %r" % (r.what, line))
    ct.check_untraced(c, r)


def check_good(c, r, prog, name, value):
    verbose = name == "TRACER_VERBOSE" and value.lower() in VERBOSE_ON
    tsc_note = name == "TRACER_CLOCK" and value == "tsc" and not tsc_invariant()
    ct.check_normal(c, r, prog, stderr_empty=not (verbose or tsc_note))
    if verbose:
        c.check(r.lines and all(l.startswith("tracer: ") for l in r.lines),
                "%s: verbose lines must all start with 'tracer: ': %r" % (r.what, r.lines))
        c.check(any(l.startswith("tracer: trace written to ") for l in r.lines),
                "%s: no 'trace written to' line: %r" % (r.what, r.lines))
    elif tsc_note:
        c.equal(r.lines, ["tracer: TRACER_CLOCK=tsc: this CPU has no invariant TSC; using "
                          "CLOCK_MONOTONIC"], "%s: stderr (CPU without invariant TSC)" % r.what)
    if ct.check_traced(c, r):
        props = ct.properties(c, r.anchor, r.what)
        c.equal(props.get("TRACER::CONFIG::" + name), "%s (environment)" % value,
                "%s: property TRACER::CONFIG::%s" % (r.what, name))


def main():
    c = h.Checker("config_values")
    run = ct.Runner("config_values")
    try:
        ua = ct.user_api()
        bp = ct.basic(c)

        # user_api untraced: its behaviour with TRACER_ENABLE=0.
        base = run.run(ua, {"TRACER_ENABLE": "0"})
        c.equal(base.lines, [], "user_api TRACER_ENABLE=0: stderr")
        ct.check_untraced(c, base)
        ua_untraced = (base.rc, base.out)
        c.check(base.rc is not None and base.rc >= 0, "user_api TRACER_ENABLE=0: rc %r" % base.rc)
        basic_untraced = (0, ct.BASIC_STDOUT)

        # --- bad values -------------------------------------------------
        for ttype, name, _, bads in CASES:
            for value in bads:
                r = run.run(ua, {name: value}, what="user_api %s=%r" % (name, value[:60]))
                check_bad(c, r, ttype, name, value, ua_untraced)
                if bp:
                    r = run.run(bp, {name: value}, what="basic %s=%r" % (name, value[:60]))
                    check_bad(c, r, ttype, name, value, basic_untraced)

        # --- good values ------------------------------------------------
        for ttype, name, goods, _ in CASES:
            for value in goods:
                r = run.run(ua, {name: value}, what="user_api %s=%r" % (name, value))
                check_good(c, r, ua, name, value)
        if bp:
            for name, value in BASIC_GOOD:
                r = run.run(bp, {name: value}, what="basic %s=%r" % (name, value))
                check_good(c, r, bp, name, value)

        # --- unknown names ----------------------------------------------
        for prog in [ua] + ([bp] if bp else []):
            for unknown, value, meant in (("TRACER_DEVICE", "0", "TRACER_DEVICES"),
                                          ("TRACER_OUPUT", "/tmp/x", "TRACER_OUTPUT")):
                r = run.run(prog, {unknown: value}, what="%s %s=%s" % (prog.name, unknown, value))
                ct.check_normal(c, r, prog, stderr_empty=False)
                lines = r.lines
                if c.check(len(lines) == 1 and lines[0].startswith("tracer: "),
                           "%s: want one 'tracer: ' warning line, got %r" % (r.what, lines)):
                    c.check(unknown + " " in lines[0] and "did you mean %s?" % meant in lines[0],
                            "%s: warning names neither %s nor 'did you mean %s?': %r"
                            % (r.what, unknown, meant, lines[0]))
                    c.check("not traced" not in lines[0], "%s: a warning must not stop tracing: %r"
                            % (r.what, lines[0]))
                if ct.check_traced(c, r):
                    props = ct.properties(c, r.anchor, r.what)
                    c.check("TRACER::CONFIG::" + unknown not in props,
                            "%s: the unknown name is recorded as a property" % r.what)
                    if meant == "TRACER_DEVICES":
                        c.equal(props.get("TRACER::CONFIG::TRACER_DEVICES"), "all (default)",
                                "%s: TRACER_DEVICES property (the unknown name is ignored)"
                                % r.what)
                    else:
                        c.equal(props.get("TRACER::CONFIG::TRACER_OUTPUT"),
                                "%s (environment)" % r.output,
                                "%s: TRACER_OUTPUT property" % r.what)

        # --- TRACER_STRICT ----------------------------------------------
        strict_bad = [("TRACER_MIN_BYTES", "12Q"), ("TRACER_DEVICES", "3-1"),
                      ("TRACER_CLOCK", "rdtsc"), ("TRACER_OUTPUT", ""), ("TRACER_VERBOSE", "maybe")]
        for prog in [ua] + ([bp] if bp else []):
            for strict in ("1", "yes"):
                for name, value in strict_bad:
                    r = run.run(prog, {"TRACER_STRICT": strict, name: value},
                                what="%s TRACER_STRICT=%s %s=%r" % (prog.name, strict, name, value))
                    c.equal(r.rc, 1, "%s: exit status" % r.what)
                    c.equal(r.out, "", "%s: stdout (main must not run)" % r.what)
                    c.check(r.lines and all(l.startswith("tracer: ") for l in r.lines),
                            "%s: stderr lines must start with 'tracer: ': %r" % (r.what, r.lines))
                    c.check(any(l.startswith("tracer: %s='%s'" % (name, value)) for l in r.lines),
                            "%s: stderr does not name %s='%s': %r" % (r.what, name, value, r.lines))
                    ct.check_no_sanitizer(c, r)
                    ct.check_untraced(c, r)
            # all good values, strict: a normal traced run
            env = dict(ALL_GOOD)
            r = run.run(prog, env, what="%s TRACER_STRICT=1 with all variables good" % prog.name)
            ct.check_normal(c, r, prog)
            if ct.check_traced(c, r):
                props = ct.properties(c, r.anchor, r.what)
                for name, value in sorted(env.items()):
                    c.equal(props.get("TRACER::CONFIG::" + name), "%s (environment)" % value,
                            "%s: property of %s" % (r.what, name))
            # only an unknown name, strict: a warning, a normal traced run
            r = run.run(prog, {"TRACER_STRICT": "1", "TRACER_DEVICE": "0"},
                        what="%s TRACER_STRICT=1 TRACER_DEVICE=0" % prog.name)
            ct.check_normal(c, r, prog, stderr_empty=False)
            c.check(len(r.lines) == 1 and "did you mean TRACER_DEVICES?" in r.lines[0],
                    "%s: want one warning line naming TRACER_DEVICES, got %r" % (r.what, r.lines))
            ct.check_traced(c, r)
            # TRACER_STRICT=0: a bad value is not fatal
            r = run.run(prog, {"TRACER_STRICT": "0", "TRACER_CLOCK": "rdtsc"},
                        what="%s TRACER_STRICT=0 TRACER_CLOCK=rdtsc" % prog.name)
            check_bad(c, r, "choice", "TRACER_CLOCK", "rdtsc",
                      ua_untraced if prog is ua else basic_untraced)
    finally:
        run.cleanup()
    c.finish()


if __name__ == "__main__":
    main()
