#!/usr/bin/python3
"""Non-EMI fallback and incomplete operations, driven by the OMPT test double
(tests/double/ompt_double.c, which says in its header what it stands in for).

nonemi ground truth: 1 target on device 0; alloc 4096 B at 0x200000; transfer
to device 4096 B (RmaPut); kernel with 8 requested teams on device 0's stream;
transfer from device 1024 B (RmaGet); delete of 0x200000, whose size tracer
must take from the alloc (4096); memory in use 4096 then 0.

overlap ground truth: kernels with requested teams 1 and 2 overlap in time on
device 0, so they are on two streams of device 0 ('device 0 stream' and
'device 0 stream 1'); the third kernel (teams 3) follows both, on the first.

linkstale ground truth: `linked` (double[4], 32 bytes) is a link variable.
Mapping 1: storage 0x300000, the device reference pointer (at 0x500000) gets
0x300000 (ref_ptr_written 1), then unmapped. Mapping 2: half of it (16 bytes,
partial) at 0x400000 with no pointer write: a `stale link pointer` with
ref_value 0x300000, and a `link unmap` with incomplete = 1 at the end.

incomplete ground truth: a complete `target enter data` with one 512 B alloc;
then a `target` whose 256 B transfer and kernel never end: three Leaves with
incomplete == 1 (transfer and target on the host thread, kernel on the
device), closed at the end of the run, properly nested.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import harness as h  # noqa: E402
from otf2_trace import Trace  # noqa: E402


def run_double(mode, tmp):
    out = os.path.join(tmp, mode)
    env = h.base_env()
    env["TRACER_OUTPUT"] = out
    extra = [p for p in os.environ.get("TEST_SANITIZER_PRELOAD", "").split(":") if p]
    if extra:  # sanitizer runtimes must come first even for a linked library
        env["LD_PRELOAD"] = ":".join(extra)
    p = subprocess.run([h.env_path("TEST_BIN"), mode], cwd=tmp, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p, out


def main():
    c = h.Checker("ompt_double")
    tmp = tempfile.mkdtemp(prefix="tracer-test-double-")
    try:
        p, out = run_double("nonemi", tmp)
        c.equal(p.returncode, 0, "nonemi exit code")
        c.equal(p.stdout.decode(), "ompt_double nonemi done\n", "nonemi stdout")
        c.equal(p.stderr.decode(), "", "nonemi stderr")
        t = Trace(os.path.join(out, "traces.otf2"))
        c.extend(t.check_timestamps(), "nonemi timestamps")
        c.extend(t.check_nesting(), "nonemi nesting")
        counts = t.count_enters()
        for name, want in (("target", 1), ("alloc", 1), ("transfer to device", 1),
                           ("transfer from device", 1), ("delete", 1), ("kernel", 1)):
            c.equal(counts.get(name, 0), want, "nonemi %s count" % name)
        c.equal(h.data_op_summary(t), {("alloc", 0): [4096], ("transfer to device", 0): [4096],
                                       ("transfer from device", 0): [1024], ("delete", 0): [4096]},
                "nonemi data ops (kind, device) -> bytes")
        c.equal(h.transfer_summary(t), {("to device", 0): [4096], ("from device", 0): [1024]},
                "nonemi RmaPut/RmaGet")
        streams = t.device_streams()
        kernels = t.enters("kernel")
        c.equal(len(kernels), 1, "nonemi kernels")
        if kernels:
            loc, ev = kernels[0]
            c.check(streams.get(0) is loc or loc in streams.values(), "nonemi kernel is on device 0 stream")
            c.equal(Trace.attr(ev, "requested_teams"), 8, "nonemi requested teams")
            c.equal(Trace.attr(ev, "device"), 0, "nonemi kernel device")
        allocs = t.enters("alloc")
        if allocs:
            c.equal(Trace.attr(allocs[0][1], "dst_addr"), 0x200000, "nonemi alloc dst_addr")
            c.equal(Trace.attr(allocs[0][1], "src_addr"), 0x100000, "nonemi alloc src_addr")
            c.equal(Trace.attr(allocs[0][1], "src_device"), 4, "nonemi alloc src_device")
        c.equal([v for _, _, v in t.metric_values("device_memory_in_use")], [4096, 0],
                "nonemi device memory in use")
        c.equal(t.incomplete_leaves(), [], "nonemi incomplete leaves")

        p, out = run_double("incomplete", tmp)
        c.equal(p.returncode, 0, "incomplete exit code")
        c.equal(p.stdout.decode(), "ompt_double incomplete done\n", "incomplete stdout")
        t = Trace(os.path.join(out, "traces.otf2"))
        c.extend(t.check_timestamps(), "incomplete timestamps")
        c.extend(t.check_nesting(), "incomplete nesting")
        names = sorted(ev.region.canonical_name for _, ev in t.incomplete_leaves())
        c.equal(names, ["kernel", "target", "transfer to device"], "incomplete leaves")
        complete = [ev for _, ev in t.leaves("target enter data")]
        c.equal(len(complete), 1, "complete target enter data")
        c.check(all(Trace.attr(ev, "incomplete", 0) == 0 for ev in complete),
                "the completed construct is not marked incomplete")
        c.equal(h.transfer_summary(t), {("to device", 0): [256]}, "incomplete transfer RmaPut")
        c.equal(t.count_enters().get("kernel", 0), 1, "incomplete kernel enter")
        p, out = run_double("overlap", tmp)
        c.equal(p.returncode, 0, "overlap exit code")
        t = Trace(os.path.join(out, "traces.otf2"))
        c.extend(t.check_timestamps(), "overlap timestamps")
        c.extend(t.check_nesting(), "overlap nesting")
        placed = sorted((Trace.attr(ev, "requested_teams"), loc.name) for loc, ev in t.enters("kernel"))
        c.equal(placed, [(1, "device 0 stream"), (2, "device 0 stream 1"), (3, "device 0 stream")],
                "overlap: kernel (teams) -> stream")
        c.equal(sorted(t.streams_of_device()), [0], "overlap: streams belong to device 0 only")
        c.equal(t.incomplete_leaves(), [], "overlap incomplete leaves")
        p, out = run_double("linkstale", tmp)
        c.equal(p.returncode, 0, "linkstale exit code")
        t = Trace(os.path.join(out, "traces.otf2"))
        c.extend(t.check_timestamps(), "linkstale timestamps")
        c.extend(t.check_nesting(), "linkstale nesting")
        A = Trace.attr
        maps = [ev for _, ev in t.enters("link map")]
        c.equal([(A(e, "variable"), A(e, "device_addr"), A(e, "bytes"), A(e, "ref_ptr_written"), A(e, "partial"),
                  A(e, "ref_ptr")) for e in maps],
                [("linked", 0x300000, 32, 1, 0, 0x500000), ("linked", 0x400000, 16, 0, 1, 0)], "linkstale: link maps")
        unmaps = [ev for _, ev in t.enters("link unmap")]
        c.equal([(A(e, "device_addr"), A(e, "incomplete", 0)) for e in unmaps], [(0x300000, 0), (0x400000, 1)],
                "linkstale: link unmaps")
        stale = [ev for _, ev in t.enters("stale link pointer")]
        c.equal([(A(e, "variable"), A(e, "device_addr"), A(e, "ref_value")) for e in stale],
                [("linked", 0x400000, 0x300000)], "linkstale: stale link pointer")
        allocs = [A(ev, "variable") for _, ev in t.enters("alloc")]
        c.equal(allocs, ["linked", "linked"], "linkstale: allocs carry the variable name")
    finally:
        if not os.environ.get("TEST_KEEP"):
            import shutil
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
