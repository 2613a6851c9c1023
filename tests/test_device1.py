#!/usr/bin/python3
"""programs/device1.c: target device(1) then target device(0), each
map(tofrom: x[0:M]) with M=200 doubles -> one kernel on 'device 1 stream',
one on 'device 0 stream'; each device's data ops and RMA window carry its
own device number."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

B = 200 * 8
WANT_STDOUT = "device1: sum=43800\n"


def main():
    c = h.Checker("device1")
    r = h.OffloadRun("device1")
    t = None
    try:
        t = h.check_run_basics(c, r, 0, WANT_STDOUT)
        if t is not None:
            h.check_structure(c, t, 0)
            h.check_counts(c, t, {"target": 2, "alloc": 2, "transfer to device": 2,
                                  "transfer from device": 2, "delete": 2, "kernel": 2})
            c.equal(h.data_op_summary(t), {
                ("alloc", 0): [B], ("transfer to device", 0): [B],
                ("transfer from device", 0): [B], ("delete", 0): [B],
                ("alloc", 1): [B], ("transfer to device", 1): [B],
                ("transfer from device", 1): [B], ("delete", 1): [B]},
                "data ops (kind, device) -> bytes")
            c.equal(h.transfer_summary(t), {
                ("to device", 0): [B], ("from device", 0): [B],
                ("to device", 1): [B], ("from device", 1): [B]},
                "RmaPut/RmaGet (kind, device) -> bytes")
            h.check_memory(c, t, single_thread=True)
            lines = h.kernel_lines(r.src)
            h.check_kernels(c, t, {1: 1, 0: 1}, [lines["dev1"], lines["dev0"]])
            targets = [h.Trace.attr(ev, "device") for _, ev in t.enters("target")]
            c.equal(targets, [1, 0], "device attribute of the target regions, in order")
            streams = t.device_streams()
            if 1 in streams:
                kern = t.enters("kernel", streams[1])
                if kern:
                    c.equal(h.Trace.attr(kern[0][1], "device"), 1,
                            "device attribute of the kernel on device 1 stream")
                    if lines.get("dev1"):
                        c.check(h.kernel_name_re(lines["dev1"]).search(kern[0][1].region.name),
                                "KERNEL NAMING: kernel on device 1 is %r, want "
                                "kernel main (<file>:%d)"
                                % (kern[0][1].region.name, lines["dev1"]))
    finally:
        if c.failures:
            r.show()
        r.cleanup()
    c.finish(t)


if __name__ == "__main__":
    main()
