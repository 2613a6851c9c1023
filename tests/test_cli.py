#!/usr/bin/python3
"""The `tracer` command (tools/).

  a. --help / -h / help / help summary: exit 0, usage on stdout naming
     `summary`; --version / -V: `tracer <project version>`; unknown command
     or option: exit 2 and exactly one `tracer:` line; summary usage errors:
     exit 2 and exactly one `tracer: summary:` line.
  b. a real trace of programs/basic.c (ground truth: test_basic.py):
     `tracer summary DIR` text and `--json` numbers are exact (target
     regions per kind, kernels 2 with their outlined symbol names, transfers
     to device 3 / 12096 bytes, from device 2 / 10048 bytes, allocations
     4 / 18560 bytes, deletes 4, incomplete 0; device 0: the same transfers
     per direction, peak memory in use 16000 bytes (a and b), devices 1-3
     idle; the regions' counts per canonical name), and the JSON equals what
     the Python OTF2 reader (lib/otf2_trace.py, lib/summary_truth.py) counts
     in the same archive, every key (regions with inclusive and exclusive
     times, per_device, config = the TRACER::CONFIG::* properties); the text
     is the existing lines, then the regions, devices and configuration as
     the JSON says; DIR/, DIR/traces.otf2, `--json` after the path and `--`
     give the same.
  c. unreadable input (nonexistent path, empty dir, dir without a trace,
     traces.def cut in half or emptied, garbage traces.otf2 / traces.def,
     an event file cut in half or missing, a directory called traces.otf2,
     a FIFO): exit 1, nothing on stdout, exactly one `tracer: summary:` line,
     no signal, no sanitizer report.  The archives come from user_api.
"""
import json
import os
import random
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import extra as x    # noqa: E402
import summary_truth as st  # noqa: E402
import otf2          # noqa: E402
from otf2.enums import LocationGroupType  # noqa: E402

N, M, D = 1000 * 8, 256 * 8, 64 * 8
BASIC_STDOUT = "basic: sum(b)=999000 sum(c)=97920 b[10]=20 c[10]=30\n"
TARGET_KINDS = ["target", "target enter data", "target exit data", "target update",
                "target nowait", "target enter data nowait", "target exit data nowait",
                "target update nowait"]


def cli(args, cwd, timeout=60):
    return x.run([h.env_path("TEST_TRACER_CLI")] + args, cwd, timeout=timeout)


def case_a(c, cwd):
    version = os.environ.get("TEST_PROJECT_VERSION", "0.1.0")
    for args in (["--help"], ["-h"], ["help"]):
        rc, out, err = cli(args, cwd)
        c.equal(rc, 0, "%r: exit code" % args)
        c.check(re.search(r"^\s+summary\s", out, re.M), "%r: stdout does not list the "
                "summary command: %r" % (args, out[:500]))
        c.equal(err, "", "%r: stderr" % args)
    rc, out, err = cli(["help", "summary"], cwd)
    c.equal(rc, 0, "help summary: exit code")
    c.check(out.startswith("usage: tracer summary"), "help summary: stdout %r" % out[:200])
    rc, out, err = cli(["summary", "--help"], cwd)
    c.equal(rc, 0, "summary --help: exit code")
    c.check(out.startswith("usage: tracer summary"), "summary --help: stdout %r" % out[:200])
    for args in (["--version"], ["-V"]):
        rc, out, err = cli(args, cwd)
        c.equal(rc, 0, "%r: exit code" % args)
        c.equal(out, "tracer %s\n" % version, "%r: stdout" % args)
        c.equal(err, "", "%r: stderr" % args)
    for args in (["bogus"], ["--bogus"], ["help", "bogus"]):
        rc, out, err = cli(args, cwd)
        x.check_no_signal(c, rc, repr(args))
        c.equal(rc, 2, "%r: exit code" % args)
        c.equal(out, "", "%r: stdout" % args)
        line = x.check_one_line(c, err, "tracer:", repr(args))
        if line:
            c.check("bogus" in line, "%r: the error line does not name the word: %r"
                    % (args, line))
    rc, out, err = cli([], cwd)
    c.equal(rc, 2, "no arguments: exit code")
    c.equal(out, "", "no arguments: stdout")
    c.check(err.startswith("usage: tracer"), "no arguments: usage on stderr: %r" % err[:200])
    for args in (["summary"], ["summary", "--bogus", "d"], ["summary", "d1", "d2"]):
        rc, out, err = cli(args, cwd)
        x.check_no_signal(c, rc, repr(args))
        c.equal(rc, 2, "%r: exit code" % args)
        c.equal(out, "", "%r: stdout" % args)
        x.check_one_line(c, err, "tracer: summary:", repr(args))


