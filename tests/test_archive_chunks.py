#!/usr/bin/python3
"""A short run's archive is written with OTF2's smallest chunks, and the
chunk size never changes what the archive holds (issue 19).

OTF2 fills the rest of every writer's chunk when it closes the writer, so
with 4 MiB chunks a short run's end-of-run write was mostly memset and page
faults. A journal of at most TR_WRITER_SMALL_RECORDS (8192) records is now
written with 256 KiB chunks, under a budget of 15 chunks per file (OTF2
3.0.2 double-frees its 4 MiB file buffer when a write that fills it fails);
a file that outgrows it makes the writer write the archive again with 4 MiB
chunks. Checked here, with tests/unit/convert_sized (tr_writer_convert_sized:
small chunks forced, never, or as at the end of a run):

- a short run (many_events, 2 threads): the archive written at exit has
  256 KiB event and definition chunks; converted from its journal with
  4 MiB chunks and with small chunks forced, it prints (otf2-print) the same;
- a long run (1 thread, 300,000 iterations: one event file of about 9 MB):
  the archive at exit has 4 MiB chunks; with small chunks forced, the first
  try outgrows the budget and the archive is written again: complete, 4 MiB
  chunks, the same otf2-print output as at exit, and no stage directory or
  partial file left behind;
- the choice at exit follows the record count on both sides of the limit;
- every archive at exit holds exactly the Enter and Leave events the
  program says it made.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

SMALL, LARGE = 256 * 1024, 4 * 1024 * 1024
LIMIT = 8192  # TR_WRITER_SMALL_RECORDS


def chunk_sizes(c, anchor):
    p = subprocess.run([h.otf2_print_cmd(), "--show-info", anchor], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    text = p.stdout.decode(errors="replace")
    ev = re.search(r"Chunk size events\s+(\d+)", text)
    de = re.search(r"Chunk size definitions\s+(\d+)", text)
    c.check(ev and de, "%s: otf2-print --show-info gave no chunk sizes: %s" % (anchor, text[-300:]))
    return (int(ev.group(1)) if ev else None, int(de.group(1)) if de else None)


def printed(c, anchor):
    p = subprocess.run([h.otf2_print_cmd(), anchor], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=600)
    c.check(p.returncode == 0, "%s: otf2-print exit %d: %s" % (anchor, p.returncode,
                                                             p.stderr.decode(errors="replace")[-300:]))
    return p.stdout


def traced_run(c, tmp, name, threads, iterations):
    """The run's directory and the Enter + Leave events the program says it made."""
    out = os.path.join(tmp, name)
    r = h.run([h.env_path("TEST_MANY_EVENTS_BIN"), str(threads), str(iterations)], tmp, traced=True,
              output=out, extra_env={"TRACER_KEEP_JOURNAL": "1"}, timeout=600)
    c.equal(r.returncode, 0, "%s: exit code (stderr: %s)" % (name, r.stderr.decode(errors="replace")[-500:]))
    c.check(b"tracer:" not in r.stderr, "%s: tracer complained: %s" % (name, r.stderr.decode(errors="replace")))
    m = re.search(rb"events (\d+) failed 0", r.stdout)
    c.check(m, "%s: many_events said %r" % (name, r.stdout[-200:]))
    return out, int(m.group(1)) if m else -1


def check_events(c, what, text, want):
    """Ground truth: every Enter and Leave the program made is in the
    archive (otf2-print output), none more."""
    got = sum(1 for line in text.splitlines() if line.startswith((b"ENTER ", b"LEAVE ")))
    c.equal(got, want, "%s: Enter + Leave events in the archive (many_events made %d)" % (what, want))


def convert(c, tmp, journal, name, mode):
    """(archive anchor, records) of convert_sized JOURNAL DIR MODE."""
    d = os.path.join(tmp, name)
    os.mkdir(d)
    p = subprocess.run([h.env_path("TEST_CONVERT_SIZED"), journal, d, mode], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    text = p.stdout.decode(errors="replace")
    c.check(p.returncode == 0 and "warning" not in text,
            "%s: convert_sized %s: exit %d: %s %s" % (name, mode, p.returncode, text,
                                                      p.stderr.decode(errors="replace")[-300:]))
    c.check(p.stderr == b"", "%s: convert_sized printed on stderr: %s" % (name, p.stderr.decode(errors="replace")))
    c.equal(sorted(os.listdir(d)), ["traces", "traces.def", "traces.otf2"], "%s: what the directory holds" % name)
    m = re.search(r"records (\d+)", text)
    return os.path.join(d, "traces.otf2"), int(m.group(1)) if m else -1


def main():
    c = h.Checker("archive_chunks")
    if not h.otf2_print_cmd():
        print("SKIP: otf2-print not found")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        # A short run, and the same journal both ways.
        short, made = traced_run(c, tmp, "short", 2, 300)
        anchor = os.path.join(short, "traces.otf2")
        journal = os.path.join(short, "tracer.journal")
        if not c.check(os.path.exists(anchor) and os.path.exists(journal), "short run: no archive or journal"):
            c.finish()
        c.equal(chunk_sizes(c, anchor), (SMALL, SMALL), "short run: chunk sizes (events, definitions) at exit")
        at_exit = printed(c, anchor)
        check_events(c, "short run at exit", at_exit, made)
        large, records = convert(c, tmp, journal, "short-large", "large")
        c.check(0 < records <= LIMIT, "short run: %d records, want 1..%d" % (records, LIMIT))
        c.equal(chunk_sizes(c, large), (LARGE, LARGE), "short run converted with 4 MiB chunks: chunk sizes")
        c.check(printed(c, large) == at_exit, "short run: the archive with 4 MiB chunks prints differently")
        auto, _ = convert(c, tmp, journal, "short-auto", "auto")
        c.equal(chunk_sizes(c, auto), (SMALL, SMALL), "short run converted as at exit: chunk sizes")
        c.check(printed(c, auto) == at_exit, "short run: converted as at exit, it prints differently")

        # Just over the limit: 4 MiB chunks at exit.
        over, made = traced_run(c, tmp, "over", 1, 3400)
        _, records = convert(c, tmp, os.path.join(over, "tracer.journal"), "over-large", "large")
        c.check(records > LIMIT, "run 'over': %d records, want more than %d" % (records, LIMIT))
        c.equal(chunk_sizes(c, os.path.join(over, "traces.otf2")), (LARGE, LARGE),
                "run over the limit (%d records): chunk sizes at exit" % records)
        check_events(c, "run over the limit", printed(c, os.path.join(over, "traces.otf2")), made)

        # A long run whose one event file outgrows the small chunks' budget.
        long, made = traced_run(c, tmp, "long", 1, 300000)
        anchor = os.path.join(long, "traces.otf2")
        evt = os.path.join(long, "traces", "0.evt")
        c.check(os.path.exists(evt) and os.path.getsize(evt) > 15 * SMALL,
                "long run: its event file should outgrow 15 chunks of 256 KiB (%s)" %
                (os.path.getsize(evt) if os.path.exists(evt) else "absent"))
        c.equal(chunk_sizes(c, anchor), (LARGE, LARGE), "long run: chunk sizes at exit")
        at_exit = printed(c, anchor)
        check_events(c, "long run at exit", at_exit, made)
        forced, _ = convert(c, tmp, os.path.join(long, "tracer.journal"), "long-small", "small")
        c.equal(chunk_sizes(c, forced), (LARGE, LARGE),
                "long run with small chunks forced: written again with 4 MiB chunks")
        c.check(printed(c, forced) == at_exit, "long run: the archive written again prints differently")
    c.finish()


if __name__ == "__main__":
    main()
