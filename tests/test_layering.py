#!/usr/bin/python3
"""Issue 18's layering: `scripts/include-graph --check`, run on the source
tree, must find no include cycle (between folders or between files), no
arrow from a producer (ompt, mpit, api) to anything above core/ (session,
job, journal, model, writer, summary, otf2read) and no arrow out of core/.
Before the redesign (55987d2) it found 8 such arrows and cycles."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "include-graph"), "--check"],
                   capture_output=True, text=True)
print(p.stdout, p.stderr)
bad = []
if p.returncode != 0:
    bad.append("scripts/include-graph --check exited %d: the layering is broken (above)" % p.returncode)
# The graph must have been read at all: the producers' arrows to core are there.
if not any(ln.split()[:3] == ["ompt", "->", "core"] for ln in p.stdout.splitlines()):
    bad.append("no arrow ompt -> core: the include graph was not read")
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
