#!/usr/bin/python3
"""`tracer summary`'s report (src/summary/) and TRACER_SUMMARY=1, the same
report printed by libtracer.so at the end of a run.

Every archive is also read with the Python OTF2 reader (lib/summary_truth.py:
the same rules, written independently), and the JSON must equal it: regions
(count, inclusive, exclusive time per display name, canonical name and
location kind, in the report's order), per_device (transfers per direction:
count, bytes, time; peak memory), mpit_by_source and config (= the anchor's
TRACER::CONFIG::* properties). The text's new lines must say what the JSON
says (numbers formatted as the text formats them), after the lines the
report printed before (whose numbers test_cli checks).

  user_api   programs/user_api.c (ground truth: main 1, outer 2, inner 200,
             tick 300 on host threads): counts per region = the Enter counts
             of python3-otf2; inclusive >= exclusive; tick and main (nothing
             inside on its thread) exclusive = inclusive; inner: exclusive =
             inclusive (its ticks take no time); outer: exclusive = inclusive -
             the inclusive time of its inners; top N: --top 2 lists the two
             largest exclusive times then "... 2 more", --top 0 and the
             default list all four, largest exclusive first; --top x, --top
             without a number: exit 2, one `tracer: summary:` line.
             TRACER_SUMMARY=1: stdout and exit status as without tracer,
             stderr = "tracer: summary of <dir>/traces.otf2:" and then exactly
             what `tracer summary <dir>` prints; the report's configuration
             lists TRACER_SUMMARY = 1 (environment). Without it, and with
             TRACER_SUMMARY=0: stderr empty.
  basic      programs/basic.c offloaded (ground truth: test_basic.py), with
             TRACER_SUMMARY=1 (the report at the end of an OpenMP run):
             device 0 to device 3 transfers / 12096 bytes, from device 2 /
             10048 bytes, time = the transfer regions' durations, bandwidth =
             bytes / time; peak memory in use 16000 (a and b); devices 1-3
             idle; one region per construct (count 1 each, display name with
             the source line), 2 kernels on device streams.
  mpit       programs/mpit_events.c with the MPI_T TEST DOUBLE (a singleton:
             a job archive of one rank), TRACER_SUMMARY=1: rank 0 prints the
             report once; MPI_T events per source and type and drops as the
             Python reader counts them, and per source equal to what the
             writer recorded in the rank's TRACER::MPIT::SOURCE::* properties
             (events=, dropped=).
  job        programs/mpit_offload.c under mpiexec -n 2 (real MPICH),
             TRACER_SUMMARY=1: stdout and exit status 4 as without tracer;
             stderr holds the report once (rank 0), equal to `tracer summary`
             of the job's archive; per device "rank <r> device 0" the bytes
             and counts of tests/lib/mpit_offload_truth.py, peak memory
             2 * NA(r) * 8; construct counts summed over the ranks.
  nest       programs/summary_nest.c: rec entered 3 times recursively counts
             its outermost duration once (inclusive = exclusive = that
             duration); work: exclusive = inclusive - its 4 leaves; open,
             never ended, lasts to the end of the trace (incomplete 1).
Parts whose programs are not built are skipped with a note; the test is
skipped (exit 77) only when nothing could run.
"""
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import extra as x    # noqa: E402
import summary_truth as st  # noqa: E402

N, M, D = 1000 * 8, 256 * 8, 64 * 8          # programs/basic.c, bytes
BASIC_STDOUT = "basic: sum(b)=999000 sum(c)=97920 b[10]=20 c[10]=30\n"
USER_COUNTS = {"main": 1, "outer": 2, "inner": 200, "tick": 300}
OLD_LINES = 8  # lines every report starts with (trace ... incomplete operations)


def cli(args, cwd, timeout=120):
    return x.run([h.env_path("TEST_TRACER_CLI")] + args, cwd, timeout=timeout)


