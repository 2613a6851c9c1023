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
  omp_synthetic  host OpenMP states (issue 9) in an archive written here with
             python3-otf2: two ranks, rank 0 with OMP work / OMP wait metrics
             (last values deliberately not its regions' count), rank 1 without
             (work and wait from the regions), nested parallel regions, a wait
             in a wait, a wait outside parallel regions, a user region called
             "parallel": threads and parallel regions (teams, threads, work,
             wait per thread) = hand-computed numbers = omp_truth (the Python
             reader); totals = sums over threads; wait % and imbalance = their
             formulas; the text's OpenMP lines = the JSON, right before the
             regions; --top 1 cuts the parallel regions.
  omp_program  programs/summary_omp.c (4 threads; region "heavy": thread 0
             works 3x as long, 3 teams; region "even": 2 teams; run with
             OMP_WAIT_POLICY=passive), traced with TRACER_SUMMARY=1: per thread work and wait = the last OMP work /
             OMP wait values in the archive; per parallel region and thread =
             omp_truth; teams and threads = the program's; in "heavy" the
             thread with the most work has the least wait, at least 1.5x the
             next one's work, the others wait; imbalance >= 1.4 (3:1:1:1 is
             2) and above "even"'s; the thread with the most OMP work and the
             least OMP wait is that thread; OMP work = its regions' work (1 %);
             text = JSON; the end-of-run report = `tracer summary`.
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
import otf2  # noqa: E402 - python3-otf2's writer (omp_synthetic)

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


# ---- host OpenMP states: work against wait (issue 9; parts omp_synthetic, omp_program) ----

OMP_WAITS = {"<OMP-implicit_barrier>", "<OMP-explicit_barrier>", "<OMP-taskwait>", "<OMP-taskgroup>",
             "<OMP-lock_wait>", "<OMP-critical_section_wait>", "<OMP-ordered_section_wait>", "<OMP-atomic_wait>"}


def _group_order(group):
    m = re.fullmatch(r"rank (\d+)", group.name or "")
    return (0, int(m.group(1))) if m else (1, group._ref)


