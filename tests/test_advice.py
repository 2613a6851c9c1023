#!/usr/bin/python3
"""Data mapping advice (issue 37): `tracer summary` names the data mappings
a program could remove, with TRACER_HASH on.

programs/advice_patterns.c makes every pattern an exact number of times
over N iterations (its header); programs/advice_clean.c makes the correct
look-alikes, which must not be flagged. Ground truth is the programs'
structure: the construct of each group is a line marked ADVICE:<tag>.
Checked on host offload and, when built, on the CUDA driver double (kernels
only read mapped data, so both give the same answer):
  * summary --json "advice": exactly the expected groups (category, source
    line, variable, count, bytes), and equal to what the Python reader
    finds in the archive's flagged ops (attribute "advice");
  * the text report's "data mapping:" line, also at the end of the run
    with TRACER_SUMMARY=1;
  * the clean program: no advice; the default (TRACER_HASH=0): no advice;
  * an MPICH job of 2 ranks (host offload): each rank's groups, by rank.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import summary_truth as st  # noqa: E402

N = 5
BYTES = 512 * 8


def expected(src):
    m = h.source_marks(src, "ADVICE")
    return sorted([
        ("duplicate_transfer", m["dup"], "a", N),
        ("repeated_allocation", m["a_enter"], "a", N - 1),
        ("round_trip", m["trip"], "b", N - 1),
        ("repeated_allocation", m["trip"], "b", N - 1),
        ("unused_allocation", m["unused"], "c", N),
        ("unused_transfer", m["wasted"], "d", N),
        ("repeated_allocation", m["wasted"], "d", N - 1),
        ("round_trip", m["link"], "e", N - 1),
        ("repeated_allocation", m["link"], "e", N - 1),
        ("round_trip", m["nowait"], "f", N - 1),
        ("repeated_allocation", m["nowait"], "f", N - 1),
    ])


def line_of(source):
    g = re.search(r":(\d+)\)$", source or "")
    return int(g.group(1)) if g else None


def traced(c, what, binary, env):
    tmp = tempfile.mkdtemp(prefix="tracer-test-advice-")
    out = os.path.join(tmp, "trace")
    p = h.run([binary, str(N)], tmp, traced=True, output=out, extra_env=env)
    c.equal(p.returncode, 0, "%s: exit code" % what)
    err = p.stderr.decode(errors="replace")
    for marker in h.SANITIZER_MARKERS:
        c.check(marker not in err, "%s: sanitizer report" % what)
    cli = h.env_path("TEST_TRACER_CLI")
    q = subprocess.run([cli, "summary", "--json", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=h.base_env(), timeout=120)
    js = json.loads(q.stdout.decode()) if q.returncode == 0 else {}
    c.equal(q.returncode, 0, "%s: summary --json exit code" % what)
    text = subprocess.run([cli, "summary", out], stdout=subprocess.PIPE, env=h.base_env(),
                          timeout=120).stdout.decode()
    t = h.open_checked_trace(c, what, os.path.join(out, "traces.otf2"))
    return tmp, js, text, t, err


def check_patterns(c, what, binary, src, env):
    tmp, js, text, t, err = traced(c, what, binary, dict(env, TRACER_HASH="1G", TRACER_SUMMARY="1"))
    try:
        c.check(re.search(r"^data mapping: \d+ data operations to remove", err, re.M),
                "%s: the data mapping section at the end of the run (TRACER_SUMMARY=1)" % what)
        advice = js.get("advice")
        got = sorted((g["category"], line_of(g["source"]), g["variable"], g["count"]) for g in advice or [])
        c.equal(got, expected(src), "%s: advice groups (category, line, variable, count)" % what)
        for g in advice or []:
            c.equal(g["bytes"], g["count"] * BYTES, "%s: bytes of %s at %s" % (what, g["category"], g["source"]))
            c.check(g["time_ns"] > 0 and g["saved_time_ns"] == g["time_ns"], "%s: time of %s" % (what, g))
        if t is not None:
            c.equal(advice, st.advice_groups(t), "%s: advice vs the Python reader of the archive" % what)
        # Perfetto and Chrome JSON: each flagged slice carries the category
        # in its args, as in the archive (an unused allocation's delete too)
        conv = os.path.join(tmp, "trace.json")
        q = subprocess.run([h.env_path("TEST_TRACER_CLI"), "convert", "--format", "json", "-o", conv,
                            os.path.join(tmp, "trace")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=h.base_env(), timeout=120)
        c.equal(q.returncode, 0, "%s: tracer convert --format json" % what)
        if q.returncode == 0:
            with open(conv) as f:
                events = json.load(f)
            events = events.get("traceEvents", events) if isinstance(events, dict) else events
            got_args = {}
            for e in events:
                cat = (e.get("args") or {}).get("advice")
                if cat and e.get("ph") in ("X", "B"):
                    got_args[cat] = got_args.get(cat, 0) + 1
            want_args = {}
            for cat, _, _, count in expected(src):
                want_args[cat] = want_args.get(cat, 0) + count * (2 if cat == "unused_allocation" else 1)
            c.equal(got_args, want_args, "%s: flagged slices per category in Chrome JSON" % what)
        n = sum(k[3] for k in expected(src))
        c.check(re.search(r"^data mapping: %d data operations to remove in 11 places; removing them saves "
                          r"[\d.]+ ms and %d bytes moved:$" % (n, (5 * N - 3) * BYTES), text, re.M),
                "%s: the report's data mapping line:\n%s" % (what, text))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    tmp, js, text, t, err = traced(c, what + ", default", binary, env)
    c.equal(js.get("advice"), [], "%s, default (TRACER_HASH=0): advice" % what)
    shutil.rmtree(tmp, ignore_errors=True)


def check_mpi(c, src):
    binary, mpiexec = os.environ.get("TEST_MPI_BIN"), os.environ.get("TEST_MPIEXEC")
    if not binary or not mpiexec:
        print("NOTE: no MPICH build: the job case is left out")
        return
    tmp = tempfile.mkdtemp(prefix="tracer-test-advice-mpi-")
    out = os.path.join(tmp, "trace")
    p = None
    try:
        p = h.run([mpiexec, "-n", "2", binary, str(N)], tmp, traced=True, output=out,
                  extra_env={"TRACER_HASH": "1G", "HYDRA_LAUNCHER": "fork"}, timeout=180)
        c.equal(p.returncode, 0, "mpi: mpiexec exit code")
        q = subprocess.run([h.env_path("TEST_TRACER_CLI"), "summary", "--json", out], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=h.base_env(), timeout=120)
        c.equal(q.returncode, 0, "mpi: summary --json exit code")
        advice = json.loads(q.stdout.decode()).get("advice") if q.returncode == 0 else None
        for rank in (0, 1):
            got = sorted((g["category"], line_of(g["source"]), g["variable"], g["count"])
                         for g in advice or [] if g["rank"] == rank)
            c.equal(got, expected(src), "mpi: rank %d's advice groups" % rank)
        c.equal(sorted({g["rank"] for g in advice or []}), [0, 1], "mpi: ranks in the advice")
        t = h.open_checked_trace(c, "mpi", os.path.join(out, "traces.otf2"))
        if t is not None:
            c.equal(advice, st.advice_groups(t), "mpi: advice vs the Python reader of the job's archive")
    finally:
        if c.failures and p is not None:
            print("stderr:", p.stderr.decode(errors="replace")[-3000:])
        shutil.rmtree(tmp, ignore_errors=True)


def check_clean(c, what, binary, env):
    tmp, js, text, t, err = traced(c, what, binary, dict(env, TRACER_HASH="1G"))
    c.equal(js.get("advice"), [], "%s: advice" % what)
    c.check("data mapping:" not in text, "%s: a data mapping section in the report" % what)
    shutil.rmtree(tmp, ignore_errors=True)


def main():
    c = h.Checker("advice")
    src = h.env_path("TEST_SRC")
    runs = [("host offload", h.env_path("TEST_BIN"), h.env_path("TEST_CLEAN_BIN"), {})]
    if os.environ.get("TEST_GPU_BIN"):
        runs.append(("fakecuda", os.environ["TEST_GPU_BIN"], os.environ["TEST_GPU_CLEAN_BIN"],
                     {"LD_LIBRARY_PATH": os.environ["TEST_FAKECUDA_DIR"] + ":" +
                      os.environ.get("LD_LIBRARY_PATH", "")}))
    else:
        print("NOTE: no sm_80 build (%s): host offload only" % os.environ.get("TEST_CUDA_SKIP", "?"))
    for what, patterns, clean, env in runs:
        check_patterns(c, what, patterns, src, env)
        check_clean(c, what + " clean", clean, env)
    check_mpi(c, src)
    c.finish(None)


if __name__ == "__main__":
    main()
