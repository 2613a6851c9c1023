#!/usr/bin/python3
"""Issue 20: nothing committed is lost, however the process dies.

programs/killed_regions.c runs target regions and writes the line
"region i" (one write(2), unbuffered) once region i is complete. The test
reads those lines as they come and kills the process after line K, for 20
values of K from a seeded schedule (not wall-clock luck): by SIGKILL, which
no handler sees. The records still in the process's chunks are then only in
its in-flight file in /dev/shm. After `tracer recover`, every region whose
line was written must be in the archive, in order, named by its transfer
sizes (region i maps (i % 5) + 1 ints), and nothing more than the one
region that may have been running: nothing lost, nothing invented. Also a
SIGTERM (the handler saves every chunk and removes the file), _exit right
after the last region, the raw exit_group system call (only the file has
the last chunk), a damaged chunk in the journal that neither source can
give back (recover names the gap; the archive marks it measurement off),
and a normal end (no file left in /dev/shm).

The same file made `tracer recover` report per thread what came from the
journal and what from the in-flight file."""
import glob
import os
import struct
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import journal_frames as jf  # noqa: E402
import otf2  # noqa: E402

SEED = 20
MOMENTS = sorted(random.Random(SEED).sample(range(1, 6000), 20))
FOREVER = 10 ** 8


# In-flight files that were in /dev/shm before the process of their pid
# started: left by an earlier process of the same pid (another test's run
# killed and never recovered), not by this one.
EARLIER = {}


def inflight_files(pid):
    return sorted(set(glob.glob("/dev/shm/tracer-%d-*" % pid)) - EARLIER.get(pid, set()))


def start(tmp, out, args, extra_env=None):
    err = open(os.path.join(tmp, os.path.basename(out) + ".stderr"), "wb")
    earlier = set(glob.glob("/dev/shm/tracer-*"))
    p = subprocess.Popen(args, cwd=tmp, env=h.run_env(True, out, extra_env), stdout=subprocess.PIPE, stderr=err)
    EARLIER[p.pid] = {f for f in earlier if f.startswith("/dev/shm/tracer-%d-" % p.pid)}
    err.close()
    guard = threading.Timer(300, lambda: p.kill())
    guard.start()
    return p, guard


def run_until(tmp, out, k, sig, extra_env=None):
    """Lines read, the exit status, the in-flight files left at death."""
    p, guard = start(tmp, out, [h.env_path("TEST_KILLED_BIN"), str(FOREVER)], extra_env)
    lines = []
    try:
        for raw in p.stdout:
            lines.append(raw.decode(errors="replace").rstrip("\n"))
            if len(lines) == k:
                os.kill(p.pid, sig)
                break
        lines += [ln.rstrip("\n") for ln in p.stdout.read().decode(errors="replace").splitlines(True)]
        rc = p.wait()
    finally:
        guard.cancel()
    return lines, rc, inflight_files(p.pid), p.pid


def regions_written(c, what, lines):
    """How many complete regions the lines prove: "region 0" .. "region L-1"."""
    want = ["region %d" % i for i in range(len(lines))]
    # the last line may be cut by the kill; a complete line is a complete region
    if lines and lines != want and lines[:-1] == want[:-1] and want[-1].startswith(lines[-1]):
        lines = lines[:-1]
    c.check(lines == want[:len(lines)], "%s: the program's own lines are not region 0..L-1: %r"
            % (what, [ln for ln, w in zip(lines, want) if ln != w][:3]))
    return len(lines)


def recover(c, what, out):
    r = subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=h.base_env(), timeout=300)
    c.equal(r.returncode, 0, "%s: tracer recover exit code (stderr %r)" % (what, r.stderr.decode()))
    c.equal([ln for ln in r.stderr.decode().splitlines() if ln.startswith("tracer:")], [],
            "%s: tracer recover's complaints" % what)
    return r.stdout.decode(errors="replace")


def check_archive(c, what, out, written):
    """Every written region is in the archive, in order; at most the one
    that was running besides (its end may have come before its line)."""
    t = h.open_checked_trace(c, what, os.path.join(out, "traces.otf2"))
    if t is None:
        return
    targets = len(t.enters("target"))
    sizes = [h.Trace.attr(ev, "bytes") for _, ev in sorted(t.enters("transfer to device"), key=lambda e: e[1].time)]
    c.check(written <= targets <= written + 1, "%s: %d target regions in the archive for %d written "
            "(want %d, or one more that was running)" % (what, targets, written, written))
    # each region maps its ints to the device once (tofrom: one transfer to)
    want = [4 * (i % 5 + 1) for i in range(len(sizes))]
    c.check(written <= len(sizes) <= written + 1 and sizes == want,
            "%s: transfers to the device are not exactly those of regions 0..%d: %d transfers, the "
            "first wrong at %r" % (what, written - 1, len(sizes),
                                   next((i for i, (a, b) in enumerate(zip(sizes, want)) if a != b), None)))