def omp_truth(t):
    """What the report's "omp" must hold, from the events (Python reader): per
    host thread the last OMP work / OMP wait metric values (source "metrics"
    when it has both) or else its regions' (wait: the outermost waiting
    states; work: the outermost parallel regions minus the waits inside);
    per parallel region (role PARALLEL, canonical "parallel" or "teams", by display
    name) and thread: Enter count, outermost instances' time minus the waits
    inside. Teams: Enters just after a Leave of <OMP-overhead> on the thread,
    at least the most Enters on one thread. None when there are no host
    OpenMP states. Without wait_percent and imbalance (see omp_ratios)."""
    from otf2.enums import RegionRole
    threads, per_region, teams = [], {}, {}
    nonzero = seen_any = False
    locs = [loc for loc in t.locations if st.location_kind(loc) == "host thread"]
    locs.sort(key=lambda loc: (_group_order(loc.group), loc._ref))
    for loc in locs:
        evs = t.events.get(loc, [])
        last = max((ev.time for ev in evs), default=0)
        stack = []   # [key, enter, wait inside, omp kind, nested, region]
        metric = {}
        state = {"seen": False, "after_overhead": False, "par_open": 0, "work": 0, "wait": 0}

        def kind_of(region):
            name, canon = st.region_key(region)
            if canon in ("parallel", "teams") and region.region_role == RegionRole.PARALLEL:
                return "parallel"
            if canon in OMP_WAITS:
                return "wait"
            if canon == "<OMP-overhead>":
                return "overhead"
            return None

        def close(time):
            key, enter, wait_in, kind, nested, _ = stack.pop()
            incl = max(time - enter, 0)
            passed = incl if kind == "wait" else wait_in
            if stack:
                stack[-1][2] += passed
            else:
                state["wait"] += passed
            if kind == "parallel":
                w = min(wait_in, incl)
                state["par_open"] -= 1
                if state["par_open"] == 0:
                    state["work"] += incl - w
                if not nested:
                    e = per_region[key[0]][loc]
                    e[1] += incl - w
                    e[2] += w
            state["after_overhead"] = kind == "overhead"

        for ev in evs:
            cls = ev.__class__.__name__
            if cls == "Enter":
                kind = kind_of(ev.region)
                key = st.region_key(ev.region)
                nested = any(f[0] == key for f in stack)
                if kind in ("parallel", "wait"):
                    state["seen"] = True
                if kind == "parallel":
                    state["par_open"] += 1
                    if state["after_overhead"]:
                        teams[key[0]] = teams.get(key[0], 0) + 1
                    per_region.setdefault(key[0], {}).setdefault(loc, [0, 0, 0])[0] += 1
                state["after_overhead"] = False
                stack.append([key, ev.time, 0, kind, nested, ev.region])
            elif cls == "Leave":
                # a Leave closes its region's innermost open instance and what is above it
                idx = None
                for i in range(len(stack) - 1, -1, -1):
                    if stack[i][5] is ev.region:
                        idx = i
                        break
                if idx is not None:
                    while len(stack) > idx:
                        close(ev.time)
            elif cls == "Metric":
                mc = ev.metric
                members = mc.members if hasattr(mc, "members") else mc.metric_class.members
                for m, v in zip(members, ev.values):
                    if m.name in ("OMP work", "OMP wait"):
                        metric[m.name] = int(v)
                        nonzero = nonzero or int(v) > 0
        while stack:
            close(last)
        if not (state["seen"] or metric):
            continue
        seen_any = seen_any or state["seen"]
        both = "OMP work" in metric and "OMP wait" in metric
        threads.append({"location": loc.name, "process": loc.group.name,
                        "work_ns": metric["OMP work"] if both else state["work"],
                        "wait_ns": metric["OMP wait"] if both else state["wait"],
                        "source": "metrics" if both else "regions"})
    if not (nonzero or seen_any) or not threads:
        return None
    index = {(th["process"], th["location"]): i for i, th in enumerate(threads)}
    regions = []
    for name, by_loc in per_region.items():
        rows = sorted(by_loc.items(), key=lambda kv: index[(kv[0].group.name, kv[0].name)])
        per = [{"location": loc.name, "process": loc.group.name, "instances": e[0], "work_ns": e[1],
                "wait_ns": e[2]} for loc, e in rows]
        regions.append({"name": name, "instances": max([teams.get(name, 0)] + [p["instances"] for p in per]),
                        "threads": len(per), "work_ns": sum(p["work_ns"] for p in per),
                        "wait_ns": sum(p["wait_ns"] for p in per), "per_thread": per})
    regions.sort(key=lambda r: (-(r["work_ns"] + r["wait_ns"]), r["name"]))
    return {"threads": threads, "parallel_regions": regions}


def omp_ratios(work, wait, per_thread=None):
    """(wait %, imbalance) as the report computes them; None where undefined."""
    pct = wait * 100.0 / (work + wait) if work + wait else None
    imb = None
    if per_thread is not None and work and per_thread:
        imb = max(p["work_ns"] for p in per_thread) / (work / len(per_thread))
    return pct, imb


def omp_without_ratios(omp):
    """OMP (the report's "omp") without wait_percent and imbalance."""
    if omp is None:
        return None
    return {"threads": [{k: v for k, v in th.items() if k != "wait_percent"} for th in omp["threads"]],
            "parallel_regions": [{k: v for k, v in r.items() if k not in ("wait_percent", "imbalance")}
                                 for r in omp["parallel_regions"]]}