def report(c, what, d, cwd):
    """(text, json) of `tracer summary` of D, or (None, None)."""
    rc, text, err = cli(["summary", d], cwd)
    ok = c.equal((rc, err), (0, ""), "%s: tracer summary exit status, stderr" % what)
    rc, out, err = cli(["summary", "--json", d], cwd)
    ok = c.equal((rc, err), (0, ""), "%s: tracer summary --json exit status, stderr" % what) and ok
    try:
        js = json.loads(out)
    except ValueError as e:
        c.check(False, "%s: --json is not JSON (%s): %r" % (what, e, out[:300]))
        return None, None
    return (text, js) if ok else (None, None)


def check_against_python(c, what, d, text, js):
    """The JSON equals the Python reader's count of the archive, and the
    text's new lines say what the JSON says. Returns the truth or None."""
    anchor = os.path.join(d, "traces.otf2")
    try:
        truth = st.collect(h.Trace(anchor))
    except Exception as e:  # noqa: BLE001 - an unreadable archive is a failure
        c.check(False, "%s: Python OTF2 reader failed: %r" % (what, e))
        return None
    c.equal(js.get("regions"), truth["regions"], "%s: json regions vs the Python reader" % what)
    c.equal(st.json_per_device_without_bandwidth(js), st.per_device_list(truth),
            "%s: json per_device vs the Python reader" % what)
    for dev in js.get("per_device", []):
        for direction in ("to_device", "from_device"):
            xd = dev[direction]
            want = xd["bytes"] * 1e9 / xd["time_ns"] if xd["time_ns"] else None
            c.check((want is None and xd["bytes_per_s"] is None) or
                    (want is not None and abs(xd["bytes_per_s"] - want) <= 1),
                    "%s: %s %s bytes_per_s %r, want bytes / time = %r" % (what, dev["device"], direction,
                                                                         xd["bytes_per_s"], want))
    c.equal(js.get("mpit_by_source", {}), truth["mpit_by_source"], "%s: json mpit_by_source vs the Python reader"
            % what)
    props = st.anchor_properties(h.otf2_print_cmd(), anchor) if h.otf2_print_cmd() else None
    if c.check(props is not None, "%s: otf2-print -I failed or is missing" % what):
        c.equal(js.get("config"), dict(st.config_of(props)), "%s: json config vs the anchor's properties" % what)
        c.equal(list(js.get("config", {})), list(st.config_of(props)), "%s: json config order" % what)
    # counts per region = Enter counts (by display name and kind)
    enters = {}
    t = h.Trace(anchor)
    for loc, evs in t.events.items():
        for ev in evs:
            if ev.__class__.__name__ == "Enter":
                key = st.region_key(ev.region) + (st.location_kind(loc),)
                enters[key] = enters.get(key, 0) + 1
    got = {(r["name"], r["canonical"], r["location_kind"]): r["count"] for r in js.get("regions", [])}
    c.equal(got, enters, "%s: region counts vs the Enter events" % what)
    for r in js.get("regions", []):
        c.check(r["inclusive_ns"] >= r["exclusive_ns"] >= 0, "%s: region %r (%s): inclusive %d < exclusive %d"
                % (what, r["name"], r["location_kind"], r["inclusive_ns"], r["exclusive_ns"]))
    if text is not None:
        lines = text.splitlines()
        tail = st.text_tail(js)
        c.check(len(lines) >= OLD_LINES + len(tail), "%s: text of %d lines" % (what, len(lines)))
        c.equal(lines[len(lines) - len(tail):], tail, "%s: the text's regions, devices, MPI_T and configuration"
                % what)
    return truth


def check_end_report(c, what, err, d, cwd):
    """ERR (a run's stderr with TRACER_SUMMARY=1) is the header line and
    then exactly `tracer summary D`."""
    rc, text, e2 = cli(["summary", d], cwd)
    c.equal((rc, e2), (0, ""), "%s: tracer summary of the run's archive" % what)
    want = "tracer: summary of %s/traces.otf2:\n%s" % (d, text)
    c.equal(err, want, "%s: stderr = the end-of-run report" % what)


