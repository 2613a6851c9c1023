#!/usr/bin/python3
"""Issue 18's layering, as far as it is done: scripts/include-graph, run on
the source tree, must report no arrow from a producer (ompt, mpit, api) to
session, job, journal or writer, and no folder cycle through a producer,
session or job. (The writer's own cycles, journal <-> writer through
u64map and the file cycle inside writer/, are the writer split's; once
it lands, `scripts/include-graph --check` is the whole test.)"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUARDED = {"api", "ompt", "mpit", "session", "job"}

out = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "include-graph")],
                     check=True, capture_output=True, text=True).stdout
print(out)
bad = []
for line in out.splitlines():
    line = line.strip()
    if line.startswith("producer "):
        bad.append(line)
    elif line.startswith("folder cycle:"):
        folders = {f.strip() for f in line.split(":", 1)[1].split("<->")}
        if folders & GUARDED:
            bad.append(line)
# The graph must have been read at all: the producers' arrows to core are there.
if not any(ln.split()[:3] == ["ompt", "->", "core"] for ln in out.splitlines()):
    bad.append("no arrow ompt -> core: the include graph was not read")
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