def omp_text(js, top=10):
    """The text's OpenMP lines, from the --json report."""
    omp = js["omp"]
    ths = omp["threads"]
    with_process = js["processes"] > 1 or any(th["process"].startswith("rank ") for th in ths)

    def label(th):
        return (th["process"] + " " if with_process else "") + th["location"]

    def pct(v):
        return " %7s" % "-" if v is None else " %6.1f%%" % v

    n_metrics = sum(th["source"] == "metrics" for th in ths)
    src = ("the OMP work / OMP wait metrics" if n_metrics == len(ths) else
           "from the regions: no OMP work / OMP wait metrics" if not n_metrics else
           "the OMP work / OMP wait metrics; * from the regions")
    lines = ["OpenMP work and wait per host thread: %d thread%s (%s), wait %% = wait / (work + wait):"
             % (len(ths), "" if len(ths) == 1 else "s", src),
             "  %14s %14s %8s  %s" % ("work us", "wait us", "wait %", "thread")]
    for th in ths[:64]:
        lines.append("  %14s %14s%s%s%s" % (st.us(th["work_ns"]), st.us(th["wait_ns"]),
                                            pct(omp_ratios(th["work_ns"], th["wait_ns"])[0]),
                                            "  * " if n_metrics and th["source"] != "metrics" else "  ",
                                            label(th)))
    if len(ths) > 64:
        lines.append("  ... %d more" % (len(ths) - 64))
    if len(ths) > 1:
        work, wait = sum(th["work_ns"] for th in ths), sum(th["wait_ns"] for th in ths)
        lines.append("  %14s %14s%s  all threads" % (st.us(work), st.us(wait), pct(omp_ratios(work, wait)[0])))
    regs = omp["parallel_regions"]
    if regs:
        shown = len(regs) if top == 0 or top >= len(regs) else top
        lines.append("OpenMP parallel regions: %d, %sby work + wait; imbalance = the largest work of a thread / "
                     "the mean work of its threads (1.00 = balanced):"
                     % (len(regs), "top %d " % shown if shown < len(regs) else ""))
        lines.append("  %9s %7s %14s %14s %8s %9s  %s" % ("instances", "threads", "work us", "wait us", "wait %",
                                                           "imbalance", "region"))
        for r in regs[:shown]:
            p, imb = omp_ratios(r["work_ns"], r["wait_ns"], r["per_thread"])
            lines.append("  %9d %7d %14s %14s%s %9s  %s" % (r["instances"], r["threads"], st.us(r["work_ns"]),
                                                           st.us(r["wait_ns"]), pct(p),
                                                           "-" if imb is None else "%.2f" % imb, r["name"]))
        if shown < len(regs):
            lines.append("  ... %d more" % (len(regs) - shown))
    return lines


def check_omp_report(c, what, d, text, js, top=10):
    """The report's OpenMP part equals omp_truth of the archive; ratios and
    totals agree with the numbers; the text says what the JSON says, just
    before the regions. Returns the JSON's "omp" or None."""
    truth = omp_truth(h.Trace(os.path.join(d, "traces.otf2")))
    omp = js.get("omp")
    if not c.check(truth is not None, "%s: the archive holds no host OpenMP states" % what) or \
       not c.check(omp is not None, "%s: no 'omp' in the JSON report" % what):
        return None
    c.equal(omp_without_ratios(omp), truth, "%s: json omp vs the Python reader" % what)
    for th in omp["threads"]:
        want = omp_ratios(th["work_ns"], th["wait_ns"])[0]
        c.check((want is None and th["wait_percent"] is None) or
                (want is not None and abs(th["wait_percent"] - want) <= 5e-5),
                "%s: %s %s wait_percent %r, want %r" % (what, th["process"], th["location"], th["wait_percent"],
                                                        want))
    for r in omp["parallel_regions"]:
        c.equal((r["work_ns"], r["wait_ns"], r["threads"]),
                (sum(p["work_ns"] for p in r["per_thread"]), sum(p["wait_ns"] for p in r["per_thread"]),
                 len(r["per_thread"])), "%s: %s totals = sums over its threads" % (what, r["name"]))
        pct, imb = omp_ratios(r["work_ns"], r["wait_ns"], r["per_thread"])
        for key, want in (("wait_percent", pct), ("imbalance", imb)):
            c.check((want is None and r[key] is None) or (want is not None and abs(r[key] - want) <= 5e-5),
                    "%s: %s %s %r, want %r" % (what, r["name"], key, r[key], want))
    lines = text.splitlines()
    want = omp_text(js, top)
    start = [i for i, l in enumerate(lines) if l.startswith("OpenMP work and wait per host thread:")]
    if c.equal(len(start), 1, "%s: text OpenMP section lines" % what):
        got = lines[start[0]:start[0] + len(want)]
        c.equal(got, want, "%s: the text's OpenMP lines vs --json" % what)
        after = lines[start[0] + len(want):start[0] + len(want) + 1]
        c.check(after and after[0].startswith("regions on "), "%s: the OpenMP lines are not right before the "
                "regions: %r" % (what, after))
        c.check(start[0] >= OLD_LINES, "%s: OpenMP lines inside the report's first lines" % what)
    return omp