def region_rows(text, kind_plural):
    """[(count, inclusive, exclusive, name)] of the text's section of KIND_PLURAL."""
    lines = text.splitlines()
    out, inside = [], False
    for l in lines:
        if l.startswith("regions on %s:" % kind_plural):
            inside = True
            continue
        if inside:
            m = re.fullmatch(r"\s+(\d+)\s+([\d.]+)\s+([\d.]+)  (.*)", l)
            if m:
                out.append((int(m.group(1)), float(m.group(2)), float(m.group(3)), m.group(4)))
            elif not l.startswith("  "):
                break
    return out


# ---- user_api -------------------------------------------------------------------

def case_user(c, tmp):
    prog = h.env_path("USER_API_BIN")
    rc0, out0, err0 = x.run([prog], tmp, extra={"TRACER_ENABLE": "0"})
    c.equal((rc0, out0), (0, x.USER_API_STDOUT), "user_api untraced: exit status, stdout")

    d = os.path.join(tmp, "user_plain")
    rc, out, err = x.run([prog], tmp, extra={"TRACER_OUTPUT": d})
    c.equal((rc, out, err), (rc0, out0, ""), "user_api without TRACER_SUMMARY: exit status, stdout, stderr")
    d0 = os.path.join(tmp, "user_zero")
    rc, out, err = x.run([prog], tmp, extra={"TRACER_OUTPUT": d0, "TRACER_SUMMARY": "0"})
    c.equal((rc, out, err), (rc0, out0, ""), "user_api TRACER_SUMMARY=0: exit status, stdout, stderr")

    ds = os.path.join(tmp, "user_summary")
    rc, out, err = x.run([prog], tmp, extra={"TRACER_OUTPUT": ds, "TRACER_SUMMARY": "1"})
    c.equal((rc, out), (rc0, out0), "user_api TRACER_SUMMARY=1: exit status, stdout")
    x.check_no_sanitizer(c, err, "user_api TRACER_SUMMARY=1")
    check_end_report(c, "user_api TRACER_SUMMARY=1", err, ds, tmp)
    c.check("\n  TRACER_SUMMARY = 1 (environment)\n" in err,
            "user_api TRACER_SUMMARY=1: the report's configuration does not list it: %r" % err[-800:])

    text, js = report(c, "user_api", d, tmp)
    if js is None:
        return
    check_against_python(c, "user_api", d, text, js)
    regs = {r["name"]: r for r in js["regions"]}
    c.equal({n: (r["count"], r["location_kind"]) for n, r in regs.items()},
            {n: (k, "host thread") for n, k in USER_COUNTS.items()}, "user_api: regions (count, kind)")
    if set(regs) == set(USER_COUNTS):
        c.equal(regs["tick"]["inclusive_ns"], 0, "user_api: tick (a mark) takes no time")
        c.equal(regs["tick"]["exclusive_ns"], 0, "user_api: tick exclusive")
        c.equal(regs["inner"]["exclusive_ns"], regs["inner"]["inclusive_ns"],
                "user_api: inner exclusive = inclusive (its ticks take no time)")
        c.equal(regs["main"]["exclusive_ns"], regs["main"]["inclusive_ns"],
                "user_api: main exclusive = inclusive (nothing inside it on its thread)")
        c.equal(regs["outer"]["exclusive_ns"], regs["outer"]["inclusive_ns"] - regs["inner"]["inclusive_ns"],
                "user_api: outer exclusive = inclusive - inners")
        c.check(regs["outer"]["inclusive_ns"] >= regs["inner"]["inclusive_ns"] > 0,
                "user_api: outer %d, inner %d inclusive" % (regs["outer"]["inclusive_ns"],
                                                            regs["inner"]["inclusive_ns"]))
    c.equal(js.get("per_device"), [], "user_api: no device")
    c.check("mpit_by_source" not in js, "user_api: mpit_by_source without MPI_T")

    # top N
    order = [r["name"] for r in js["regions"]]
    excl = [r["exclusive_ns"] for r in js["regions"]]
    c.equal(excl, sorted(excl, reverse=True), "user_api: json regions by exclusive time")
    for args, shown in ((["--top", "2"], 2), (["--top=2"], 2), (["--top", "0"], 4), ([], 4), (["--top", "9"], 4)):
        rc, t2, err = cli(["summary"] + args + [d], tmp)
        c.equal((rc, err), (0, ""), "user_api summary %r: exit status, stderr" % args)
        rows = region_rows(t2, "host threads")
        c.equal([r[3] for r in rows], order[:shown], "user_api summary %r: regions listed" % args)
        c.equal([r[0] for r in rows], [regs[n]["count"] for n in order[:shown]],
                "user_api summary %r: counts" % args)
        c.equal([("%.3f" % r[1], "%.3f" % r[2]) for r in rows],
                [(st.us(regs[n]["inclusive_ns"]), st.us(regs[n]["exclusive_ns"])) for n in order[:shown]],
                "user_api summary %r: inclusive, exclusive us" % args)
        head = [l for l in t2.splitlines() if l.startswith("regions on host threads:")]
        c.equal(head, ["regions on host threads: 4, " + ("top %d by exclusive time:" % shown if shown < 4
                                                          else "by exclusive time:")],
                "user_api summary %r: section line" % args)
        c.equal("  ... 2 more" in t2.splitlines(), shown == 2, "user_api summary %r: '... 2 more'" % args)
    for args in (["--top", "x"], ["--top"], ["--top", "-1"], ["--top="]):
        rc, out, err = cli(["summary"] + args + [d], tmp)
        c.equal((rc, out), (2, ""), "summary %r: exit status, stdout" % args)
        x.check_one_line(c, err, "tracer: summary:", "summary %r" % args)


