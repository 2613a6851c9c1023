#!/usr/bin/python3
"""The two journal decoders agree on a real journal.

tests/lib/journal_frames.py is a second, independent decoder of the journal
format (src/journal/journal_format.h), written in Python for the tests that
build or splice journals. This test keeps it honest against the C reader
(src/journal/journal_read.c, through tests/unit/journal_dump.c): on the
journal of a real run (user_api: two threads, TRACER_KEEP_JOURNAL=1), and on
that journal cut inside each CHUNK frame, both must see the same frames in
the same order (type, location, seq, records, tid, and the sums of the
decompressed records' times and first values), the same totals, and the
same records per thread (the largest copy of each chunk) as tr_journal_load's
streams."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import journal_frames as jf  # noqa: E402

M64 = (1 << 64) - 1


def python_view(data):
    """journal_dump's output, computed by journal_frames.py."""
    frames = jf.parse(data, cut_ok=True)
    lines = []
    largest = {}
    chunks = records = 0
    for f in frames:
        st = su = 0
        if f.type == jf.CHUNK:
            recs = jf.chunk_records(f)
            st = sum(r[0] for r in recs) & M64
            su = sum(r[8] for r in recs) & M64
            chunks += 1
            records += f.records
            key = (f.location, f.seq)
            largest[key] = max(largest.get(key, 0), f.records)
        lines.append("frame %d %d %d %d %d %d %d" % (f.type, f.location, f.seq, f.records, f.tid, st, su))
    end = frames[-1].end if frames else 0
    skipped = len(data) - end
    lines.append("stats %d %d %d %d 0 %d" % (len(frames), chunks, records, skipped, int(skipped > 0)))
    per_loc = {}
    for (loc, _), n in largest.items():
        per_loc[loc] = per_loc.get(loc, 0) + n
    lines += ["stream %d %d" % (loc, n) for loc, n in sorted(per_loc.items()) if n]
    return lines


def c_view(dump, path):
    p = subprocess.run([dump, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout.decode().splitlines(), p.stderr.decode(errors="replace")


def compare(c, what, dump, path, data):
    rc, got, err = c_view(dump, path)
    if not c.check(rc == 0, "%s: journal_dump exit %d: %s" % (what, rc, err.strip()[-500:])):
        return
    want = python_view(data)
    streams = sorted(line for line in got if line.startswith("stream "))
    got = [line for line in got if not line.startswith("stream ")] + streams
    if got != want:
        diff = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w][:5]
        c.check(False, "%s: C reader and journal_frames.py differ (%d lines vs %d): %r" %
                (what, len(got), len(want), diff))


def main():
    c = h.Checker("journal_decoders")
    dump = h.env_path("TEST_JOURNAL_DUMP")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        r = h.run([h.env_path("TEST_BIN")], tmp, traced=True, output=out,
                  extra_env={"TRACER_KEEP_JOURNAL": "1"})
        c.equal(r.returncode, 0, "user_api exit code (stderr: %s)" % r.stderr.decode(errors="replace")[-500:])
        journal = os.path.join(out, "tracer.journal")
        if not c.check(os.path.exists(journal), "no journal kept in %s" % out):
            c.finish()
        data = open(journal, "rb").read()
        frames = jf.parse(data)
        chunks = [f for f in frames if f.type == jf.CHUNK]
        c.check(len({f.location for f in chunks}) >= 2 and any(f.flags == jf.FLAG_ZSTD_DELTA for f in chunks),
                "the journal should hold chunks of 2 threads or more, some delta-coded and compressed: %r" %
                [(f.location, f.records, f.flags) for f in chunks])
        compare(c, "intact journal", dump, journal, data)
        for f in chunks:
            cut = data[:(f.offset + 64 + f.end) // 2]
            path = os.path.join(tmp, "cut.journal")
            with open(path, "wb") as fp:
                fp.write(cut)
            compare(c, "journal cut inside the chunk at %d" % f.offset, dump, path, cut)
        c.note("%d frames, %d chunks, %d cuts compared" % (len(frames), len(chunks), len(chunks)))
    c.finish()


if __name__ == "__main__":
    main()
