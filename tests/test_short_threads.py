#!/usr/bin/python3
"""Thousands of short threads (issue 34, item 4): a thread costs what its
events cost, in the write at exit and in the readers.

programs/short_threads.c runs N = 2000 pthreads, at most L = 4 alive at once
(waves of 4, each joined before the next), each recording K = 10 marks
(value t*1000000 + i) and ending. The write used to give every thread its
own location: 2001 event files, a 4 MiB chunk each while writing (4 GB at
1000 threads) and again in `tracer summary` and `tracer convert`, which open
every location at once. Checks:
- the traced run: exit code 0, its own output, no `tracer:` line;
- the archive (otf2-print and the Python reader read it): exactly N*K marks,
  every thread's K marks in order and together on one location (a thread's
  span), every thread there once, its first mark carrying its OS tid
  (attribute `thread`, distinct within a wave); L + 1 CPU_THREAD locations (a wave's
  threads, alive together, and the first thread to record, which keeps
  location 0 for ProgramBegin/End; the main thread records nothing):
  locations of ended threads are reused;
- `tracer summary` counts N*K marks, `tracer convert` writes N*K instants;
- peak RSS (wait4): the traced run at most the untraced one (TRACER_ENABLE=0)
  + 128 MiB, `tracer summary` and `tracer convert` at most 128 MiB each (they
  took 8 GB here before). Not under a sanitizer (shadow memory), where the
  counts are still checked.
Then N = L = 400 threads alive together (400 locations, 256 KiB chunks: a
reader that opens every location needs 100 MiB), the readers under an
address-space limit of 48 MiB (RLIMIT_AS; not under a sanitizer):
`tracer summary` reads its locations a group at a time and counts the 4000
marks; `tracer convert` reads them in runs of 64 (it failed there, blaming
the local definitions of some location, and then saying "out of memory",
when it opened every location at once for one global time order) and
writes every thread's 10 marks, in order, on a track of their own.
The run times are printed (traced and untraced), not checked."""
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import otf2  # noqa: E402

SANITIZED = bool(os.environ.get("TEST_SANITIZER_PRELOAD", "").strip())
N, LIVE, K = 2000, 4, 10
BASE = 1000000
RUN_SLACK_MB = 128
READER_MB = 128
MARK = "short mark"
WIDE = 400           # threads alive at once in the second run
LIMIT_MB = 48        # RLIMIT_AS of the readers there


def peak_run(tmp, name, cmd, env, limit_mb=None):
    """(exit code, peak RSS in KiB, seconds, stdout, stderr) of @cmd, its
    address space limited to @limit_mb MiB when given."""
    paths = [os.path.join(tmp, name + ext) for ext in (".out", ".err")]
    t0 = time.monotonic()

    def limit():
        n = limit_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (n, n))
    with open(paths[0], "wb") as out, open(paths[1], "wb") as err:
        p = subprocess.Popen(cmd, cwd=tmp, env=env, stdout=out, stderr=err,
                             preexec_fn=limit if limit_mb else None)
        _, status, usage = os.wait4(p.pid, 0)
    seconds = time.monotonic() - t0
    texts = [open(x, errors="replace").read() for x in paths]
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss, seconds, texts[0], texts[1]