# The synthetic archive: per rank, per thread, trees of (region, enter, leave,
# children); regions by short name (OMP_SYNTH_REGIONS).
OMP_SYNTH = {
    "rank 0": {
        "host thread 0": [
            ("main", 0, 10000, [
                ("overhead", 100, 110, []),
                ("A", 110, 1110, [("ibar", 1100, 1110, [])]),
                ("overhead", 1110, 1120, []),
                ("lock", 1500, 1600, []),                       # a wait outside any parallel region
                ("overhead", 2000, 2010, []),
                ("A", 2010, 2510, [("ibar", 2500, 2510, [])]),
                ("overhead", 2510, 2520, []),
                ("overhead", 3000, 3010, []),
                ("B", 3010, 4010, [("loop", 3010, 3800, [("lock", 3200, 3300, [])]),
                                   ("ebar", 3800, 3900, []), ("ibar", 3950, 4010, [])]),
                ("overhead", 4010, 4020, []),
            ])],
        "host thread 1": [
            ("idle", 0, 110, []),
            ("A", 110, 1110, [("ibar", 410, 1110, [])]),
            ("idle", 1110, 2010, []),
            ("A", 2010, 2510, [("ibar", 2110, 2510, [])]),
            ("idle", 2510, 3010, []),
            ("B", 3010, 4010, [("ebar", 3300, 3900, []), ("ibar", 3950, 4010, [])]),
        ],
        "host thread 2": [
            ("A", 110, 1110, [("ibar", 400, 1110, [])]),
            ("A", 2010, 2510, [("ibar", 2100, 2510, [])]),
        ],
    },
    "rank 1": {
        "host thread 0": [
            ("overhead", 100, 110, []),
            ("B", 110, 1110, [
                ("overhead", 200, 210, []),
                ("C", 210, 600, [("ibar", 500, 600, [])]),      # nested parallel, a team of one
                ("overhead", 600, 610, []),
                ("taskwait", 1000, 1110, [("lock", 1020, 1030, [])]),  # a wait inside a wait counts once
            ]),
            ("overhead", 1110, 1120, []),
        ],
        "host thread 1": [
            ("B", 110, 1110, [("ibar", 300, 1110, [])]),
            ("user parallel", 1200, 1300, []),                  # role FUNCTION: not OpenMP
        ],
    },
}
# rank 0's metrics (running totals at each parallel region's end; the last
# ones differ from its regions' count: 2220 work, 380 wait on thread 0)
OMP_SYNTH_METRICS = {
    ("rank 0", "host thread 0"): [(1110, 990, 10), (2510, 1480, 20), (4010, 2220, 380), (9000, 2227, 383)],
    ("rank 0", "host thread 1"): [(1110, 300, 700), (2510, 400, 1100), (4010, 740, 1760)],
    ("rank 0", "host thread 2"): [(1110, 290, 710), (2510, 380, 1120)],
}


def _synth_threads():
    return [("rank 0", "host thread 0", 2227, 383, "metrics"), ("rank 0", "host thread 1", 740, 1760, "metrics"),
            ("rank 0", "host thread 2", 380, 1120, "metrics"), ("rank 1", "host thread 0", 790, 210, "regions"),
            ("rank 1", "host thread 1", 190, 810, "regions")]


# hand-computed: name -> (instances, [(process, location, instances, work, wait)])
OMP_SYNTH_WANT = {
    "parallel (synth.c:10)": (2, [("rank 0", "host thread 0", 2, 1480, 20), ("rank 0", "host thread 1", 2, 400, 1100),
                                  ("rank 0", "host thread 2", 2, 380, 1120)]),
    "parallel (synth.c:20)": (2, [("rank 0", "host thread 0", 1, 740, 260), ("rank 0", "host thread 1", 1, 340, 660),
                                  ("rank 1", "host thread 0", 1, 790, 210), ("rank 1", "host thread 1", 1, 190, 810)]),
    "parallel (synth.c:30)": (1, [("rank 1", "host thread 0", 1, 290, 100)]),
}


