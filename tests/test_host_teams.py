#!/usr/bin/python3
"""Host teams leagues in the host OpenMP states (issue 9; docs/trace-model.md,
"Host OpenMP states"): programs/omp_teams.c.

  teams   the program's own `teams` construct, 2 teams, each a `distribute
          parallel for` with a reduction;
  target  3 `target teams` regions with a reduction, run on a host device
          by libomptarget's host plugin, which forks a league through libomp.

Each case runs untraced, traced in user mode (the default) and in machine
mode. Checked, against the program's own output (teams per league):
- exit code and stdout unchanged; the archive reads; regions nest;
- user mode: one `teams` region per team, the `teams (omp_teams.c:<line>)`
  of the MARK:teams line for the program's own construct; every `parallel`
  region of thread number 0 lies in a `teams` region, every
  `<OMP-reduction>` in a `teams` or `parallel` region, and each `teams`
  of the target case in a `target` region; `<OMP-overhead>` contains no
  other region (the fork ends when the team's task begins: a league's
  overhead does not span the league) and comes twice per ThreadFork on the
  encountering thread; no Leave is `incomplete` (a reduction's begin and end
  pair, although LLVM gives the begin in a host-plugin league no ids);
- OMP work + OMP wait of each thread (its last Metric) = the time of its
  outermost `teams` regions, to the nanosecond: nothing else of this
  program is parallel;
- `tracer summary`: the teams region is one row of the parallel regions,
  with the leagues as instances and a thread per team, whose work + wait
  per thread is that thread's time in it (teams case);
- machine mode: each league's initial `ompt implicit_task` carries the
  league's omp_id (the `ompt parallel` with the league flag), also where the
  runtime handed the task no parallel data (the target case); each `ompt
  reduction` is left with the omp_id it was entered with.
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
import otf2  # noqa: E402
from otf2_trace import Trace  # noqa: E402

BIN = h.env_path("TEST_BIN")
SRC = h.env_path("TEST_SRC")
LEAGUE = 0x40000000      # ompt_parallel_league
TASK_INITIAL = 1         # ompt_task_initial


def A(ev, name):
    return Trace.attr(ev, name)


def parse_stdout(case, out):
    m = re.fullmatch(r"%s: leagues=(\d+) teams=([\d,]+)(?: sum=\d+| sums=right)\n" % case, out)
    return (int(m.group(1)), [int(x) for x in m.group(2).split(",")]) if m else None


def intervals(t, loc):
    """[(canonical name, enter, leave, [canonical names open around it])]."""
    out, stack = [], []
    for ev in t.events[loc]:
        if isinstance(ev, otf2.events.Enter):
            iv = [ev.region.canonical_name, ev, None, [s[0] for s in stack]]
            stack.append(iv)
            out.append(iv)
        elif isinstance(ev, otf2.events.Leave) and stack:
            stack.pop()[2] = ev
    return out


def check_user(c, tag, case, t, teams):
    team_regions = 0
    for loc in t.cpu_threads():
        ivs = intervals(t, loc)
        for cn, enter, leave, anc in ivs:
            if cn == "teams":
                team_regions += 1
                if case == "teams":
                    c.equal(enter.region.name, "teams (%s:%d)" % (os.path.basename(SRC), h.source_marks(SRC, "MARK")["teams"]),
                            "%s %s: name of the teams region" % (tag, loc.name))
                else:
                    c.check("target" in anc, "%s %s: teams region outside a target region (%r)"
                            % (tag, loc.name, anc))
            # a team's thread 0 is in the league's team; its other threads
            # (workers the nested parallel region forked) are not
            if cn == "parallel" and A(enter, "omp_arg2") == 0:
                c.check("teams" in anc, "%s %s: parallel of thread number 0 outside a teams region (%r)"
                        % (tag, loc.name, anc))
            if cn == "<OMP-reduction>":
                c.check("teams" in anc or "parallel" in anc, "%s %s: <OMP-reduction> outside a teams or "
                        "parallel region (%r)" % (tag, loc.name, anc))
        # nothing opens inside an overhead
        stack = []
        for ev in t.events[loc]:
            if isinstance(ev, otf2.events.Enter):
                c.check(not stack or stack[-1] != "<OMP-overhead>", "%s %s: %s entered inside <OMP-overhead>"
                        % (tag, loc.name, ev.region.canonical_name))
                stack.append(ev.region.canonical_name)
            elif isinstance(ev, otf2.events.Leave) and stack:
                stack.pop()
        forks = len(t.events_of(otf2.events.ThreadFork, loc))
        c.equal(sum(1 for iv in ivs if iv[0] == "<OMP-overhead>"), 2 * forks,
                "%s %s: <OMP-overhead> regions, twice per ThreadFork" % (tag, loc.name))
        # work + wait = the outermost teams regions' time
        outer = sum(iv[2].time - iv[1].time for iv in ivs
                    if iv[0] == "teams" and "teams" not in iv[3] and iv[2] is not None)
        work = t.metric_values("OMP work", loc)
        wait = t.metric_values("OMP wait", loc)
        if outer:
            if c.check(work and wait, "%s %s: no OMP work / OMP wait metric" % (tag, loc.name)):
                c.equal(work[-1][2] + wait[-1][2], outer,
                        "%s %s: OMP work + OMP wait at the end vs the teams regions' time (ns)" % (tag, loc.name))
    c.equal(team_regions, sum(teams), "%s teams regions (one per team of each league)" % tag)
    inc = t.incomplete_leaves()
    c.check(not inc, "%s Leaves with incomplete=1: %r" % (tag, [(loc.name, ev.region.canonical_name)
                                                              for loc, ev in inc][:10]))


def check_summary(c, tag, d, t, leagues, teams):
    """`tracer summary --json`: the teams region is a row of the parallel
    regions, with the leagues as instances, a thread per team, and per
    thread work + wait = its time in the region (from the trace)."""
    cli = h.env_path("TEST_TRACER_CLI")
    p = subprocess.run([cli, "summary", "--json", d], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if not c.check(p.returncode == 0, "%s tracer summary: %r" % (tag, p.stderr[-1000:])):
        return
    rows = [r for r in json.loads(p.stdout)["omp"]["parallel_regions"] if r["name"].startswith("teams")]
    if not c.equal(len(rows), 1, "%s summary rows of teams regions" % tag):
        return
    row = rows[0]
    c.equal((row["instances"], row["threads"]), (leagues, sum(teams)),
            "%s summary teams row (instances, threads)" % tag)
    want = {}
    for loc in t.cpu_threads():
        for iv in intervals(t, loc):
            if iv[0] == "teams" and iv[2] is not None:
                want[loc.name] = want.get(loc.name, 0) + iv[2].time - iv[1].time
    got = {th["location"]: th["work_ns"] + th["wait_ns"] for th in row["per_thread"]}
    c.equal(got, want, "%s summary teams row: work + wait per thread vs the teams regions' time (ns)" % tag)


def check_machine(c, tag, t, leagues):
    league_ids = set()
    for loc, ev in t.events_of(otf2.events.Enter):
        if ev.region.canonical_name == "ompt parallel" and (A(ev, "omp_kind") or 0) & LEAGUE:
            league_ids.add(A(ev, "omp_id"))
    c.equal(len(league_ids), leagues, "%s ompt parallel regions with the league flag" % tag)
    c.check(0 not in league_ids, "%s a league with omp_id 0" % tag)
    seen = set()
    for loc in t.cpu_threads():
        stack = []
        for ev in t.events[loc]:
            if isinstance(ev, otf2.events.Enter):
                stack.append(ev)
                cn = ev.region.canonical_name
                if cn == "ompt implicit_task" and (A(ev, "omp_kind") or 0) & TASK_INITIAL and A(ev, "omp_id"):
                    c.check(A(ev, "omp_id") in league_ids, "%s %s: initial implicit task of omp_id %r, no "
                            "league's" % (tag, loc.name, A(ev, "omp_id")))
                    seen.add(A(ev, "omp_id"))
            elif isinstance(ev, otf2.events.Leave) and stack:
                enter = stack.pop()
                if enter.region.canonical_name == "ompt reduction":
                    c.equal(A(ev, "omp_id"), A(enter, "omp_id"), "%s %s: omp_id of an ompt reduction's Leave "
                            "vs its Enter" % (tag, loc.name))
    c.equal(seen, league_ids, "%s leagues whose initial implicit task names them" % tag)


def main():
    c = h.Checker("host_teams")
    tmp = tempfile.mkdtemp(prefix="tracer-test-host-teams-")
    try:
        for case in ("teams", "target"):
            plain = h.run([BIN, case], tmp, traced=False)
            out = plain.stdout.decode()
            c.equal(plain.returncode, 0, "%s: exit code without tracer" % case)
            truth = parse_stdout(case, out)
            if not c.check(truth, "%s: unexpected output %r" % (case, out)):
                continue
            leagues, teams = truth
            for mode in ("user", "machine"):
                tag = "[%s/%s]" % (case, mode)
                d = os.path.join(tmp, "%s-%s" % (case, mode))
                r = h.run([BIN, case], tmp, traced=True, output=d,
                          extra_env={"TRACER_MODE": mode, "OMP_WAIT_POLICY": "passive"})
                c.equal(r.returncode, 0, "%s exit code" % tag)
                c.equal(r.stdout.decode(), out, "%s stdout" % tag)
                err = r.stderr.decode(errors="replace")
                c.check(not err.strip(), "%s stderr: %r" % (tag, err[-2000:]))
                t = h.open_checked_trace(c, tag, os.path.join(d, "traces.otf2"))
                if t is None:
                    continue
                if mode == "user":
                    check_user(c, tag, case, t, teams)
                    if case == "teams":
                        check_summary(c, tag, d, t, leagues, teams)
                else:
                    check_machine(c, tag, t, leagues)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