def python_summary(t, props):
    """What `tracer summary --json` must print, counted with the Python reader
    (PROPS: the anchor's properties). per_device without its bandwidth."""
    A = h.Trace.attr
    groups = list(t.definitions.location_groups)
    cnt = t.count_enters()
    kernels = {}
    for _, ev in t.enters("kernel"):
        kernels[ev.region.name] = kernels.get(ev.region.name, 0) + 1
    tr = t.transfers()
    allocs = [ev for name in ("alloc", "alloc async") for _, ev in t.enters(name)]
    truth = st.collect(t)
    offs = [ev for loc in t.events for ev in t.events[loc] if isinstance(ev, otf2.events.MeasurementOnOff)
            and ev.measurement_mode == otf2.enums.MeasurementMode.OFF]
    cp = t.clock_properties
    span = cp.trace_length
    if cp.timer_resolution not in (0, 1000000000):
        span = int(span * 1e9 / cp.timer_resolution + 0.5)
    return {
        "trace": os.path.realpath(t.path),
        "duration_ns": span,
        "processes": sum(1 for g in groups
                         if g.location_group_type == LocationGroupType.PROCESS),
        "host_threads": len(t.cpu_threads()),
        "devices": sum(1 for g in groups
                       if g.location_group_type == LocationGroupType.ACCELERATOR),
        "target_regions": {k: cnt.get(k, 0) for k in TARGET_KINDS},
        "kernels": kernels,
        "transfers_to_device": {"count": sum(1 for e in tr if e.kind == "to device"),
                                "bytes": sum(e.bytes for e in tr if e.kind == "to device")},
        "transfers_from_device": {
            "count": sum(1 for e in tr if e.kind == "from device"),
            "bytes": sum(e.bytes for e in tr if e.kind == "from device")},
        "allocations": {"count": len(allocs), "bytes": sum(A(ev, "bytes", 0) for ev in allocs)},
        "deletes": cnt.get("delete", 0) + cnt.get("delete async", 0),
        "incomplete": len(t.incomplete_leaves()),
        "dropped_events": sum(A(ev, "lost", 0) for ev in offs),
        "drop_gaps": sum(1 for ev in offs if A(ev, "lost") is not None),
        "missing_gaps": sum(1 for ev in offs if A(ev, "lost") is None),
        "regions": truth["regions"],
        "per_device": st.per_device_list(truth),
        "config": dict(st.config_of(props)),
        "advice": st.advice_groups(t),
    }