def write_omp_synthetic(d):
    from otf2.enums import LocationType, Paradigm, RegionRole, MetricMode, Type
    with otf2.writer.open(d, timer_resolution=1000000000) as trace:
        defs = trace.definitions
        root = defs.system_tree_node("node")

        def region(name, canon, role, paradigm=Paradigm.OPENMP):
            return defs.region(name, canonical_name=canon, region_role=role, paradigm=paradigm)
        regions = {
            "main": region("main", "main", RegionRole.FUNCTION, Paradigm.USER),
            "user parallel": region("parallel", "parallel", RegionRole.FUNCTION, Paradigm.USER),
            "A": region("parallel (synth.c:10)", "parallel", RegionRole.PARALLEL),
            "B": region("parallel (synth.c:20)", "parallel", RegionRole.PARALLEL),
            "C": region("parallel (synth.c:30)", "parallel", RegionRole.PARALLEL),
            "loop": region("loop (synth.c:21)", "loop", RegionRole.LOOP),
            "ibar": region("<OMP-implicit_barrier>", "<OMP-implicit_barrier>", RegionRole.IMPLICIT_BARRIER),
            "ebar": region("<OMP-explicit_barrier>", "<OMP-explicit_barrier>", RegionRole.BARRIER),
            "lock": region("<OMP-lock_wait>", "<OMP-lock_wait>", RegionRole.ARTIFICIAL),
            "taskwait": region("<OMP-taskwait>", "<OMP-taskwait>", RegionRole.TASK_WAIT),
            "overhead": region("<OMP-overhead>", "<OMP-overhead>", RegionRole.ARTIFICIAL),
            "idle": region("<OMP-idle>", "<OMP-idle>", RegionRole.ARTIFICIAL),
        }
        work = defs.metric_class([defs.metric_member("OMP work", "time doing the program's work",
                                                     metric_mode=MetricMode.ACCUMULATED_START,
                                                     value_type=Type.UINT64, unit="ns")])
        wait = defs.metric_class([defs.metric_member("OMP wait", "time waiting in the OpenMP runtime",
                                                     metric_mode=MetricMode.ACCUMULATED_START,
                                                     value_type=Type.UINT64, unit="ns")])
        for rank, threads in OMP_SYNTH.items():
            group = defs.location_group(rank, system_tree_parent=root)
            for tname, trees in threads.items():
                loc = defs.location(tname, group=group, type=LocationType.CPU_THREAD)
                w = trace.event_writer_from_location(loc)
                evs = []

                def walk(node):
                    name, a, b, kids = node
                    evs.append((a, 0, len(evs), "enter", name))
                    for k in kids:
                        walk(k)
                    evs.append((b, 0, len(evs), "leave", name))
                for tr in trees:
                    walk(tr)
                for tm, vw, vt in OMP_SYNTH_METRICS.get((rank, tname), []):
                    evs.append((tm, 1, len(evs), "metric", (vw, vt)))
                for tm, _, _, kind, arg in sorted(evs):
                    if kind == "enter":
                        w.enter(tm, regions[arg])
                    elif kind == "leave":
                        w.leave(tm, regions[arg])
                    else:
                        w.metric(tm, work, arg[0])
                        w.metric(tm, wait, arg[1])
    return d


def case_omp_synthetic(c, tmp):
    d = write_omp_synthetic(os.path.join(tmp, "omp_synthetic"))
    what = "omp_synthetic"
    text, js = report(c, what, d, tmp)
    if js is None:
        return
    check_against_python(c, what, d, text, js)
    omp = check_omp_report(c, what, d, text, js)
    if omp is None:
        return
    c.equal([(th["process"], th["location"], th["work_ns"], th["wait_ns"], th["source"]) for th in omp["threads"]],
            _synth_threads(), "%s: threads (hand-computed)" % what)
    got = {r["name"]: (r["instances"], [(p["process"], p["location"], p["instances"], p["work_ns"], p["wait_ns"])
                                        for p in r["per_thread"]]) for r in omp["parallel_regions"]}
    c.equal(got, OMP_SYNTH_WANT, "%s: parallel regions (hand-computed)" % what)
    c.equal([r["name"] for r in omp["parallel_regions"]],
            ["parallel (synth.c:10)", "parallel (synth.c:20)", "parallel (synth.c:30)"],
            "%s: parallel regions by work + wait" % what)
    lines = text.splitlines()
    for want in ("          2       3          2.260          2.240   49.8%      1.96  parallel (synth.c:10)",
                 "           2.227          0.383   14.7%  rank 0 host thread 0",
                 "           0.790          0.210   21.0%  * rank 1 host thread 0"):
        c.check(want in lines, "%s: text line %r missing: %r" % (what, want, lines))
    # --top 1: one parallel region and "... 2 more"
    rc, t1, err = cli(["summary", "--top", "1", d], tmp)
    c.equal((rc, err), (0, ""), "%s --top 1: exit status, stderr" % what)
    check_omp_report(c, what + " --top 1", d, t1, js, top=1)
    c.check("  ... 2 more" in t1.splitlines(), "%s --top 1: no '... 2 more'" % what)
    # OMP work / OMP wait of 0 and no parallel region or wait: no OpenMP part
    d0 = os.path.join(tmp, "omp_zero")
    from otf2.enums import LocationType, MetricMode, Type
    with otf2.writer.open(d0, timer_resolution=1000000000) as trace:
        defs = trace.definitions
        main = defs.region("main")
        mc = defs.metric_class([defs.metric_member(n, metric_mode=MetricMode.ACCUMULATED_START,
                                                   value_type=Type.UINT64, unit="ns")
                                for n in ("OMP work", "OMP wait")])
        group = defs.location_group("process 1", system_tree_parent=defs.system_tree_node("node"))
        w = trace.event_writer_from_location(defs.location("host thread 0", group=group,
                                                           type=LocationType.CPU_THREAD))
        w.enter(10, main)
        w.metric(20, mc, [0, 0])
        w.leave(30, main)
    text0, js0 = report(c, "omp_zero", d0, tmp)
    if js0 is not None:
        c.check("omp" not in js0, "omp_zero: 'omp' in the JSON report")
        c.check("OpenMP" not in text0, "omp_zero: OpenMP lines in the text: %r" % text0)
    return None