def pool_seqs(path, location):
    """The chunk seqs of @location that the in-flight file's pool still
    holds (core/inflight.h, struct tr_chunk in core/buf.h)."""
    with open(path, "rb") as f:
        data = f.read()
    header_bytes, chunk_bytes = struct.unpack_from("<II", data, 12)
    handed_out = struct.unpack_from("<Q", data, 48)[0]
    seqs = set()
    for i in range(handed_out):
        at = header_bytes + i * chunk_bytes
        if at + 52 > len(data):
            break
        seq, count = struct.unpack_from("<QI", data, at + 16)
        if count and struct.unpack_from("<I", data, at + 48)[0] == location:
            seqs.add(seq)
    return seqs


def check_named(c, what, out):
    """Every target region and kernel named, as in a normal run, however
    many the journal's thread named before the death (issue 35, item 6)."""
    t = h.open_checked_trace(c, what, os.path.join(out, "traces.otf2"))
    if t is None:
        return
    names = {ev.region.name for canonical in ("target", "kernel") for _, ev in t.enters(canonical)}
    c.check(names and all(re.fullmatch(r"(target|kernel main) \(killed_regions\.c:\d+\)", n) for n in names),
            "%s: target regions and kernels not named after their construct: %r" % (what, sorted(names)))


def per_thread(text):
    """[(journal records, in-flight records)] from recover's report."""
    return [(int(a), int(b)) for a, b in re.findall(
        r"thread \d+ \(tid \d+\): (\d+) records from the journal, (\d+) from the in-flight file", text)]


