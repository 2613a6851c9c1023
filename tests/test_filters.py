#!/usr/bin/python3
"""Each filter changes the recorded events exactly as docs/trace-model.md
("What filters leave out") says, checked against the ground truth of
programs/basic.c (test_basic.py), device1.c (test_device1.py) and user_api.c
(test_user_api.py), and against an unfiltered run of the same program.

  TRACER_OMPT     constructs / data_ops / kernels / none (basic.c, user_api.c)
  TRACER_DEVICES  1 / 0 / 0-1 / 5 (device1.c)
  TRACER_MIN_BYTES 4096 and the boundaries 2048, 2049, 8000, 8001, 2KiB, 64k
                  (basic.c): small transfers leave the events, their totals go
                  to TRACER::FILTERED::SMALL_TRANSFERS_*; allocs/deletes stay
  TRACER_RANKS    with PMI_RANK & co. in the environment, and under
                  mpiexec.mpich -n 2
  TRACER_REGIONS  patterns and !exclusions over user_api.c's regions and marks
  TRACER_VERBOSE  start-up and end-of-run lines
  TRACER_CLOCK    monotonic: valid trace, ordered stamps in the run's
                  CLOCK_MONOTONIC span; TRACER_CALIBRATION=1ms accepted
  properties      TRACER::CONFIG::<NAME> = "<raw> (environment|default)"
The offload parts are skipped (with a note) without clang-19.
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import cfgtest as ct  # noqa: E402
import otf2  # noqa: E402

NOTHING_RECORDED = ("tracer: no events were recorded (TRACER_OMPT leaves out some OpenMP events; 'tracer info "
                    "--config' shows its value); no trace written")

A = h.Trace.attr

# basic.c ground truth (test_basic.py)
N, M, D = 1000 * 8, 256 * 8, 64 * 8
BASIC_WRAPPERS = {"target": 2, "target enter data": 2, "target exit data": 2, "target update": 2}
BASIC_DATA = {"alloc": 4, "transfer to device": 3, "transfer from device": 2, "delete": 4}
BASIC_WRAPPER_ORDER = ["target", "target enter data", "target update", "target",
                       "target update", "target exit data", "target enter data",
                       "target exit data"]
BASIC_TO = [N, M, M]
BASIC_FROM = [N, M]
BASIC_ALLOCS = sorted([N, N, M, D])

# device1.c ground truth (test_device1.py)
B1 = 200 * 8

# user_api.c ground truth (test_user_api.py)
NT, R = 2, 100
DEFAULTS = {
    "TRACER_ENABLE": "1", "TRACER_OUTPUT": "./tracer-<exe>-<date>-<pid>", "TRACER_VERBOSE": "0",
    "TRACER_STRICT": "0", "TRACER_OMPT": "all", "TRACER_MODE": "user", "TRACER_DEVICES": "all", "TRACER_MIN_BYTES": "0",
    "TRACER_HASH": "0",
    "TRACER_RANKS": "all", "TRACER_REGIONS": "*", "TRACER_MPIT_EVENTS": "*",
    "TRACER_MPIT_LEVEL": "9", "TRACER_BUFFER_SIZE": "4M", "TRACER_MAX_MEMORY": "64M",
    "TRACER_ON_FULL": "block", "TRACER_FLUSH_INTERVAL": "1s", "TRACER_KEEP_JOURNAL": "0",
    "TRACER_SUMMARY": "0", "TRACER_WRITE_AT_END": "1", "TRACER_WRITE_THREADS": "8", "TRACER_JOB_WRITE": "exit",
    "TRACER_CLOCK_OFFSETS": "node",
    "TRACER_CLOCK": "auto", "TRACER_CALIBRATION": "0ms",
}
LAUNCHER_RANK_VARS = ["PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK",
                      "SLURM_PROCID"]


def worker_sequence(t, keep):
    """user_api.c's events of worker t, only regions/marks named in keep."""
    seq = [("Enter", "outer", None)]
    for i in range(R):
        seq += [("Enter", "inner", None), ("Enter", "tick", t * 1000000 + i),
                ("Leave", "tick", None), ("Leave", "inner", None)]
        if i % 2 == 0:
            seq += [("Enter", "tick", t * 1000000 + 500000 + i), ("Leave", "tick", None)]
    seq.append(("Leave", "outer", None))
    return [s for s in seq if s[1] in keep]


