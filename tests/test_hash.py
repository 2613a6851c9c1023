#!/usr/bin/python3
"""TRACER_HASH: the content hash of each transfer (attribute content_hash)
is XXH3 of the host bytes it really moved, whichever way they went.

programs/hash_truth.c prints, per transfer in order, the XXH3 of the bytes
at the moment they are right (its header). A copy from the device is
hashed when its bytes have landed: the program changes `a` on the host
before `update from(a)`, so a hash taken at the copy's end callback on a
GPU, where the copy is still in flight, differs from the program's.

Runs TEST_BIN (host offload) and, when built, TEST_GPU_BIN (sm_80 on the
CUDA driver double, TEST_FAKECUDA_DIR):
  TRACER_HASH=1G     every transfer carries the program's hash
  TRACER_HASH=8      only the 8- and 4-byte transfers (values) do
  TRACER_HASH=0, and the default: none does
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
from otf2_trace import Trace  # noqa: E402

A = Trace.attr
KINDS = {"transfer to device": "to", "transfer from device": "from"}
WANT_KINDS = [("to", "a"), ("from", "a"), ("to", "s"), ("to", "i"), ("to", "b"), ("from", "b")]


def program_hashes(stdout):
    out = []
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == "hash":
            out.append((parts[1], int(parts[2]), int(parts[3])))
    return out


def transfers(t):
    got = []
    for loc in t.cpu_threads():
        for ev in t.events[loc]:
            if ev.__class__.__name__ == "Enter" and ev.region.canonical_name in KINDS:
                got.append((ev.time, KINDS[ev.region.canonical_name], A(ev, "bytes"), A(ev, "content_hash")))
    return [g[1:] for g in sorted(got)]


def check(c, what, binary, extra, limit):
    tmp = tempfile.mkdtemp(prefix="tracer-test-hash-")
    out = os.path.join(tmp, "trace")
    p = h.run([binary], tmp, traced=True, output=out, extra_env=extra)
    try:
        c.equal(p.returncode, 0, "%s: exit code" % what)
        truth = program_hashes(p.stdout.decode())
        c.equal([l for l, _, _ in truth], [l for _, l in WANT_KINDS], "%s: the program's lines" % what)
        t = h.open_checked_trace(c, what, os.path.join(out, "traces.otf2"))
        if t is None:
            return
        got = transfers(t)
        c.equal([(k, n) for k, n, _ in got], [(k, n) for (k, _), (_, n, _) in zip(WANT_KINDS, truth)],
                "%s: transfers (direction, bytes) in order" % what)
        for (k, label), (_, n, want), (_, _, hsh) in zip(WANT_KINDS, truth, got):
            expect = want if limit is None or n <= limit else None
            c.equal(hsh, expect, "%s: content_hash of %s %s (%d bytes)" % (what, k, label, n))
    finally:
        if c.failures:
            print("stdout:", p.stdout.decode(errors="replace"))
            print("stderr:", p.stderr.decode(errors="replace")[-3000:])
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    c = h.Checker("hash")
    runs = [("host offload", h.env_path("TEST_BIN"), {})]
    gpu = os.environ.get("TEST_GPU_BIN")
    if gpu:
        runs.append(("fakecuda", gpu, {"LD_LIBRARY_PATH": os.environ["TEST_FAKECUDA_DIR"] + ":" +
                                       os.environ.get("LD_LIBRARY_PATH", "")}))
    else:
        print("NOTE: no sm_80 build (%s): host offload only" % os.environ.get("TEST_CUDA_SKIP", "?"))
    for what, binary, env in runs:
        check(c, what + ", TRACER_HASH=1G", binary, dict(env, TRACER_HASH="1G"), None)
        check(c, what + ", TRACER_HASH=8", binary, dict(env, TRACER_HASH="8"), 8)
        check(c, what + ", TRACER_HASH=0", binary, dict(env, TRACER_HASH="0"), -1)
        check(c, what + ", default", binary, env, -1)
    c.finish(None)


if __name__ == "__main__":
    main()
