#!/usr/bin/python3
"""programs/exit_code.c: one target region (M=100 doubles tofrom), then main
returns 3 -> exit code 3 with and without the tracer, stdout unchanged, the
trace complete (ProgramEnd with exit status 3, nothing incomplete)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

B = 100 * 8
WANT_STDOUT = "exit_code: x[99]=198, returning 3\n"


def main():
    c = h.Checker("exit_code")
    r = h.OffloadRun("exit_code")
    t = None
    try:
        t = h.check_run_basics(c, r, 3, WANT_STDOUT)
        if t is not None:
            h.check_structure(c, t, 3)
            h.check_counts(c, t, {"target": 1, "alloc": 1, "transfer to device": 1,
                                  "transfer from device": 1, "delete": 1, "kernel": 1})
            c.equal(h.transfer_summary(t), {("to device", 0): [B], ("from device", 0): [B]},
                    "RmaPut/RmaGet (kind, device) -> bytes")
            h.check_memory(c, t, single_thread=True)
            lines = h.kernel_lines(r.src)
            h.check_kernels(c, t, {0: 1}, [lines["exit"]])
    finally:
        if c.failures:
            r.show()
        r.cleanup()
    c.finish(t)


if __name__ == "__main__":
    main()