def case_b(c, r):
    c.equal(r.traced.returncode, 0, "b: exit code of the traced basic run")
    c.equal(r.traced.stdout.decode(), BASIC_STDOUT, "b: stdout of the traced basic run")
    anchor = os.path.join(r.output, "traces.otf2")
    if not c.check(os.path.isfile(anchor), "b: no archive at %s" % anchor):
        return
    real_anchor = os.path.realpath(anchor)

    rc, out, err = cli(["summary", "--json", r.output], r.cwd)
    x.check_no_signal(c, rc, "b summary --json")
    c.equal(rc, 0, "b summary --json: exit code")
    c.equal(err, "", "b summary --json: stderr")
    c.check(out.endswith("\n") and out.count("\n") == 1, "b --json: not one line: %r"
            % out[:300])
    try:
        js = json.loads(out)
    except ValueError as e:
        c.check(False, "b --json: not JSON (%s): %r" % (e, out[:500]))
        return

    # ground truth (test_basic.py)
    c.equal(js.get("trace"), real_anchor, "b json trace")
    c.equal(js.get("target_regions"), {
        "target": 2, "target enter data": 2, "target exit data": 2, "target update": 2,
        "target nowait": 0, "target enter data nowait": 0, "target exit data nowait": 0,
        "target update nowait": 0}, "b json target_regions")
    kernels = js.get("kernels") or {}
    c.equal(sum(kernels.values()), 2, "b json kernels in total")
    lines = h.kernel_lines(h.env_path("TEST_SRC"))
    want_lines = sorted([lines["first"], lines["second"]])
    got_lines = sorted(int(m.group(1)) for m in
                       (re.fullmatch(r"kernel main \(\S+:(\d+)\)", k) for k in kernels) if m)
    c.equal(got_lines, want_lines, "b json kernel names (kernel main (<file>:<line>)) %r"
            % sorted(kernels))
    c.equal(js.get("transfers_to_device"), {"count": 3, "bytes": N + M + M},
            "b json transfers_to_device")
    c.equal(js.get("transfers_from_device"), {"count": 2, "bytes": N + M},
            "b json transfers_from_device")
    c.equal(js.get("allocations"), {"count": 4, "bytes": N + N + M + D}, "b json allocations")
    c.equal(js.get("deletes"), 4, "b json deletes")
    c.equal(js.get("incomplete"), 0, "b json incomplete")
    c.equal(js.get("processes"), 1, "b json processes")
    c.equal(js.get("host_threads"), 1, "b json host_threads")
    c.check(isinstance(js.get("duration_ns"), int) and js["duration_ns"] > 0,
            "b json duration_ns %r" % js.get("duration_ns"))
    c.check(isinstance(js.get("devices"), int) and js["devices"] >= 1,
            "b json devices %r" % js.get("devices"))

    # ground truth of the new sections: device 0 moved what the program
    # maps; its peak is a and b (N each) mapped together
    devs = {d.get("device"): d for d in js.get("per_device", [])}
    d0 = devs.get("device 0", {})
    c.equal((d0.get("to_device", {}).get("count"), d0.get("to_device", {}).get("bytes")), (3, N + M + M),
            "b json per_device device 0 to_device")
    c.equal((d0.get("from_device", {}).get("count"), d0.get("from_device", {}).get("bytes")), (2, N + M),
            "b json per_device device 0 from_device")
    c.equal(d0.get("peak_memory_bytes"), N + N, "b json per_device device 0 peak_memory_bytes")
    for name, d in devs.items():
        if name != "device 0":
            c.equal((d["to_device"]["count"], d["from_device"]["count"], d["peak_memory_bytes"]),
                    (0, 0, None), "b json per_device %s: idle" % name)
    per_canon = {}
    for reg in js.get("regions", []):
        per_canon[reg["canonical"]] = per_canon.get(reg["canonical"], 0) + reg["count"]
        c.check(reg["inclusive_ns"] >= reg["exclusive_ns"] >= 0,
                "b json region %r: inclusive %r < exclusive %r" % (reg["name"], reg["inclusive_ns"],
                                                                    reg["exclusive_ns"]))
    for kind in TARGET_KINDS:
        c.equal(per_canon.get(kind, 0), js["target_regions"].get(kind), "b json regions: %r count" % kind)
    c.equal(per_canon.get("kernel"), 2, "b json regions: kernel count")
    c.equal(per_canon.get("transfer to device"), 3, "b json regions: transfer to device count")
    c.equal(per_canon.get("transfer from device"), 2, "b json regions: transfer from device count")
    c.equal((per_canon.get("alloc"), per_canon.get("delete")), (4, 4), "b json regions: alloc, delete count")
    c.equal(js.get("config", {}).get("TRACER_OUTPUT"), "%s (environment)" % r.output, "b json config TRACER_OUTPUT")
    for dev in js.get("per_device", []):
        for direction in ("to_device", "from_device"):
            xd = dev[direction]
            want_bw = xd["bytes"] * 1e9 / xd["time_ns"] if xd["time_ns"] else None
            c.check((want_bw is None and xd["bytes_per_s"] is None) or
                    (want_bw is not None and abs(xd["bytes_per_s"] - want_bw) <= 1),
                    "b json %s %s: bytes_per_s %r, want %r" % (dev["device"], direction, xd["bytes_per_s"],
                                                               want_bw))

    # the same archive through the Python OTF2 reader
    props = st.anchor_properties(h.otf2_print_cmd(), anchor) if h.otf2_print_cmd() else None
    c.check(props is not None, "b: otf2-print -I failed or is missing")
    try:
        want = python_summary(h.Trace(anchor), props or {})
    except Exception as e:      # unreadable archive
        c.check(False, "b: Python OTF2 reader failed: %r" % e)
        want = None
    if want is not None:
        for key in sorted(set(want) | set(js)):
            got = st.json_per_device_without_bandwidth(js) if key == "per_device" else js.get(key)
            c.equal(got, want.get(key), "b json %r vs the Python reader" % key)

    # other spellings of the same request
    for args in (["summary", "--json", r.output + "/"], ["summary", "--json", anchor],
                 ["summary", r.output, "--json"], ["summary", "--json", "--", r.output]):
        rc, out2, err2 = cli(args, r.cwd)
        c.equal((rc, err2), (0, ""), "b %r: exit code, stderr" % args[1:])
        c.equal(out2, out, "b %r: output vs summary --json DIR" % args[1:])
    rc, out2, _ = cli(["summary", "--json", "trace"], os.path.dirname(r.output))
    c.equal(out2, out, "b relative path: output")

    # text output: the same numbers
    rc, text, err = cli(["summary", r.output], r.cwd)
    x.check_no_signal(c, rc, "b summary")
    c.equal(rc, 0, "b summary: exit code")
    c.equal(err, "", "b summary: stderr")
    got = text.splitlines()
    names = sorted(kernels)
    want_text = [
        "trace: %s" % real_anchor,
        "duration: %.3f ms, 1 process, 1 host thread, %d device%s"
        % (js.get("duration_ns", 0) / 1e6, js.get("devices", 0),
           "" if js.get("devices") == 1 else "s"),
        "target regions: 8  (target 2, target enter data 2, target exit data 2, "
        "target update 2)",
        "kernels: 2  (%s)" % ", ".join("%s x1" % n for n in names),
        "transfers to device: 3, 12096 bytes",
        "transfers from device: 2, 10048 bytes",
        "allocations: 4, 18560 bytes; deletes: 4",
        "incomplete operations: 0",
    ] + st.text_tail(js)
    c.equal(len(got), len(want_text), "b summary: number of lines (%r)" % got)
    for i, (g, w) in enumerate(zip(got, want_text)):
        c.equal(g, w, "b summary line %d" % (i + 1))