# ---- summary_nest: recursion and a region never ended -----------------------------

def case_nest(c, tmp):
    prog = h.env_path("TEST_NEST_BIN")
    d = os.path.join(tmp, "nest")
    rc, out, err = x.run([prog], tmp, extra={"TRACER_OUTPUT": d})
    c.equal((rc, out, err), (0, "summary_nest: rc=0\n", ""), "summary_nest: exit status, stdout, stderr")
    text, js = report(c, "summary_nest", d, tmp)
    if js is None:
        return
    check_against_python(c, "summary_nest", d, text, js)
    regs = {r["name"]: r for r in js["regions"]}
    c.equal({n: r["count"] for n, r in regs.items()}, {"rec": 3, "work": 1, "leaf": 4, "open": 1},
            "summary_nest: counts")
    c.equal(js.get("incomplete"), 1, "summary_nest: incomplete (open)")
    if set(regs) != {"rec", "work", "leaf", "open"}:
        return
    t = h.Trace(os.path.join(d, "traces.otf2"))
    spans = sorted((leave.time - enter.time for _, enter, leave in t.intervals("rec")), reverse=True)
    c.equal(len(spans), 3, "summary_nest: rec intervals")
    if spans:
        c.equal(regs["rec"]["inclusive_ns"], spans[0], "summary_nest: rec inclusive = the outermost's duration "
                "(recursion counted once)")
        c.equal(regs["rec"]["exclusive_ns"], spans[0], "summary_nest: rec exclusive = inclusive (only rec inside)")
        c.check(sum(spans) > spans[0] >= 3 * 20000, "summary_nest: rec spans %r" % spans)
    c.equal(regs["work"]["exclusive_ns"], regs["work"]["inclusive_ns"] - regs["leaf"]["inclusive_ns"],
            "summary_nest: work exclusive = inclusive - leaves")
    c.check(regs["leaf"]["inclusive_ns"] >= 4 * 20000, "summary_nest: leaf inclusive %d" % regs["leaf"]["inclusive_ns"])
    last = max(ev.time for evs in t.events.values() for ev in evs)
    enter = [ev.time for _, ev in t.enters("open")]
    c.equal(regs["open"]["inclusive_ns"], last - enter[0] if enter else None,
            "summary_nest: open (never ended) lasts to the end")
    c.check(regs["open"]["inclusive_ns"] >= 20000, "summary_nest: open inclusive %d" % regs["open"]["inclusive_ns"])


