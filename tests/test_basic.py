#!/usr/bin/python3
"""programs/basic.c: every construct kind once or twice, exact data ops.

Ground truth (LLVM 19, x86_64 host offload, device 0; N=1000, M=256, D=64
doubles):
  target #1      alloc a 8000, alloc b 8000, to a 8000, kernel, from b 8000, delete a, b
  enter data     alloc c 2048, to c 2048
  update to      to c 2048
  target #2      kernel (c present: no data ops)
  update from    from c 2048
  exit data      delete c
  enter data     alloc d 512
  exit data      delete d (release, refcount 0)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

WANT_STDOUT = "basic: sum(b)=999000 sum(c)=97920 b[10]=20 c[10]=30\n"
N, M, D = 1000 * 8, 256 * 8, 64 * 8


def main():
    c = h.Checker("basic")
    r = h.OffloadRun("basic")
    t = None
    try:
        t = h.check_run_basics(c, r, 0, WANT_STDOUT)
        if t is not None:
            h.check_structure(c, t, 0)
            h.check_counts(c, t, {
                "target": 2, "target enter data": 2, "target exit data": 2,
                "target update": 2, "alloc": 4, "transfer to device": 3,
                "transfer from device": 2, "delete": 4, "kernel": 2})
            c.equal(h.data_op_summary(t), {
                ("alloc", 0): sorted([N, N, M, D]),
                ("transfer to device", 0): sorted([N, M, M]),
                ("transfer from device", 0): sorted([N, M]),
                ("delete", 0): sorted([N, N, M, D])}, "data ops (kind, device) -> bytes")
            c.equal(h.transfer_summary(t), {
                ("to device", 0): sorted([N, M, M]),
                ("from device", 0): sorted([N, M])}, "RmaPut/RmaGet (kind, device) -> bytes")
            h.check_memory(c, t, single_thread=True)
            lines = h.kernel_lines(r.src)
            h.check_kernels(c, t, {0: 2}, [lines["first"], lines["second"]])
            c.equal(len(t.cpu_threads()), 1, "host thread locations")
            # construct order on the host thread
            order = [ev.region.canonical_name for _, ev in t.enters(location=t.cpu_threads()[0])
                     if ev.region.canonical_name in h.WRAPPERS]
            c.equal(order, ["target", "target enter data", "target update", "target",
                            "target update", "target exit data", "target enter data",
                            "target exit data"], "order of target constructs")
            for loc, ev in t.enters():
                if ev.region.canonical_name in h.WRAPPERS:
                    c.equal(h.Trace.attr(ev, "device"), 0, "device of %s"
                            % ev.region.canonical_name)
    finally:
        if c.failures:
            r.show()
        r.cleanup()
    c.finish(t)


if __name__ == "__main__":
    main()
