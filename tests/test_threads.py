#!/usr/bin/python3
"""programs/threads.c: 2 OpenMP host threads each launch T=20 target regions
with map(tofrom: x[0:M]), M=128 doubles -> targets on 2 CPU_THREAD
locations, T per thread, 2T kernels on device 0's stream, totals exact."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

NT, T, M = 2, 20, 128
B = M * 8
WANT_STDOUT = "threads: thread 0 sum=2560\nthreads: thread 1 sum=5120\n"


def main():
    c = h.Checker("threads")
    r = h.OffloadRun("threads")
    t = None
    try:
        t = h.check_run_basics(c, r, 0, WANT_STDOUT)
        if t is not None:
            h.check_structure(c, t, 0)
            n = NT * T
            h.check_counts(c, t, {"target": n, "alloc": n, "transfer to device": n,
                                  "transfer from device": n, "delete": n, "kernel": n,
                                  # one team of NT: per thread its implicit task and
                                  # the single; the single's barrier and the join
                                  # barrier; fork and join on the master; the
                                  # worker idle before and after its implicit task
                                  "parallel": NT, "single": NT, "<OMP-implicit_barrier>": 2 * NT,
                                  "<OMP-overhead>": 2, "<OMP-idle>": 2 * (NT - 1)})
            c.equal(h.data_op_summary(t), {
                ("alloc", 0): [B] * n, ("transfer to device", 0): [B] * n,
                ("transfer from device", 0): [B] * n, ("delete", 0): [B] * n},
                "data ops (kind, device) -> bytes")
            c.equal(h.transfer_summary(t), {("to device", 0): [B] * n,
                                            ("from device", 0): [B] * n},
                    "RmaPut/RmaGet (kind, device) -> bytes")
            h.check_memory(c, t, single_thread=False)
            lines = h.kernel_lines(r.src)
            h.check_kernels(c, t, {0: n}, [lines["threads"]] * n)
            per_thread = [len(t.enters("target", loc)) for loc in t.cpu_threads()]
            with_targets = [x for x in per_thread if x]
            c.check(len(with_targets) >= NT, "targets on %d CPU_THREAD locations, want >= %d "
                    "(per location: %r)" % (len(with_targets), NT, per_thread))
            c.equal(sorted(with_targets), [T] * NT, "targets per host thread")
            for loc in t.cpu_threads():
                cnt = t.count_enters(loc)
                if cnt.get("target"):
                    for op in ("alloc", "transfer to device", "transfer from device", "delete"):
                        c.equal(cnt.get(op, 0), cnt["target"],
                                "%s on %s vs its targets" % (op, loc.name))
            # host OpenMP states (user mode, the default): each thread's
            # targets lie inside its implicit task of the one parallel
            # region, which both threads entered, once
            for loc in t.cpu_threads():
                stack, inside, outside, pars = [], 0, 0, 0
                for ev in t.events[loc]:
                    if isinstance(ev, h.otf2.events.Enter):
                        cn = ev.region.canonical_name
                        if cn == "target":
                            if "parallel" in stack:
                                inside += 1
                            else:
                                outside += 1
                        pars += cn == "parallel"
                        stack.append(cn)
                    elif isinstance(ev, h.otf2.events.Leave) and stack:
                        stack.pop()
                if inside + outside:
                    c.equal((inside, outside, pars), (T, 0, 1),
                            "%s: (targets inside a parallel region, outside, parallel regions)"
                            % loc.name)
            # transfers are RmaPut/RmaGet on the issuing thread
            for tr in t.transfers():
                c.check(tr.location.type == h.LocationType.CPU_THREAD,
                        "transfer recorded on %s" % tr.location.name)
    finally:
        if c.failures:
            r.show()
        r.cleanup()
    c.finish(t)


if __name__ == "__main__":
    main()
