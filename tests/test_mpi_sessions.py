#!/usr/bin/python3
"""The MPI 4.0 session model under tracer: programs/mpi_sessions.c (no
MPI_Init, no MPI_COMM_WORLD) with the MPI_T provider TEST DOUBLE preloaded
after libtracer.so (Debian's MPICH raises no MPI_T events; see
tests/mpit_double/mpit_double.h).

Checked against the run without tracer and the double's log: exit status 6
and stdout unchanged, stderr empty; one archive of the process itself (no
job: the session model has no MPI_COMM_WORLD) with MPI_Session_init and
MPI_Session_finalize regions, complete, on host thread 0; exactly the MPI_T
events the double delivered to tracer (name, source tick, values), the
communicator-bound one with mpit_object = the handle of the communicator
made by MPI_Comm_create_from_group (which tracer binds); and MPI_T stopped
at the last MPI_Session_finalize (STATUS: 0 registrations live).
"""
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import cfgtest as ct  # noqa: E402
import harness as h  # noqa: E402


def run(tmp, label, traced):
    d = os.path.join(tmp, label)
    os.makedirs(d)
    env = {"MPIT_DOUBLE_LOG": os.path.join(d, "double.%p.log")}
    preload = [p for p in re.split(r"[:\s]+", os.environ.get("TEST_SANITIZER_PRELOAD", "")) if p]
    if traced:
        preload.append(h.env_path("TEST_TRACER_LIB"))
    preload.append(h.env_path("TEST_MPIT_DOUBLE_LIB"))
    env["LD_PRELOAD"] = ":".join(preload)
    out = os.path.join(d, "trace")
    r = h.run([h.env_path("TEST_BIN")], d, False, output=out if traced else None, extra_env=env, timeout=120)
    logs = [os.path.join(d, f) for f in os.listdir(d) if f.startswith("double.")]
    raises = []
    for path in logs:
        for line in open(path):
            kind, _, rest = line.partition(" ")
            if kind == "raise":
                raises.append(dict(kv.split("=", 1) for kv in rest.split()))
    return r, out, raises


def main():
    c = h.Checker("mpi_sessions")
    tmp = tempfile.mkdtemp(prefix="tracer-test-mpi-sessions-")
    try:
        plain, _, _ = run(tmp, "plain", False)
        r, out, raises = run(tmp, "traced", True)
        c.equal(plain.returncode, 6, "untraced: exit status")
        c.equal(r.returncode, 6, "traced: exit status (stderr %r)" % r.stderr[-300:])
        c.equal(r.stdout, plain.stdout, "traced: stdout")
        c.equal(r.stderr.decode(errors="replace"), "", "traced: stderr")
        m = re.search(rb"comm 0x([0-9a-f]+)", r.stdout)
        handle = int(m.group(1), 16) if m else None
        c.check(handle is not None, "the program printed no communicator handle: %r" % r.stdout)
        anchor = os.path.join(out, "traces.otf2")
        c.equal(sorted(os.listdir(os.path.dirname(out))), ["double.%s.log" % raises[0]["pid"] if raises else "?",
                                                           "trace"], "traced: what the run wrote")
        t = h.open_checked_trace(c, "traced", anchor)
        if t is None:
            c.finish()
            return
        groups = [g.name for g in t.definitions.location_groups]
        c.check(len(groups) == 1 and re.fullmatch(r"process \d+", groups[0]),
                "location groups %r: want the process's own (no job)" % groups)
        calls = [(loc.name, ev.region.name) for loc, ev in t.enters() if ev.region.name.startswith("MPI_")]
        c.equal(calls, [("host thread 0", "MPI_Session_init"), ("host thread 0", "MPI_Session_finalize")],
                "MPI regions")
        c.equal([ev for _, ev in t.leaves() if h.Trace.attr(ev, "incomplete")], [], "incomplete Leaves")
        want = sorted((x["name"], int(x["tick"])) for x in raises if int(x["delivered"]))
        got, bound = [], []
        for loc, ev in t.enters():
            if loc.name.startswith("MPI_T source "):
                got.append((ev.region.name, h.Trace.attr(ev, "mpit_source_tick")))
                if h.Trace.attr(ev, "mpit_object") is not None:
                    bound.append((ev.region.name, h.Trace.attr(ev, "mpit_object")))
        c.check(len(want) >= 3, "the double delivered %d events (want name_set, created, freed)" % len(want))
        c.equal(sorted(got), want, "MPI_T events (type, source tick) vs the double's deliveries")
        c.equal(bound, [("ompi.mpi.communicator_name_set", handle)],
                "the communicator-bound event and its communicator")
        status = ct.properties(c, anchor, "traced").get("TRACER::MPIT::STATUS", "")
        c.check(re.fullmatch(r"MPICH.*: MPI_T events: 2 sources, 8 event types, \d+ registrations made, 0 live",
                             status), "TRACER::MPIT::STATUS %r: MPI_T stops at the last session's end" % status)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
