#!/usr/bin/python3
"""Issue 34, item 10: `tracer recover` reads only the chunks of the
in-flight file that the pool ever handed out.

programs/live_marks.c runs with TRACER_MAX_MEMORY=1T (a pool of 16M chunks
of 64 KiB: the in-flight file's size is 1 TiB + its 4 KiB header, checked
while the program runs) and a long TRACER_FLUSH_INTERVAL, makes N marks,
and is killed by SIGKILL: its last marks are only in the in-flight file.
`tracer recover` must give back exactly the marks 0..N-1 and spend well
under a second of CPU on it (before, it read 16M chunk headers: seconds).
The same with the default pool, as a yardstick (printed). Under
ThreadSanitizer, whose memory layout has no room for 1 TiB, the pool is
256 GiB."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402

N = 5000
CHUNK = 64 * 1024
SANITIZED = bool(os.environ.get("TEST_SANITIZER_PRELOAD", "").strip())
MAX_CPU_S = 1.0
# ThreadSanitizer's memory layout has no room for a 1 TiB mapping: 256 GiB
# (4M chunks; the unfixed recover spent about 4 s of CPU on those)
HUGE = ("256G", 256 << 30) if "tsan" in os.environ.get("TEST_SANITIZER_PRELOAD", "") else ("1T", 1 << 40)


def one(c, tmp, label, max_memory):
    what = "TRACER_MAX_MEMORY=%s" % label
    d = os.path.join(tmp, label)
    env = {"TRACER_FLUSH_INTERVAL": "10min"}
    if max_memory:
        env["TRACER_MAX_MEMORY"] = label
    p = subprocess.Popen([h.env_path("TEST_BIN"), str(N)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=h.run_env(True, output=d, extra_env=env))
    p.stdin.write(b"mark\n")
    p.stdin.flush()
    c.equal(p.stdout.readline().decode().strip(), "marked %d" % N, "%s: the program's line" % what)
    files = glob.glob("/dev/shm/tracer-%d-*" % p.pid)
    if c.check(len(files) == 1, "%s: the run's in-flight file: %r" % (what, files)) and max_memory:
        c.equal(os.stat(files[0]).st_size, 4096 + max_memory // CHUNK * CHUNK, "%s: the in-flight file's size" % what)
    p.kill()
    p.wait()
    # why the pool could not be what was asked, if it could not
    c.equal([ln for ln in p.stderr.read().decode(errors="replace").splitlines() if ln.startswith("tracer:")], [],
            "%s: the program's tracer: lines" % what)
    for f in (p.stdin, p.stdout, p.stderr):
        f.close()
    with open(os.path.join(tmp, label + ".err"), "wb") as err:
        r = subprocess.Popen([h.env_path("TEST_TRACER_CLI"), "recover", d], stdout=subprocess.DEVNULL, stderr=err,
                             env=h.base_env())
        _, status, usage = os.wait4(r.pid, 0)
    with open(os.path.join(tmp, label + ".err")) as f:
        text = f.read()
    lines = [ln for ln in text.splitlines() if ln.startswith("tracer:")]
    for marker in h.SANITIZER_MARKERS:
        c.check(marker not in text, "%s: sanitizer report from recover: %r" % (what, marker))
    c.equal((os.waitstatus_to_exitcode(status), lines), (0, []), "%s: recover's exit status and lines" % what)
    cpu = usage.ru_utime + usage.ru_stime
    print("%s: tracer recover took %.3f s of CPU" % (what, cpu))
    t = h.open_checked_trace(c, what, os.path.join(d, "traces.otf2"))
    if t is not None:
        got = [h.Trace.attr(ev, "value") for _, ev in t.enters("live")]
        c.check(got == list(range(N)), "%s: %d marks in the archive, want exactly 0..%d" % (what, len(got), N - 1))
    c.check(files and not os.path.exists(files[0]), "%s: the in-flight file is left" % what)
    return cpu


def main():
    c = h.Checker("recover_huge_pool")
    tmp = tempfile.mkdtemp(prefix="tracer-test-recover-huge-pool-")
    try:
        one(c, tmp, "64M", 0)
        cpu = one(c, tmp, HUGE[0], HUGE[1])
        c.check(cpu < MAX_CPU_S * (4 if SANITIZED else 1),
                "TRACER_MAX_MEMORY=%s: recover took %.3f s of CPU: it reads chunks never handed out" % (HUGE[0], cpu))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