def make_user_trace(c, tmp):
    d = os.path.join(tmp, "user_trace")
    rc, out, err = x.run([h.env_path("USER_API_BIN")], tmp, extra={"TRACER_OUTPUT": d})
    c.equal(rc, 0, "c: user_api exit code")
    ok = c.check(os.path.isfile(os.path.join(d, "traces.otf2")),
                 "c: user_api wrote no trace at %s (stderr %r)" % (d, err[-500:]))
    if ok:
        rc, out, err = cli(["summary", d], tmp)
        c.equal((rc, err), (0, ""), "c: summary of the intact user_api trace")
    return d if ok else None


def case_c(c, tmp):
    src = make_user_trace(c, tmp)
    rnd = random.Random(20240601)
    bad = {}

    def copy(name):
        d = os.path.join(tmp, name)
        shutil.copytree(src, d, symlinks=True)
        return d

    def cut(path, fraction):
        size = os.path.getsize(path)
        os.truncate(path, int(size * fraction))

    bad["nonexistent dir"] = os.path.join(tmp, "does-not-exist")
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty)
    bad["empty dir"] = empty
    other = os.path.join(tmp, "other")
    os.mkdir(other)
    with open(os.path.join(other, "README"), "w") as f:
        f.write("not a trace\n")
    bad["dir without a trace"] = other
    anchor_dir = os.path.join(tmp, "anchor_dir")
    os.makedirs(os.path.join(anchor_dir, "traces.otf2"))
    bad["traces.otf2 is a directory"] = anchor_dir
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    bad["a FIFO"] = fifo
    if src:
        d = copy("def_half")
        cut(os.path.join(d, "traces.def"), 0.5)
        bad["traces.def cut in half"] = d
        d = copy("def_empty")
        cut(os.path.join(d, "traces.def"), 0)
        bad["traces.def empty"] = d
        d = copy("def_garbage")
        with open(os.path.join(d, "traces.def"), "wb") as f:
            f.write(bytes(rnd.getrandbits(8) for _ in range(4096)))
        bad["garbage traces.def"] = d
        d = copy("anchor_garbage")
        with open(os.path.join(d, "traces.otf2"), "wb") as f:
            f.write(bytes(rnd.getrandbits(8) for _ in range(4096)))
        bad["garbage traces.otf2"] = d
        d = copy("anchor_garbage_file")
        with open(os.path.join(d, "traces.otf2"), "wb") as f:
            f.write(bytes(rnd.getrandbits(8) for _ in range(333)))
        bad["garbage traces.otf2 given as a file"] = os.path.join(d, "traces.otf2")
        d = copy("anchor_empty")
        cut(os.path.join(d, "traces.otf2"), 0)
        bad["empty traces.otf2"] = d
        evts = sorted(n for n in os.listdir(os.path.join(src, "traces")) if n.endswith(".evt"))
        if c.check(evts, "c: no event files in %s/traces" % src):
            d = copy("evt_half")
            cut(os.path.join(d, "traces", evts[-1]), 0.5)
            bad["event file cut in half"] = d
            d = copy("evt_missing")
            os.unlink(os.path.join(d, "traces", evts[0]))
            bad["event file missing"] = d
    for what, path in bad.items():
        rc, out, err = cli(["summary", path], tmp, timeout=30)
        x.check_no_signal(c, rc, "c %s" % what)
        c.equal(rc, 1, "c %s: exit code" % what)
        c.equal(out, "", "c %s: stdout" % what)
        x.check_no_sanitizer(c, err, "c %s" % what)
        x.check_one_line(c, err, "tracer: summary:", "c %s" % what)
        rc, out, err = cli(["summary", "--json", path], tmp, timeout=30)
        c.equal((rc, out), (1, ""), "c %s --json: exit code, stdout" % what)
        x.check_one_line(c, err, "tracer: summary:", "c %s --json" % what)


def main():
    c = h.Checker("cli")
    tmp = tempfile.mkdtemp(prefix="tracer-test-cli-")
    skipped = None
    r = None
    try:
        case_a(c, tmp)
        case_c(c, tmp)
        if not os.environ.get("TEST_BIN"):
            skipped = "TEST_BIN not set (no offload compiler): part b not run"
        else:
            r = h.OffloadRun("cli")
            case_b(c, r)
    finally:
        if r is not None:
            if c.failures:
                r.show()
            r.cleanup()
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if skipped and not c.failures:
        print("SKIP:", skipped)
        sys.exit(h.SKIP)
    if skipped:
        c.note(skipped)
    c.finish()


if __name__ == "__main__":
    main()