# ---- basic (offload) ------------------------------------------------------------------

def case_basic(c, tmp):
    prog = os.environ.get("TEST_BASIC_BIN")
    if not prog:
        return "TEST_BASIC_BIN not set (no offload compiler): part basic not run"
    if x.runtime_deaf(prog, tmp):
        return "the OpenMP runtime delivers no OMPT target callbacks with the sanitizer runtimes: part basic not run"
    rc0, out0, _ = x.run([prog], tmp)
    c.equal((rc0, out0), (0, BASIC_STDOUT), "basic untraced: exit status, stdout")
    d = os.path.join(tmp, "basic")
    rc, out, err = x.run([prog], tmp, preload=True, extra={"TRACER_OUTPUT": d, "TRACER_SUMMARY": "1"})
    c.equal((rc, out), (rc0, out0), "basic TRACER_SUMMARY=1: exit status, stdout")
    x.check_no_sanitizer(c, err, "basic TRACER_SUMMARY=1")
    check_end_report(c, "basic TRACER_SUMMARY=1", err, d, tmp)
    text, js = report(c, "basic", d, tmp)
    if js is None:
        return None
    truth = check_against_python(c, "basic", d, text, js)
    devs = {e["device"]: e for e in js.get("per_device", [])}
    c.equal(sorted(devs), ["device %d" % i for i in range(len(devs))], "basic: devices")
    d0 = devs.get("device 0")
    if c.check(d0, "basic: no device 0 in per_device"):
        c.equal((d0["to_device"]["count"], d0["to_device"]["bytes"]), (3, N + M + M), "basic: device 0 to device")
        c.equal((d0["from_device"]["count"], d0["from_device"]["bytes"]), (2, N + M), "basic: device 0 from device")
        c.equal(d0["peak_memory_bytes"], N + N, "basic: device 0 peak memory (a and b)")
        if truth:
            durations = {"to_device": 0, "from_device": 0}
            t = h.Trace(os.path.join(d, "traces.otf2"))
            for _, enter, leave in t.intervals():
                k = st.TRANSFERS.get(enter.region.canonical_name)
                if k:
                    durations[k] += leave.time - enter.time
            c.equal({k: d0[k]["time_ns"] for k in durations}, durations,
                    "basic: device 0 transfer time = the transfer regions' durations")
        lines = text.splitlines()
        for what, k in (("to device", "to_device"), ("from device", "from_device")):
            xd = d0[k]
            want = "  %s: %d transfers, %d bytes in %s us, %.3f GB/s" % (what, xd["count"], xd["bytes"],
                                                                       st.us(xd["time_ns"]),
                                                                       xd["bytes"] / xd["time_ns"])
            c.check(want in lines, "basic: text line %r missing: %r" % (want, lines))
        c.check("device 0: peak memory in use %d bytes" % (N + N) in lines, "basic: text peak memory line")
    for name, e in devs.items():
        if name != "device 0":
            c.equal((e["to_device"]["count"], e["from_device"]["count"], e["peak_memory_bytes"]), (0, 0, None),
                    "basic: %s idle" % name)
    host = [r for r in js["regions"] if r["location_kind"] == "host thread"]
    constructs = {}
    for r in host:
        if r["canonical"].startswith("target"):
            c.check(re.fullmatch(re.escape(r["canonical"]) + r" \(basic\.c:\d+\)", r["name"]),
                    "basic: construct region name %r" % r["name"])
            c.equal(r["count"], 1, "basic: count of %r" % r["name"])
            constructs[r["canonical"]] = constructs.get(r["canonical"], 0) + 1
    c.equal(constructs, {"target": 2, "target enter data": 2, "target exit data": 2, "target update": 2},
            "basic: constructs")
    kernels = [r for r in js["regions"] if r["canonical"] == "kernel"]
    c.equal(([r["location_kind"] for r in kernels], sum(r["count"] for r in kernels)), (["device stream"] * 2, 2),
            "basic: kernels on device streams")
    return None