def observed_spans(t, loc):
    """The sequences of the threads that had @loc one after another (issue
    34: a location is free after its thread's last event): a thread's span
    begins at the Enter carrying its `thread` (OS tid)."""
    spans = []
    for ev in t.events[loc]:
        if isinstance(ev, otf2.events.Enter) and A(ev, "thread") is not None:
            spans.append([])
        if spans:
            spans[-1].append(ev)
    return [events_sequence(evs) for evs in spans]


def observed_sequence(t, loc):
    return events_sequence(t.events[loc])


def events_sequence(events):
    seq = []
    for ev in events:
        if isinstance(ev, otf2.events.Enter):
            v = A(ev, "value") if ev.region.canonical_name == "tick" else None
            seq.append(("Enter", ev.region.canonical_name, v))
        elif isinstance(ev, otf2.events.Leave):
            seq.append(("Leave", ev.region.canonical_name, None))
    return seq


def lifecycle_per_stream(t):
    """{device: {device lifecycle region: count}} on the first stream of each device."""
    out = {}
    for d, loc in t.device_streams().items():
        cnt = t.count_enters(loc)
        out[d] = {k: v for k, v in cnt.items() if k in h.DEVICE_LIFECYCLE}
    return out


def enter_counts(t):
    return {k: v for k, v in t.count_enters().items() if k not in h.DEVICE_LIFECYCLE}


def check_valid(c, t, what):
    c.extend(t.check_timestamps(), "%s: timestamps" % what)
    c.extend(t.check_nesting(), "%s: nesting" % what)
    c.check(not t.incomplete_leaves(), "%s: incomplete leaves" % what)
    for loc, ev in t.enters():
        cn = ev.region.canonical_name
        if cn in h.OMPT_REGIONS:
            where = h.OMPT_REGIONS[cn][2]
            want = otf2.enums.LocationType.CPU_THREAD if where == "host" else \
                otf2.enums.LocationType.ACCELERATOR_STREAM
            c.check(loc.type == want, "%s: %r recorded on %s" % (what, cn, loc.name))


def traced_run(c, run, prog, env, what):
    """A filtered run that must still behave normally and write a trace."""
    r = run.run(prog, env, what=what)
    ct.check_normal(c, r, prog)
    if not ct.check_traced(c, r):
        return r, None
    try:
        t = r.trace()
    except Exception as e:       # unreadable archive
        c.check(False, "%s: otf2 reader failed: %r" % (what, e))
        return r, None
    check_valid(c, t, what)
    return r, t