def case_omp_program(c, tmp):
    prog = os.environ.get("TEST_SUMMARY_OMP_BIN")
    if not prog:
        return "TEST_SUMMARY_OMP_BIN not set (no clang for OpenMP): part omp_program not run"
    passive = {"OMP_WAIT_POLICY": "passive"}  # waiting threads leave the cores to the working ones
    rc0, out0, err0 = x.run([prog], tmp, extra=passive)
    m = {k: re.search(r"^summary_omp: %s line (\d+) teams (\d+) threads (\d+) work (\d+) (\d+)$" % k, out0, re.M)
         for k in ("heavy", "even")}
    if not c.check(rc0 == 0 and all(m.values()) and out0.endswith("summary_omp: rc=0\n"),
                   "summary_omp untraced: exit status %r, stdout %r, stderr %r" % (rc0, out0, err0[-500:])):
        return None
    want = {k: tuple(int(v) for v in mm.groups()) for k, mm in m.items()}
    d = os.path.join(tmp, "omp")
    rc, out, err = x.run([prog], tmp, preload=True, extra=dict(passive, TRACER_OUTPUT=d, TRACER_SUMMARY="1"))
    what = "summary_omp"
    c.equal((rc, out), (rc0, out0), "%s TRACER_SUMMARY=1: exit status, stdout" % what)
    x.check_no_sanitizer(c, err, what)
    check_end_report(c, "%s TRACER_SUMMARY=1" % what, err, d, tmp)
    text, js = report(c, what, d, tmp)
    if js is None:
        return None
    check_against_python(c, what, d, text, js)
    omp = check_omp_report(c, what, d, text, js)
    if omp is None:
        return None
    # per thread: the last OMP work / OMP wait values of the archive
    t = h.Trace(os.path.join(d, "traces.otf2"))
    last = {}
    for loc, evs in t.events.items():
        for ev in evs:
            if ev.__class__.__name__ != "Metric":
                continue
            members = ev.metric.members if hasattr(ev.metric, "members") else ev.metric.metric_class.members
            for mm, v in zip(members, ev.values):
                if mm.name in ("OMP work", "OMP wait"):
                    last.setdefault((loc.group.name, loc.name), {})[mm.name] = int(v)
    c.check(last, "%s: no OMP work / OMP wait metric in the archive" % what)
    for th in omp["threads"]:
        key = (th["process"], th["location"])
        c.equal((th["source"], th["work_ns"], th["wait_ns"]),
                ("metrics", last.get(key, {}).get("OMP work"), last.get(key, {}).get("OMP wait")),
                "%s: %s: work, wait = the last metric values" % (what, th["location"]))
    src = os.path.basename(os.environ.get("TEST_SUMMARY_OMP_SRC", "summary_omp.c"))
    regs = {r["name"]: r for r in omp["parallel_regions"]}
    names = {k: "parallel (%s:%d)" % (src, want[k][0]) for k in want}
    c.equal(sorted(regs), sorted(names.values()), "%s: parallel regions" % what)
    for k, name in names.items():
        r = regs.get(name)
        if not r:
            continue
        _, teams, nthreads, heavy_ns, light_ns = want[k]
        c.equal((r["instances"], r["threads"]), (teams, nthreads), "%s: %s: instances, threads" % (what, name))
        per = r["per_thread"]
        c.equal([p["instances"] for p in per], [teams] * len(per), "%s: %s: instances per thread" % (what, name))
        for p in per:
            c.check(p["work_ns"] >= teams * light_ns * 0.95, "%s: %s: %s work %d < %d worked" % (
                what, name, p["location"], p["work_ns"], teams * light_ns))
        if k == "heavy" and len(per) == nthreads:
            by_work = sorted(per, key=lambda p: p["work_ns"])
            heavy = by_work[-1]
            c.check(min(per, key=lambda p: p["wait_ns"]) is heavy,
                    "%s: %s: the thread with the most work (%s) has not the least wait: %r"
                    % (what, name, heavy["location"], per))
            c.check(heavy["work_ns"] >= 1.5 * by_work[-2]["work_ns"], "%s: %s: heavy work %d, next %d (3x worked)"
                    % (what, name, heavy["work_ns"], by_work[-2]["work_ns"]))
            for p in by_work[:-1]:
                c.check(p["wait_ns"] >= teams * (heavy_ns - light_ns) * 0.5,
                        "%s: %s: %s waited %d, the heavy thread worked %d more per team"
                        % (what, name, p["location"], p["wait_ns"], heavy_ns - light_ns))
            c.check(r["imbalance"] is not None and r["imbalance"] >= 1.4, "%s: %s: imbalance %r (want about 2)"
                    % (what, name, r["imbalance"]))
            # the heavy thread is also the heaviest and least waiting over the whole run
            ths = {th["location"]: th for th in omp["threads"]}
            hv = ths.get(heavy["location"])
            if c.check(hv, "%s: heavy thread %s not in the threads" % (what, heavy["location"])):
                c.equal(max(omp["threads"], key=lambda th: th["work_ns"])["location"], heavy["location"],
                        "%s: the thread with the most OMP work" % what)
                c.equal(min(omp["threads"], key=lambda th: th["wait_ns"])["location"], heavy["location"],
                        "%s: the thread with the least OMP wait" % what)
    if names["heavy"] in regs and names["even"] in regs:
        c.check(regs[names["even"]]["imbalance"] < regs[names["heavy"]]["imbalance"],
                "%s: imbalance even %r >= heavy %r" % (what, regs[names["even"]]["imbalance"],
                                                       regs[names["heavy"]]["imbalance"]))
    # TRACER_MODE=machine: no parallel regions, the threads from the metrics
    dm = os.path.join(tmp, "omp_machine")
    rc, out, err = x.run([prog], tmp, preload=True, extra=dict(passive, TRACER_OUTPUT=dm, TRACER_MODE="machine"))
    c.equal((rc, out, err), (rc0, out0, ""), "%s TRACER_MODE=machine: exit status, stdout, stderr" % what)
    tm, jm = report(c, what + " machine", dm, tmp)
    if jm is not None:
        om = check_omp_report(c, what + " machine", dm, tm, jm)
        if om is not None:
            c.equal(om["parallel_regions"], [], "%s machine: no parallel regions" % what)
            c.equal([th["source"] for th in om["threads"]], ["metrics"] * len(om["threads"]),
                    "%s machine: threads from the metrics" % what)
    # a thread's work in parallel regions: its metric is about the sum over
    # the regions (the metric counts to each implicit task's end)
    for th in omp["threads"]:
        w = sum(p["work_ns"] for r in omp["parallel_regions"] for p in r["per_thread"]
                if (p["process"], p["location"]) == (th["process"], th["location"]))
        c.check(abs(th["work_ns"] - w) <= max(0.01 * w, 100000), "%s: %s: OMP work %d, the parallel regions' "
                "work %d" % (what, th["location"], th["work_ns"], w))
    return None


def main():
    c = h.Checker("summary")
    tmp = tempfile.mkdtemp(prefix="tracer-test-summary-")
    notes = []
    try:
        case_user(c, tmp)
        case_nest(c, tmp)
        for case in (case_basic, case_mpit, case_job, case_omp_synthetic, case_omp_program):
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