# ---- MPI_T with the test double ---------------------------------------------------

def source_properties(t):
    """{source name: (events, dropped)} summed over the ranks' TRACER::MPIT::SOURCE::*."""
    from otf2_trace import group_properties
    out = {}
    for props in group_properties(t).values():
        for k, v in props.items():
            if not k.startswith("TRACER::MPIT::SOURCE::"):
                continue
            f = dict(p.strip().split("=", 1) for p in v.split(";") if "=" in p)
            e = out.setdefault(f.get("name"), [0, 0])
            e[0] += int(f.get("events", 0))
            e[1] += int(f.get("dropped", 0))
    return {k: tuple(v) for k, v in out.items()}


def case_mpit(c, tmp):
    for var in ("TEST_MPIT_BIN", "TEST_MPIT_DOUBLE_LIB"):
        if not os.environ.get(var):
            return "%s not set (needs MPICH and the MPI_T test double): part mpit not run" % var
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    os.environ["TEST_BIN"] = os.environ["TEST_MPIT_BIN"]
    import test_mpit_events as me  # noqa: E402 - the double's scenario and preload order
    case = me.Case("summary", "main", me.SCRIPT_MAIN, {"TRACER_SUMMARY": "1"}, 1, me.all_types(), False)
    run = me.run_program(tmp, "mpit", case, traced=True)
    what = "mpit_events TRACER_SUMMARY=1"
    c.equal(run.rc, me.EXIT_CODE, "%s: exit status (stderr %r)" % (what, run.stderr[-1000:]))
    c.equal(run.stdout.splitlines(), me.want_stdout_lines(case), "%s: stdout" % what)
    d = os.path.join(run.dir, "trace")
    check_end_report(c, what, run.stderr, d, tmp)
    text, js = report(c, "mpit", d, tmp)
    if js is None:
        return None
    truth = check_against_python(c, "mpit", d, text, js)
    t = h.Trace(os.path.join(d, "traces.otf2"))
    props = source_properties(t)
    got = {n: (s["events"], s["dropped"]) for n, s in js.get("mpit_by_source", {}).items()}
    c.equal(got, props, "mpit: per source (events, dropped) vs TRACER::MPIT::SOURCE::* (events=, dropped=)")
    c.check(any(s["dropped"] for s in js.get("mpit_by_source", {}).values()), "mpit: the scenario's drops")
    c.equal(sorted(js.get("mpit_by_source", {})), sorted(s.name for s in me.SOURCES.values()), "mpit: sources")
    m = js.get("mpit", {})
    c.equal((m.get("events"), m.get("dropped")), (sum(v[0] for v in props.values()), sum(v[1] for v in props.values())),
            "mpit: the MPI_T totals line")
    if truth:
        kinds = {r["location_kind"] for r in js["regions"]}
        c.check("MPI_T source" in kinds, "mpit: no region on MPI_T sources: %r" % kinds)
    return None


# ---- an MPI job -------------------------------------------------------------------------