def main():
    c = h.Checker("killed")
    tmp = tempfile.mkdtemp(prefix="tracer-test-killed-")
    try:
        both = 0
        for n, k in enumerate(MOMENTS):
            # Every other run keeps partly filled chunks out of the journal,
            # so their records can only come from the in-flight file. With
            # the default 1 s flush they may all be in the journal already:
            # the program blocks writing its lines when the test reads
            # slowly (a loaded machine, TSan), and the flush catches up.
            held = n % 2 == 1
            what = "SIGKILL after line %d%s" % (k, ", flushing hourly" if held else "")
            out = os.path.join(tmp, "kill%d" % n)
            lines, rc, files, pid = run_until(tmp, out, k, signal.SIGKILL,
                                              {"TRACER_FLUSH_INTERVAL": "1h"} if held else None)
            c.equal(rc, -signal.SIGKILL, "%s: exit status" % what)
            written = regions_written(c, what, lines)
            c.check(written >= k, "%s: only %d lines" % (what, written))
            c.equal(len(files), 1, "%s: in-flight files of pid %d left in /dev/shm" % (what, pid))
            text = recover(c, what, out)
            c.check(re.search(r"in-flight file /dev/shm/tracer-%d-\w+: \d+ records" % pid, text),
                    "%s: recover does not say what it took from the in-flight file: %r" % (what, text))
            counts = per_thread(text)
            c.check(len(counts) >= 1 and (sum(b for _, b in counts) > 0 or not held),
                    "%s: no records came from the in-flight file: %r" % (what, text))
            both += any(a > 0 and b > 0 for a, b in counts)
            c.equal(inflight_files(pid), [], "%s: in-flight file left after recover" % what)
            check_archive(c, what, out, written)
            shutil.rmtree(out, ignore_errors=True)
        c.check(both > 0, "no SIGKILL run had records both in the journal and in the in-flight file")

        # a gap: a chunk of the journal damaged in the middle, of a run whose
        # 4-chunk pool reused that chunk before the kill, so neither source
        # has it: recover names the gap, the archive marks it measurement
        # off, and what is on either side is still there. Which chunks the
        # pool still holds depends on timing (a chunk freed while the
        # consumer lagged may never be taken again), so the victim is one
        # the in-flight file does not hold.
        what = "SIGKILL, a damaged chunk in the journal"
        out = os.path.join(tmp, "gap")
        lines, rc, files, pid = run_until(tmp, out, 3000, signal.SIGKILL, {"TRACER_MAX_MEMORY": "256k"})
        written = regions_written(c, what, lines)
        jpath = os.path.join(out, "tracer.journal")
        with open(jpath, "rb") as f:
            data = bytearray(f.read())
        chunks = [fr for fr in jf.parse(bytes(data), cut_ok=True) if fr.type == jf.CHUNK and fr.location == 0]
        c.equal(len(files), 1, "%s: in-flight files of pid %d left in /dev/shm" % (what, pid))
        pooled = pool_seqs(files[0], 0) if len(files) == 1 else set()
        c.check(len(pooled) >= 1, "%s: the in-flight file holds no chunk of thread 0" % what)
        seqs = sorted({fr.seq for fr in chunks} - pooled)
        victim = seqs[len(seqs) // 2] if len(seqs) > 4 else None
        if c.check(victim is not None, "%s: only %d chunks in the journal" % (what, len(seqs))):
            for fr in chunks:
                if fr.seq == victim:
                    data[fr.offset + 64 + 10] ^= 0xff
            with open(jpath, "wb") as f:
                f.write(data)
            r = subprocess.run([h.env_path("TEST_TRACER_CLI"), "recover", out], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=h.base_env(), timeout=300)
            text = r.stdout.decode(errors="replace")
            c.equal(r.returncode, 0, "%s: tracer recover exit code" % what)
            c.check(re.search(r"thread 0 \(tid %d\): \d+ records from the journal, \d+ from the in-flight "
                              r"file; 1 chunk\(s\) missing in 1 gap\(s\), the first at chunk %d, marked "
                              r"measurement off" % (pid, victim), text),
                    "%s: recover does not name the gap at chunk %d: %r" % (what, victim, text))
            t = h.open_checked_trace(c, what, os.path.join(out, "traces.otf2"))
            if t is not None:
                offs = [ev for _, ev in t.events_of(otf2.events.MeasurementOnOff)]
                c.equal(len(offs), 2, "%s: measurement off/on events" % what)
                targets = len(t.enters("target"))
                c.check(written - 200 < targets < written,
                        "%s: %d target regions for %d written, one chunk (~85 regions) missing" %
                        (what, targets, written))

        # SIGTERM: tracer's handler saves every chunk into the journal; the
        # in-flight file is gone with the process
        what = "SIGTERM after line 700"
        out = os.path.join(tmp, "term")
        lines, rc, files, pid = run_until(tmp, out, 700, signal.SIGTERM)
        c.equal(rc, -signal.SIGTERM, "%s: exit status" % what)
        written = regions_written(c, what, lines)
        c.equal(files, [], "%s: in-flight files left" % what)
        text = recover(c, what, out)
        # the archive's line, and no in-flight file's: the run saved every
        # chunk itself; recover may also name the code addresses of the
        # chunks the handler saved before the journal's thread named them
        # (issue 35, item 6), a line that depends on that thread's timing
        report = [ln for ln in text.splitlines()
                  if not re.fullmatch(r"  named .+ from the program's files \(the run died before naming "
                                      r"them\)", ln)]
        c.equal(len(report), 1, "%s: recover's report (the archive's line only: the run saved every "
                "chunk itself, its in-flight file is gone): %r" % (what, text))
        check_archive(c, what, out, written)
        check_named(c, what, out)

        # _exit right after the last region
        what = "_exit after 300 regions"
        out = os.path.join(tmp, "exit")
        p, guard = start(tmp, out, [h.env_path("TEST_KILLED_BIN"), "300", "exit"])
        lines = p.stdout.read().decode().splitlines()
        rc = p.wait()
        guard.cancel()
        c.equal(rc, 3, "%s: exit status" % what)
        c.equal(regions_written(c, what, lines), 300, "%s: lines" % what)
        c.equal(inflight_files(p.pid), [], "%s: in-flight files left" % what)
        recover(c, what, out)
        check_archive(c, what, out, 300)

        # the raw exit_group system call: no wrapper and no handler sees it,
        # so the last chunk is only in the in-flight file
        what = "exit_group after 400 regions"
        out = os.path.join(tmp, "exit_group")
        p, guard = start(tmp, out, [h.env_path("TEST_KILLED_BIN"), "400", "exit_group"])
        lines = p.stdout.read().decode().splitlines()
        rc = p.wait()
        guard.cancel()
        c.equal(rc, 3, "%s: exit status" % what)
        c.equal(regions_written(c, what, lines), 400, "%s: lines" % what)
        c.equal(len(inflight_files(p.pid)), 1, "%s: in-flight files left" % what)
        text = recover(c, what, out)
        c.check(sum(b for _, b in per_thread(text)) > 0,
                "%s: no records came from the in-flight file: %r" % (what, text))
        c.equal(inflight_files(p.pid), [], "%s: in-flight file left after recover" % what)
        check_archive(c, what, out, 400)

        # a normal end: the archive is written at exit, nothing left behind
        what = "normal end after 200 regions"
        out = os.path.join(tmp, "normal")
        p, guard = start(tmp, out, [h.env_path("TEST_KILLED_BIN"), "200"])
        lines = p.stdout.read().decode().splitlines()
        rc = p.wait()
        guard.cancel()
        c.equal(rc, 0, "%s: exit status" % what)
        c.equal(inflight_files(p.pid), [], "%s: in-flight files left" % what)
        check_archive(c, what, out, regions_written(c, what, lines))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