def check_marks(c, t):
    """Every thread's marks in order, together, once; returns the number
    of CPU_THREAD locations."""
    spans = {}
    tids = []  # (thread, at its first mark, the OS tid) of each Enter with a `thread` attribute
    total = 0
    locs = t.cpu_threads()
    for loc in locs:
        run = []  # the marks of the thread whose span is open on this location
        for ev in t.events[loc]:
            if not isinstance(ev, otf2.events.Enter) or ev.region.canonical_name != MARK:
                continue
            v = h.Trace.attr(ev, "value")
            total += 1
            if run and v // BASE != run[0] // BASE:
                spans.setdefault(run[0] // BASE, []).append((loc.name, run))
                run = []
            if h.Trace.attr(ev, "thread") is not None:
                tids.append((v // BASE, not run, h.Trace.attr(ev, "thread")))
            run.append(v)
        if run:
            spans.setdefault(run[0] // BASE, []).append((loc.name, run))
    c.equal(total, N * K, "marks in the archive")
    c.equal(sorted(spans), list(range(N)), "threads with marks")
    bad = [(th, s) for th, s in spans.items()
           if len(s) != 1 or s[0][1] != [th * BASE + i for i in range(K)]]
    c.check(not bad, "threads whose marks are not in order, together, once: %d (first: %r)"
            % (len(bad), bad[:1]))
    # each thread's span begins with its OS tid, and only there
    c.check(sorted(th for th, _, _ in tids) == list(range(N)),
            "threads whose first mark carries `thread`: %d of %d, want each once" % (len(tids), N))
    c.check(all(first and tid > 0 for _, first, tid in tids), "`thread` only on a thread's first mark, > 0")
    waves = {}
    for th, _, tid in tids:
        waves.setdefault(th // LIVE, []).append(tid)
    c.check(all(len(set(w)) == len(w) for w in waves.values()), "threads alive together have distinct tids")
    return len(locs)


def limited_readers(c, tmp, prog, cli):
    out = os.path.join(tmp, "wide")
    rc, _, _, so, _ = peak_run(tmp, "wide", [prog, str(WIDE), str(WIDE), str(K)], h.run_env(True, output=out))
    c.equal((rc, so), (0, "short_threads: %d threads, %d marks each, refused 0\n" % (WIDE, K)),
            "wide run (exit code, stdout)")
    rc, _, _, text, err = peak_run(tmp, "wide-summary", [cli, "summary", out], h.base_env(), LIMIT_MB)
    c.equal(rc, 0, "tracer summary within %d MiB: exit code (%s)" % (LIMIT_MB, err.strip()))
    m = re.search(r"^\s*(\d+)\s+\S+\s+\S+\s+%s$" % MARK, text, re.M)
    c.equal(int(m.group(1)) if m else None, WIDE * K, "marks counted by tracer summary within %d MiB" % LIMIT_MB)
    c.check(re.search(r"1 process, %d host threads" % WIDE, text), "tracer summary: %d host threads" % WIDE)
    json_out = os.path.join(tmp, "w.json")
    rc, _, csec, text, err = peak_run(tmp, "wide-convert", [cli, "convert", out, "-o", json_out], h.base_env(),
                                      LIMIT_MB)
    if not c.equal((rc, err), (0, ""), "tracer convert within %d MiB: exit code, stderr" % LIMIT_MB):
        return
    m = re.search(r"(\d+) instants", text)
    c.equal(int(m.group(1)) if m else None, WIDE * K, "instants written by tracer convert within %d MiB" % LIMIT_MB)
    # each thread's marks on its own track, in order: the runs of
    # locations read in turns lose nothing and mix no two threads
    with open(json_out) as f:
        events = json.load(f)["traceEvents"]
    tracks = {}
    for ev in events:
        if ev.get("ph") == "i" and ev.get("name") == MARK:
            tracks.setdefault((ev["pid"], ev["tid"]), []).append(ev["args"]["value"])
    got = sorted(tracks.values())
    want = [[t * BASE + i for i in range(K)] for t in range(WIDE)]
    c.equal(len(got), WIDE, "tracks with marks in tracer convert's output")
    c.check(got == want, "tracer convert's tracks do not each hold one thread's %d marks in order: first "
            "difference %r" % (K, next(((g, w) for g, w in zip(got, want) if g != w), None)))
    print("convert of %d locations within %d MiB: %.2f s" % (WIDE + 1, LIMIT_MB, csec))


def main():
    c = h.Checker("short_threads")
    tmp = tempfile.mkdtemp(prefix="tracer-short-threads-")
    out = os.path.join(tmp, "out")
    prog = h.env_path("TEST_BIN")
    cli = h.env_path("TEST_TRACER_CLI")
    cmd = [prog, str(N), str(LIVE), str(K)]
    want = "short_threads: %d threads, %d marks each, refused 0\n" % (N, K)
    try:
        rc0, peak0, sec0, so0, _ = peak_run(tmp, "untraced", cmd, h.run_env(True, extra_env={"TRACER_ENABLE": "0"}))
        c.equal((rc0, so0), (0, want), "untraced run (exit code, stdout)")
        rc, peak, sec, so, se = peak_run(tmp, "traced", cmd, h.run_env(True, output=out))
        c.equal((rc, so), (0, want), "traced run (exit code, stdout)")
        for marker in h.SANITIZER_MARKERS:
            c.check(marker not in se, "traced run: sanitizer report: %r" % marker)
        c.equal([x for x in se.splitlines() if x.startswith("tracer:")], [], "tracer: lines of the traced run")
        print("run: untraced %.2f s, %d KiB; traced %.2f s, %d KiB (%d threads of %d marks)"
              % (sec0, peak0, sec, peak, N, K))
        anchor = os.path.join(out, "traces.otf2")
        if not c.check(os.path.isfile(anchor), "no archive"):
            return c.finish()
        files = sum(len(f) for _, _, f in os.walk(out))
        print("archive: %d files" % files)
        t = h.open_checked_trace(c, "archive", anchor)
        if t is not None:
            nlocs = check_marks(c, t)
            # the main thread records nothing; a wave's threads are alive
            # together; the first thread to record keeps location 0
            # (ProgramBegin/End), the others' are reused
            c.equal(nlocs, LIVE + 1, "CPU_THREAD locations (threads alive at once + the first)")

        rc, speak, ssec, text, err = peak_run(tmp, "summary", [cli, "summary", out], h.base_env())
        c.equal(rc, 0, "tracer summary exit code (%s)" % err.strip())
        m = re.search(r"^\s*(\d+)\s+\S+\s+\S+\s+%s$" % MARK, text, re.M)
        c.equal(int(m.group(1)) if m else None, N * K, "marks counted by tracer summary")
        json_out = os.path.join(tmp, "trace.json")
        rc, cpeak, csec, text, err = peak_run(tmp, "convert", [cli, "convert", out, "-o", json_out], h.base_env())
        c.equal(rc, 0, "tracer convert exit code (%s)" % err.strip())
        m = re.search(r"(\d+) instants", text)
        c.equal(int(m.group(1)) if m else None, N * K, "instants written by tracer convert (%s)" % text.strip())
        print("readers: summary %.2f s, %d KiB; convert %.2f s, %d KiB" % (ssec, speak, csec, cpeak))
        if SANITIZED:
            print("under a sanitizer: the memory bounds are not checked")
        else:
            c.check(peak <= peak0 + RUN_SLACK_MB * 1024, "traced run peak %d KiB > untraced %d KiB + %d MiB"
                    % (peak, peak0, RUN_SLACK_MB))
            c.check(speak <= READER_MB * 1024, "tracer summary peak %d KiB > %d MiB" % (speak, READER_MB))
            c.check(cpeak <= READER_MB * 1024, "tracer convert peak %d KiB > %d MiB" % (cpeak, READER_MB))
        if not SANITIZED:
            limited_readers(c, tmp, cmd[0], cli)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