def case_job(c, tmp):
    prog, mpiexec = os.environ.get("TEST_MPI_OFFLOAD_BIN"), os.environ.get("TEST_MPIEXEC")
    if not prog or not mpiexec:
        return "TEST_MPI_OFFLOAD_BIN / TEST_MPIEXEC not set (needs MPICH and clang): part job not run"
    if x.runtime_deaf(prog, tmp):
        return "the OpenMP runtime delivers no OMPT target callbacks with the sanitizer runtimes: part job not run"
    import mpit_offload_truth as mt
    size = 2
    base = {"HYDRA_LAUNCHER": "fork", "TEST_ABORT_RANK": None, "TEST_PID_DIR": None, "TEST_NO_MPI": None}
    rc0, out0, err0 = x.run([mpiexec, "-n", str(size), prog], tmp, extra=base, timeout=150)
    c.equal(rc0, mt.EXIT, "job untraced: exit status (stderr %r)" % err0[-500:])
    lib = ":".join(h.preload_list())
    results = {}
    for label, summary in (("job_summary", "1"), ("job_plain", None)):
        d = os.path.join(tmp, label)
        env = dict(base, TRACER_OUTPUT=d, TRACER_SUMMARY=summary)
        results[label] = (d,) + x.run([mpiexec, "-n", str(size), "env", "LD_PRELOAD=" + lib, prog], tmp,
                                      extra=env, timeout=150)
    d, rc, out, err = results["job_plain"]
    c.equal((rc, sorted(out.splitlines())), (rc0, sorted(out0.splitlines())), "job without TRACER_SUMMARY: exit "
            "status, stdout")
    c.check("tracer: summary" not in err, "job without TRACER_SUMMARY: a summary on stderr: %r" % err[-500:])
    d, rc, out, err = results["job_summary"]
    what = "job TRACER_SUMMARY=1"
    c.equal((rc, sorted(out.splitlines())), (rc0, sorted(out0.splitlines())), "%s: exit status, stdout" % what)
    x.check_no_sanitizer(c, err, what)
    c.equal(err.count("tracer: summary of"), 1, "%s: reports on stderr (rank 0 only)" % what)
    check_end_report(c, what, err, d, tmp)
    text, js = report(c, "job", d, tmp)
    if js is None:
        return None
    check_against_python(c, "job", d, text, js)
    devs = {e["device"]: e for e in js.get("per_device", [])}
    for r in range(size):
        e = devs.get("rank %d device 0" % r)
        if not c.check(e, "job: no 'rank %d device 0' in per_device: %r" % (r, sorted(devs))):
            continue
        want = mt.want_transfers(r)
        for k, key in (("to device", "to_device"), ("from device", "from_device")):
            c.equal((e[key]["count"], e[key]["bytes"]), (len(want[(k, 0)]), sum(want[(k, 0)])),
                    "job: rank %d device 0 %s (count, bytes)" % (r, k))
        c.equal(e["peak_memory_bytes"], 2 * mt.na(r) * 8, "job: rank %d device 0 peak memory (a and b)" % r)
    names = [e["device"] for e in js.get("per_device", [])]
    key = [tuple(int(v) for v in re.fullmatch(r"rank (\d+) device (\d+)", n).groups()) for n in names]
    c.equal(key, sorted(key), "job: devices in rank order")
    per_canon = {}
    for reg in js["regions"]:
        per_canon[reg["canonical"]] = per_canon.get(reg["canonical"], 0) + reg["count"]
    for k in ("target", "alloc", "transfer to device", "transfer from device", "delete", "kernel"):
        c.equal(per_canon.get(k), sum(mt.want_counts(r)[k] for r in range(size)), "job: %r regions" % k)
    c.equal((per_canon.get("MPI_Init"), per_canon.get("MPI_Finalize")), (size, size), "job: MPI_Init, MPI_Finalize")
    return None


def main():
    c = h.Checker("summary")
    tmp = tempfile.mkdtemp(prefix="tracer-test-summary-")
    notes = []
    try:
        case_user(c, tmp)
        case_nest(c, tmp)
        for case in (case_basic, case_mpit, case_job):
            sub = os.path.join(tmp, case.__name__)
            os.mkdir(sub)
            note = case(c, sub)
            if note:
                notes.append(note)
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    for n in notes:
        c.note(n)
    c.finish()


if __name__ == "__main__":
    main()
