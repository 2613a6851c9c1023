#!/usr/bin/python3
"""programs/loop.c: K=50 target regions with map(tofrom: x[0:M]), M=512
doubles -> exactly K targets, K kernels, K allocs/deletes and K transfers
each way of M*8 bytes, all on device 0."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

K, M = 50, 512
B = M * 8
WANT_STDOUT = "loop: K=50 M=512 sum=156416 x[0]=50\n"


def main():
    c = h.Checker("loop")
    r = h.OffloadRun("loop")
    t = None
    try:
        t = h.check_run_basics(c, r, 0, WANT_STDOUT)
        if t is not None:
            h.check_structure(c, t, 0)
            h.check_counts(c, t, {"target": K, "alloc": K, "transfer to device": K,
                                  "transfer from device": K, "delete": K, "kernel": K})
            c.equal(h.data_op_summary(t), {
                ("alloc", 0): [B] * K, ("transfer to device", 0): [B] * K,
                ("transfer from device", 0): [B] * K, ("delete", 0): [B] * K},
                "data ops (kind, device) -> bytes")
            c.equal(h.transfer_summary(t), {("to device", 0): [B] * K,
                                            ("from device", 0): [B] * K},
                    "RmaPut/RmaGet (kind, device) -> bytes")
            h.check_memory(c, t, single_thread=True)
            lines = h.kernel_lines(r.src)
            h.check_kernels(c, t, {0: K}, [lines["loop"]] * K)
            c.equal(len(t.regions_by_canonical("kernel")), 1, "kernel region definitions")
            # every target contains exactly: alloc, to, from, delete (kernel on the stream)
            host = t.cpu_threads()[0] if t.cpu_threads() else None
            if host is not None:
                seq = [ev.region.canonical_name for _, ev in t.enters(location=host)]
                c.equal(seq, ["target", "alloc", "transfer to device", "transfer from device",
                              "delete"] * K, "host Enter sequence")
                # each kernel lies inside its target region in time
                targets = {h.Trace.attr(e, "target_id"): (e.time, l.time)
                           for _, e, l in t.intervals("target", host)}
                for _, e, l in t.intervals("kernel"):
                    span = targets.get(h.Trace.attr(e, "target_id"))
                    if c.check(span is not None, "kernel without target"):
                        c.check(span[0] <= e.time and l.time <= span[1],
                                "kernel [%d,%d] outside its target [%d,%d]"
                                % (e.time, l.time, span[0], span[1]))
    finally:
        if c.failures:
            r.show()
        r.cleanup()
    c.finish(t)


if __name__ == "__main__":
    main()