# --------------------------------------------------------------------------
def test_ompt(c, run, bp, ua):
    if bp:
        r, full = traced_run(c, run, bp, {}, "basic unfiltered")
        lines = h.kernel_lines(bp.src)
        kern_lines = [lines["first"], lines["second"]]
        if full is None:
            return
        want_full = dict(BASIC_WRAPPERS, kernel=2, **BASIC_DATA)
        c.equal(enter_counts(full), want_full, "basic unfiltered: Enter counts (ground truth)")
        life = lifecycle_per_stream(full)
        c.check(life.get(0, {}).get("device initialize") == 1,
                "basic unfiltered: device 0 initialize: %r" % life)

        def wrappers_order(t):
            return [ev.region.canonical_name for loc in t.cpu_threads()
                    for ev in t.events[loc]
                    if isinstance(ev, otf2.events.Enter) and ev.region.canonical_name in h.WRAPPERS]

        # constructs: target regions only
        what = "basic TRACER_OMPT=constructs"
        r, t = traced_run(c, run, bp, {"TRACER_OMPT": "constructs"}, what)
        if t is not None:
            c.equal(enter_counts(t), BASIC_WRAPPERS, "%s: Enter counts" % what)
            c.equal(wrappers_order(t), BASIC_WRAPPER_ORDER, "%s: order of target constructs" % what)
            c.equal(h.transfer_summary(t), {}, "%s: RMA transfers" % what)
            c.equal(lifecycle_per_stream(t), life, "%s: device events (not an OMPT class)" % what)
            for loc, ev in t.enters():
                if ev.region.canonical_name in h.WRAPPERS:
                    c.equal(A(ev, "device"), 0, "%s: device of %s" % (what, ev.region.canonical_name))

        # data_ops: allocs, transfers (with RMA), deletes only
        what = "basic TRACER_OMPT=data_ops"
        r, t = traced_run(c, run, bp, {"TRACER_OMPT": "data_ops"}, what)
        if t is not None:
            c.equal(enter_counts(t), BASIC_DATA, "%s: Enter counts" % what)
            c.equal(h.data_op_summary(t), h.data_op_summary(full),
                    "%s: data ops vs unfiltered run" % what)
            c.equal(h.data_op_summary(t), {
                ("alloc", 0): BASIC_ALLOCS, ("transfer to device", 0): sorted(BASIC_TO),
                ("transfer from device", 0): sorted(BASIC_FROM), ("delete", 0): BASIC_ALLOCS},
                "%s: data ops (kind, device) -> bytes" % what)
            c.equal(h.transfer_summary(t), {("to device", 0): sorted(BASIC_TO),
                                            ("from device", 0): sorted(BASIC_FROM)},
                    "%s: RmaPut/RmaGet" % what)
            h.check_rma(c, t)
            h.check_memory(c, t, single_thread=True)
            c.equal(lifecycle_per_stream(t), life, "%s: device events" % what)

        # kernels: kernels on device streams only
        what = "basic TRACER_OMPT=kernels"
        r, t = traced_run(c, run, bp, {"TRACER_OMPT": "kernels"}, what)
        if t is not None:
            c.equal(enter_counts(t), {"kernel": 2}, "%s: Enter counts" % what)
            for th in t.cpu_threads():
                c.equal(len(t.enters(location=th)), 0, "%s: Enters on %s" % (what, th.name))
            streams = t.device_streams()
            if c.check(0 in streams, "%s: no device 0 stream" % what):
                names = [ev.region.name for _, ev in t.enters("kernel", streams[0])]
                c.equal(len(names), 2, "%s: kernels on device 0 stream" % what)
                # "nothing else in the trace changes": kernels keep their names,
                # "kernel main (<file>:<line>)"
                c.check([bool(h.kernel_name_re(l).fullmatch(n)) for n, l in zip(names, kern_lines)]
                        == [True] * len(kern_lines),
                        "%s: KERNEL NAMING: kernel names %r, want kernel main (<file>:<line>) "
                        "for lines %r as in the unfiltered run %r"
                        % (what, names, kern_lines,
                           [ev.region.name for _, ev in full.enters("kernel")]))
                for _, ev in t.enters("kernel"):
                    c.equal(A(ev, "device"), 0, "%s: kernel device attribute" % what)
            c.equal(h.transfer_summary(t), {}, "%s: RMA transfers" % what)
            c.equal(lifecycle_per_stream(t), life, "%s: device events" % what)

        # constructs,kernels: no data ops
        what = "basic TRACER_OMPT=constructs,kernels"
        r, t = traced_run(c, run, bp, {"TRACER_OMPT": "constructs,kernels"}, what)
        if t is not None:
            c.equal(enter_counts(t), dict(BASIC_WRAPPERS, kernel=2), "%s: Enter counts" % what)
            h.check_attributes(c, t)

        # none: no OpenMP event at all -> no events -> nothing written
        # the user narrowed TRACER_OMPT and nothing was left: one line says
        # so, verbose or not (issue 35, item 8: it was silent)
        what = "basic TRACER_OMPT=none"
        r = run.run(bp, {"TRACER_OMPT": "none"}, what=what)
        ct.check_normal(c, r, bp, stderr_empty=False)
        c.equal(r.lines, [NOTHING_RECORDED], "%s: stderr" % what)
        ct.check_untraced(c, r)
        what = "basic TRACER_OMPT=none TRACER_VERBOSE=1"
        r = run.run(bp, {"TRACER_OMPT": "none", "TRACER_VERBOSE": "1"}, what=what)
        ct.check_normal(c, r, bp, stderr_empty=False)
        c.check(NOTHING_RECORDED in r.lines,
                "%s: verbose does not say no trace was written: %r" % (what, r.lines))
        c.check(not any("trace written to" in l for l in r.lines),
                "%s: claims a trace was written: %r" % (what, r.lines))
        ct.check_untraced(c, r)

    # user_api has no OpenMP: TRACER_OMPT=none keeps its user regions.
    what = "user_api TRACER_OMPT=none"
    r, t = traced_run(c, run, ua, {"TRACER_OMPT": "none"}, what)
    if t is not None:
        c.equal(dict(t.count_enters()), {"main": 1, "outer": NT, "inner": NT * R,
                                         "tick": NT * (R + R // 2)}, "%s: Enter counts" % what)


# --------------------------------------------------------------------------
def test_devices(c, run, dp):
    if not dp:
        return
    lines = h.kernel_lines(dp.src)
    r, full = traced_run(c, run, dp, {}, "device1 unfiltered")
    if full is None:
        return
    c.equal(enter_counts(full), {"target": 2, "alloc": 2, "transfer to device": 2,
                                 "transfer from device": 2, "delete": 2, "kernel": 2},
            "device1 unfiltered: Enter counts (ground truth)")
    life = lifecycle_per_stream(full)

    for dev in (1, 0):
        what = "device1 TRACER_DEVICES=%d" % dev
        r, t = traced_run(c, run, dp, {"TRACER_DEVICES": str(dev)}, what)
        if t is None:
            continue
        c.equal(enter_counts(t), {"target": 1, "alloc": 1, "transfer to device": 1,
                                  "transfer from device": 1, "delete": 1, "kernel": 1},
                "%s: Enter counts" % what)
        c.equal(sorted(t.device_streams()), [dev], "%s: device streams" % what)
        c.equal(sorted(g.name for g in {l.group for l in t.locations
                                        if l.type == otf2.enums.LocationType.ACCELERATOR_STREAM}),
                ["device %d" % dev], "%s: accelerator location groups" % what)
        c.equal(h.data_op_summary(t), {
            ("alloc", dev): [B1], ("transfer to device", dev): [B1],
            ("transfer from device", dev): [B1], ("delete", dev): [B1]},
            "%s: data ops (kind, device) -> bytes" % what)
        c.equal(h.transfer_summary(t), {("to device", dev): [B1], ("from device", dev): [B1]},
                "%s: RmaPut/RmaGet" % what)
        c.equal([A(ev, "device") for _, ev in t.enters("target")], [dev],
                "%s: device of the target region" % what)
        c.equal([A(ev, "device") for _, ev in t.enters("kernel")], [dev],
                "%s: device of the kernel" % what)
        kl = lines.get("dev%d" % dev)
        names = [ev.region.name for _, ev in t.enters("kernel")]
        c.check(len(names) == 1 and kl and h.kernel_name_re(kl).search(names[0]),
                "%s: kernel %r, want kernel main (<file>:%s)" % (what, names, kl))
        c.equal(lifecycle_per_stream(t), {dev: life.get(dev)},
                "%s: device events only of device %d (as unfiltered)" % (what, dev))
        h.check_rma(c, t)
        h.check_memory(c, t, single_thread=True)
        h.check_attributes(c, t)
        props = ct.properties(c, r.anchor, what)
        c.equal(props.get("TRACER::CONFIG::TRACER_DEVICES"), "%d (environment)" % dev,
                "%s: property TRACER_DEVICES" % what)

    what = "device1 TRACER_DEVICES=0-1"
    r, t = traced_run(c, run, dp, {"TRACER_DEVICES": "0-1"}, what)
    if t is not None:
        c.equal(enter_counts(t), enter_counts(full), "%s: Enter counts vs unfiltered" % what)
        c.equal(h.data_op_summary(t), h.data_op_summary(full), "%s: data ops vs unfiltered" % what)
        c.equal(sorted(t.device_streams()), [0, 1], "%s: device streams" % what)
        c.equal(lifecycle_per_stream(t), {d: life.get(d) for d in (0, 1)},
                "%s: device events" % what)

    for sel in ("5", "2-3,5"):
        what = "device1 TRACER_DEVICES=%s" % sel
        r = run.run(dp, {"TRACER_DEVICES": sel}, what=what)
        ct.check_normal(c, r, dp)
        if sel == "5":
            ct.check_untraced(c, r)       # no event at all -> nothing written
        elif ct.check_traced(c, r):
            t = r.trace()
            c.equal(enter_counts(t), {}, "%s: Enter counts" % what)
            c.equal(sorted(t.device_streams()), [2, 3], "%s: device streams" % what)


# --------------------------------------------------------------------------
def test_min_bytes(c, run, bp):
    if not bp:
        return
    r, full = traced_run(c, run, bp, {}, "basic unfiltered")
    if full is None:
        return
    props = ct.properties(c, r.anchor, "basic unfiltered")
    c.equal(props.get("TRACER::FILTERED::SMALL_TRANSFERS_TO_DEVICE"), "0 transfers, 0 bytes",
            "basic unfiltered: SMALL_TRANSFERS_TO_DEVICE")
    c.equal(props.get("TRACER::FILTERED::SMALL_TRANSFERS_FROM_DEVICE"), "0 transfers, 0 bytes",
            "basic unfiltered: SMALL_TRANSFERS_FROM_DEVICE")
    c.equal(props.get("TRACER::CONFIG::TRACER_MIN_BYTES"), "0 (default)",
            "basic unfiltered: property TRACER_MIN_BYTES")
    wrappers_full = {k: v for k, v in enter_counts(full).items() if k in h.WRAPPERS or k == "kernel"}

    for value, threshold in (("4096", 4096), ("2048", 2048), ("2049", 2049), ("8000", 8000),
                             ("8001", 8001), ("2KiB", 2048), ("64k", 65536), ("1G", 1 << 30)):
        what = "basic TRACER_MIN_BYTES=%s" % value
        r, t = traced_run(c, run, bp, {"TRACER_MIN_BYTES": value}, what)
        if t is None:
            continue
        kept_to = sorted(b for b in BASIC_TO if b >= threshold)
        kept_from = sorted(b for b in BASIC_FROM if b >= threshold)
        small_to = [b for b in BASIC_TO if b < threshold]
        small_from = [b for b in BASIC_FROM if b < threshold]
        want = {("alloc", 0): BASIC_ALLOCS, ("delete", 0): BASIC_ALLOCS}
        if kept_to:
            want[("transfer to device", 0)] = kept_to
        if kept_from:
            want[("transfer from device", 0)] = kept_from
        c.equal(h.data_op_summary(t), want, "%s: data ops (kind, device) -> bytes" % what)
        want_rma = {}
        if kept_to:
            want_rma[("to device", 0)] = kept_to
        if kept_from:
            want_rma[("from device", 0)] = kept_from
        c.equal(h.transfer_summary(t), want_rma, "%s: RmaPut/RmaGet" % what)
        c.equal({k: v for k, v in enter_counts(t).items() if k in h.WRAPPERS or k == "kernel"},
                wrappers_full, "%s: target regions and kernels unaffected" % what)
        h.check_rma(c, t)
        h.check_memory(c, t, single_thread=True)
        h.check_attributes(c, t)
        props = ct.properties(c, r.anchor, what)
        c.equal(props.get("TRACER::FILTERED::SMALL_TRANSFERS_TO_DEVICE"),
                "%d transfers, %d bytes" % (len(small_to), sum(small_to)),
                "%s: SMALL_TRANSFERS_TO_DEVICE" % what)
        c.equal(props.get("TRACER::FILTERED::SMALL_TRANSFERS_FROM_DEVICE"),
                "%d transfers, %d bytes" % (len(small_from), sum(small_from)),
                "%s: SMALL_TRANSFERS_FROM_DEVICE" % what)
        c.equal(props.get("TRACER::CONFIG::TRACER_MIN_BYTES"), "%s (environment)" % value,
                "%s: property TRACER_MIN_BYTES" % what)
        if value == "4096":     # the numbers spelled out, from basic.c's ground truth
            c.equal(props.get("TRACER::FILTERED::SMALL_TRANSFERS_TO_DEVICE"),
                    "2 transfers, 4096 bytes", "%s: SMALL_TRANSFERS_TO_DEVICE (literal)" % what)
            c.equal(props.get("TRACER::FILTERED::SMALL_TRANSFERS_FROM_DEVICE"),
                    "1 transfers, 2048 bytes", "%s: SMALL_TRANSFERS_FROM_DEVICE (literal)" % what)


# --------------------------------------------------------------------------
def test_ranks(c, run, ua, bp):
    def one(prog, env, want_traced):
        what = "%s %s" % (prog.name, " ".join("%s=%s" % kv for kv in sorted(env.items())))
        r = run.run(prog, env, what=what)
        ct.check_no_sanitizer(c, r)
        if want_traced:
            ct.check_normal(c, r, prog)
            ct.check_traced(c, r)
        else:
            c.equal(r.lines, [], "%s: stderr" % what)
            ct.check_untraced(c, r)
            if prog is not ua:          # user_api's own output differs when untraced
                ct.check_normal(c, r, prog)
        return r

    for sel, traced in (("3", True), ("0-2", False), ("0-2,3", True), ("all", True),
                        ("2-7", True), ("0,4-7", False)):
        one(ua, {"PMI_RANK": "3", "TRACER_RANKS": sel}, traced)
    for var in LAUNCHER_RANK_VARS:
        one(ua, {var: "3", "TRACER_RANKS": "3"}, True)
        one(ua, {var: "3", "TRACER_RANKS": "0"}, False)
    # no launcher rank: TRACER_RANKS cannot exclude the process
    one(ua, {"TRACER_RANKS": "0"}, True)
    if bp:
        one(bp, {"PMI_RANK": "3", "TRACER_RANKS": "0-2"}, False)
        one(bp, {"PMI_RANK": "3", "TRACER_RANKS": "3"}, True)
    # verbose says why it is not traced
    r = run.run(ua, {"PMI_RANK": "3", "TRACER_RANKS": "0-2", "TRACER_VERBOSE": "1"},
                what="user_api PMI_RANK=3 TRACER_RANKS=0-2 TRACER_VERBOSE=1")
    c.check(len(r.lines) == 1 and r.lines[0].startswith("tracer: ") and "TRACER_RANKS" in r.lines[0],
            "%s: want one verbose line naming TRACER_RANKS, got %r" % (r.what, r.lines))
    ct.check_untraced(c, r)

    mpiexec = shutil.which("mpiexec.mpich")
    if not mpiexec:
        c.note("mpiexec.mpich not found: the launcher part of TRACER_RANKS is skipped")
        return
    for sel, ndirs in ((None, 2), ("1", 1), ("0", 1), ("0-1", 2), ("5", 0)):
        env = {"TRACER_OUTPUT": None}   # default directory per process, in the cwd
        if sel is not None:
            env["TRACER_RANKS"] = sel
        what = "mpiexec.mpich -n 2 user_api TRACER_RANKS=%s" % sel
        r = run.run(ua, env, what=what, prefix=[mpiexec, "-n", "2"], output=False)
        c.check(r.rc is not None, "%s: timed out" % what)
        ct.check_no_sanitizer(c, r)
        dirs = sorted(d for d in os.listdir(r.cwd) if d.startswith("tracer-user_api-"))
        c.equal(len(dirs), ndirs, "%s: trace directories in the cwd (%r)" % (what, dirs))
        c.equal(len(os.listdir(r.cwd)), len(dirs), "%s: other files in the cwd" % what)
        for d in dirs:
            anchor = os.path.join(r.cwd, d, "traces.otf2")
            if c.check(os.path.isfile(anchor), "%s: %s holds no traces.otf2" % (what, d)):
                props = ct.properties(c, anchor, what)
                c.equal(props.get("TRACER::CONFIG::TRACER_RANKS"),
                        "%s (environment)" % sel if sel else "all (default)",
                        "%s: property TRACER_RANKS" % what)
        if ndirs == 2 and sel is None:
            c.equal(r.out.count("failures=0"), 2, "%s: both ranks ran main" % what)


# --------------------------------------------------------------------------
def test_regions(c, run, ua):
    all_names = {"main", "outer", "inner", "tick"}
    for pattern, keep in (("inner", {"inner"}),
                          ("inner*,!*x*", {"inner"}),
                          ("!tick", {"main", "outer", "inner"}),
                          ("t*", {"tick"}),
                          ("*er,!inn*", {"outer"}),
                          ("m*,tick", {"main", "tick"}),
                          ("*", all_names),
                          ("?n*,!*k", {"inner"}),
                          ("[mo]*", {"main", "outer"})):
        what = "user_api TRACER_REGIONS=%s" % pattern
        r, t = traced_run(c, run, ua, {"TRACER_REGIONS": pattern}, what)
        if t is None:
            continue
        want_counts = {"main": 1, "outer": NT, "inner": NT * R, "tick": NT * (R + R // 2)}
        c.equal(dict(t.count_enters()), {k: v for k, v in want_counts.items() if k in keep},
                "%s: Enter counts" % what)
        c.equal(sorted(reg.canonical_name for reg in t.regions), sorted(keep),
                "%s: region definitions" % what)
        # Only threads that recorded an event get a location ("host thread <n>",
        # n in order of first event): main's thread only when "main" is kept.
        # A worker may take the location of one whose events all came before.
        seqs = [seq for loc in t.cpu_threads() for seq in observed_spans(t, loc)]
        wants = [worker_sequence(i, keep) for i in range(NT)]
        if "main" in keep:
            wants.append([("Enter", "main", None), ("Leave", "main", None)])
            main_loc = [l for l in t.cpu_threads() if l.name == "host thread 0"]
            if c.check(main_loc, "%s: no host thread 0" % what):
                c.equal(observed_sequence(t, main_loc[0]), wants[-1],
                        "%s: host thread 0 (main records first)" % what)
        wants = [w for w in wants if w]
        c.equal(len(seqs), len(wants), "%s: host thread spans (threads that recorded an event)" % what)
        c.check(1 <= len(t.cpu_threads()) <= len(wants),
                "%s: %d host thread locations for %d threads that recorded an event"
                % (what, len(t.cpu_threads()), len(wants)))
        c.check(sorted(seqs) == sorted(wants),
                "%s: per-thread sequences differ from the ground truth filtered to %r "
                "(got lengths %r, want %r)" % (what, sorted(keep), sorted(len(q) for q in seqs),
                                               sorted(len(q) for q in wants)))
        props = ct.properties(c, r.anchor, what)
        c.equal(props.get("TRACER::CONFIG::TRACER_REGIONS"), "%s (environment)" % pattern,
                "%s: property TRACER_REGIONS" % what)
    # nothing selected: the program runs normally (filtered calls return 0),
    # no event at all -> nothing written
    for pattern in ("nomatch", "!*"):
        what = "user_api TRACER_REGIONS=%s" % pattern
        r = run.run(ua, {"TRACER_REGIONS": pattern}, what=what)
        ct.check_normal(c, r, ua)
        ct.check_untraced(c, r)


# --------------------------------------------------------------------------
def test_verbose(c, run, ua, bp):
    for prog, started_by in [(ua, "api")] + ([(bp, "ompt")] if bp else []):
        what = "%s TRACER_VERBOSE=1" % prog.name
        r = run.run(prog, {"TRACER_VERBOSE": "1"}, what=what)
        ct.check_normal(c, r, prog, stderr_empty=False)
        ct.check_traced(c, r)
        lines = r.lines
        c.check(all(l.startswith("tracer: ") for l in lines),
                "%s: every stderr line starts with 'tracer: ': %r" % (what, lines))
        start = [l for l in lines if re.match(r"tracer: tracing pid \d+ ", l)]
        c.check(len(start) == 1 and ("started by %s" % started_by) in start[0]
                and r.output in start[0],
                "%s: want one start-up line 'tracer: tracing pid N (started by %s); trace goes "
                "to %s', got %r" % (what, started_by, r.output, lines))
        end = [l for l in lines if l.startswith("tracer: trace written to ")]
        c.check(len(end) == 1 and end[0].startswith("tracer: trace written to %s/traces.otf2 ("
                                                    % r.output),
                "%s: want one end-of-run line 'trace written to %s/traces.otf2 (...)', got %r"
                % (what, r.output, lines))
        if start and end:
            c.check(lines.index(start[0]) < lines.index(end[0]),
                    "%s: the end-of-run line comes before the start-up line" % what)
        # An OpenMP program also says how libomptarget reaches the runtime.
        connection = [l for l in lines if l.startswith("tracer: offload connection: ")]
        want = 3 if started_by == "ompt" else 2
        c.check(len(connection) == want - 2,
                "%s: want %d 'offload connection:' line(s), got %r" % (what, want - 2, lines))
        c.check(len(lines) == want, "%s: want exactly %d lines, got %r" % (what, want, lines))
        # not verbose: silent
        r = run.run(prog, {"TRACER_VERBOSE": "0"}, what="%s TRACER_VERBOSE=0" % prog.name)
        ct.check_normal(c, r, prog)
        ct.check_traced(c, r)


# --------------------------------------------------------------------------
def test_clock(c, run, ua, bp):
    for prog in [ua] + ([bp] if bp else []):
        for env in ({"TRACER_CLOCK": "monotonic"}, {"TRACER_CLOCK": "monotonic",
                                                    "TRACER_CALIBRATION": "1ms"},
                    {"TRACER_CALIBRATION": "1ms"}, {}):
            what = "%s %s" % (prog.name, " ".join("%s=%s" % kv for kv in sorted(env.items())))
            r, t = traced_run(c, run, prog, env, what)
            if t is None:
                continue
            times = [ev.time for _, ev in t.all_events()]
            c.check(times, "%s: no events" % what)
            if prog is ua:
                c.equal(dict(t.count_enters()), {"main": 1, "outer": NT, "inner": NT * R,
                                                 "tick": NT * (R + R // 2)},
                        "%s: Enter counts" % what)
            else:
                c.equal(enter_counts(t), dict(BASIC_WRAPPERS, kernel=2, **BASIC_DATA),
                        "%s: Enter counts" % what)
            if times:
                # stamps are ns of CLOCK_MONOTONIC, also from the TSC (interpolated
                # between calibration pairs, with no least span by default): inside
                # the run's span
                c.check(r.t0 <= min(times) and max(times) <= r.t1,
                        "%s: stamps [%d, %d] outside the run's CLOCK_MONOTONIC span [%d, %d]"
                        % (what, min(times), max(times), r.t0, r.t1))
            cp = t.clock_properties
            c.equal(cp.timer_resolution, 1000000000, "%s: timer resolution" % what)
            if times:
                c.equal(cp.global_offset, min(times), "%s: global offset" % what)
            props = ct.properties(c, r.anchor, what)
            for name in ("TRACER_CLOCK", "TRACER_CALIBRATION"):
                want = "%s (environment)" % env[name] if name in env else \
                    "%s (default)" % DEFAULTS[name]
                c.equal(props.get("TRACER::CONFIG::" + name), want, "%s: property %s"
                        % (what, name))


# --------------------------------------------------------------------------
def test_properties(c, run, ua, dp):
    cases = [(ua, {"TRACER_REGIONS": "inner*,!*x*", "TRACER_MIN_BYTES": "64k",
                   "TRACER_CLOCK": "monotonic"})]
    if dp:
        cases.append((dp, {"TRACER_DEVICES": "1"}))
    for prog, env in cases:
        what = "%s %s" % (prog.name, " ".join("%s=%s" % kv for kv in sorted(env.items())))
        r, t = traced_run(c, run, prog, env, what)
        if t is None:
            continue
        props = ct.properties(c, r.anchor, what)
        want = {}
        for name, default in DEFAULTS.items():
            if name == "TRACER_OUTPUT":
                want["TRACER::CONFIG::" + name] = "%s (environment)" % r.output
            elif name in env:
                want["TRACER::CONFIG::" + name] = "%s (environment)" % env[name]
            else:
                want["TRACER::CONFIG::" + name] = "%s (default)" % default
        want["TRACER::FILTERED::SMALL_TRANSFERS_TO_DEVICE"] = "0 transfers, 0 bytes"
        want["TRACER::FILTERED::SMALL_TRANSFERS_FROM_DEVICE"] = "0 transfers, 0 bytes"
        want["TRACER::RUN::END"] = "normal end"
        got = {k: v for k, v in props.items() if k.startswith("TRACER::")}
        c.equal(got, want, "%s: TRACER:: archive properties" % what)
        if prog is dp:
            c.equal(props.get("TRACER::CONFIG::TRACER_DEVICES"), "1 (environment)",
                    "%s: TRACER_DEVICES property" % what)
            c.equal(props.get("TRACER::CONFIG::TRACER_MIN_BYTES"), "0 (default)",
                    "%s: TRACER_MIN_BYTES property" % what)
    # TRACER_OUTPUT unset: the default, as written in the table
    what = "user_api without TRACER_OUTPUT"
    r = run.run(ua, {"TRACER_OUTPUT": None}, what=what, output=False)
    ct.check_normal(c, r, ua)
    dirs = [d for d in os.listdir(r.cwd) if d.startswith("tracer-user_api-")]
    if c.check(len(dirs) == 1, "%s: default directory: %r" % (what, os.listdir(r.cwd))):
        props = ct.properties(c, os.path.join(r.cwd, dirs[0], "traces.otf2"), what)
        c.equal(props.get("TRACER::CONFIG::TRACER_OUTPUT"),
                "%s (default)" % DEFAULTS["TRACER_OUTPUT"], "%s: TRACER_OUTPUT property" % what)


def main():
    c = h.Checker("filters")
    run = ct.Runner("filters")
    try:
        ua = ct.user_api()
        bp = ct.basic(c)
        dp = ct.device1(c)
        test_ompt(c, run, bp, ua)
        test_devices(c, run, dp)
        test_min_bytes(c, run, bp)
        test_ranks(c, run, ua, bp)
        test_regions(c, run, ua)
        test_verbose(c, run, ua, bp)
        test_clock(c, run, ua, bp)
        test_properties(c, run, ua, dp)
    finally:
        run.cleanup()
    c.finish()


if __name__ == "__main__":
    main()
