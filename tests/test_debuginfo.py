#!/usr/bin/python3
"""Separate debug files, found on this machine only (issue 19;
src/journal/debug_files.h).

tracer names a construct after its source line, which libdw reads from the
program's DWARF. Here programs/omp_states.c (-g) is copied into a temporary
directory and its debug information moved into a separate file
(objcopy --only-keep-debug, strip --strip-debug, objcopy --add-gnu-debuglink),
in these layouts:

- unstripped: the program as built;
- beside: <dir>/omp_states.debug;
- dot_debug: <dir>/.debug/omp_states.debug;
- none: no debug file anywhere;
- wrong_crc: <dir>/omp_states.debug with 16 bytes appended: still a valid
  ELF file with the right build id and DWARF, but not the file the
  .gnu_debuglink CRC names, so it must be rejected.
(The build-id tree, /usr/lib/debug/.build-id, is not tested: it would mean
writing outside a temporary directory.)

Ground truth: the constructs' source lines are the MARK comments of the
program (TEST_SRC). The unstripped, beside and dot_debug runs name every
construct of the cases `ordered` and `counts` `<canonical> (omp_states.c:<mark
line>)`, with the source file and line in the region definition, and the
three give identical region definitions. The none and wrong_crc runs have the
same constructs with no source line at all (and no crash). Every run's exit
code (counts: 5) and stdout are the untraced program's.

No debuginfod: a traced run of the `none` layout (nothing found locally, the
case where elfutils' standard lookup goes to debuginfod) with
DEBUGINFOD_URLS=http://127.0.0.1:9 and LD_DEBUG=libs must never load
libdebuginfod (nor libcurl), and must take less than 10 s.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import otf2  # noqa: E402

BIN = h.env_path("TEST_BIN")
SRC = h.env_path("TEST_SRC")
NAME = "omp_states"
# case -> {canonical region name: MARK tag of its construct}
CASES = {
    "ordered": {"parallel": "ordered_parallel", "loop": "ordered_for", "ordered": "ordered"},
    "counts": {"parallel": "counts_parallel", "loop": "counts_for", "single": "counts_single"},
}
COUNTS_RC = 5  # the counts case exits with the status it is given


def args(case):
    return [case, str(COUNTS_RC)] if case == "counts" else [case]


WITH_LINES = ("unstripped", "beside", "dot_debug")
WITHOUT_LINES = ("none", "wrong_crc")
NO_NETWORK_LIMIT_S = 10


def tool(name):
    path = shutil.which(name)
    if not path:
        print("%s not found: test skipped" % name)
        sys.exit(h.SKIP)
    return path


def sh(c, what, cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return c.check(p.returncode == 0, "%s: %s failed: %s" % (what, " ".join(cmd), p.stdout.decode(errors="replace")))


def section_names(path):
    out = subprocess.run(["readelf", "-W", "-S", path], stdout=subprocess.PIPE).stdout.decode(errors="replace")
    return set(re.findall(r"\]\s+(\.\S+)", out))


def make_layouts(c, tmp):
    """{layout: program path}."""
    objcopy, strip = tool("objcopy"), tool("strip")
    tool("readelf")  # section_names
    progs = {}
    for layout in WITH_LINES + WITHOUT_LINES:
        d = os.path.join(tmp, layout)
        os.makedirs(d)
        prog = os.path.join(d, NAME)
        shutil.copy2(BIN, prog)
        progs[layout] = prog
        if layout == "unstripped":
            continue
        debug_dir = os.path.join(d, ".debug") if layout == "dot_debug" else d
        os.makedirs(debug_dir, exist_ok=True)
        debug = os.path.join(debug_dir, NAME + ".debug")
        sh(c, layout, [objcopy, "--only-keep-debug", prog, debug])
        sh(c, layout, [strip, "--strip-debug", prog])
        # objcopy reads the debug file by this path to compute the CRC; the
        # link holds its base name only.
        sh(c, layout, [objcopy, "--add-gnu-debuglink=" + debug, prog])
        if layout == "none":
            os.unlink(debug)
        elif layout == "wrong_crc":
            with open(debug, "ab") as f:
                f.write(b"\0" * 16)
    # the layouts are what they claim: DWARF only in the unstripped program
    for layout, prog in progs.items():
        secs = section_names(prog)
        c.equal(".debug_info" in secs, layout == "unstripped", "%s: the program has .debug_info" % layout)
        c.equal(".gnu_debuglink" in secs, layout != "unstripped", "%s: the program has .gnu_debuglink" % layout)
    return progs


def regions(anchor):
    with otf2.reader.open(anchor) as t:
        return sorted((r.name, r.canonical_name, r.source_file, r.begin_line_number) for r in t.definitions.regions)


def traced_regions(c, what, prog, case, want_rc, want_out, tmp):
    out = tempfile.mkdtemp(dir=tmp, prefix="trace-")
    r = h.run([prog] + args(case), os.path.dirname(prog), traced=True, output=out, timeout=120)
    c.equal(r.returncode, want_rc, "%s: exit code" % what)
    c.equal(r.stdout, want_out, "%s: stdout" % what)
    err = r.stderr.decode(errors="replace")
    for m in h.SANITIZER_MARKERS:
        c.check(m not in err, "%s: sanitizer report: %s" % (what, err[-2000:]))
    anchor = os.path.join(out, "traces.otf2")
    if not c.check(os.path.exists(anchor), "%s: no archive (stderr: %s)" % (what, err[-1000:])):
        return None
    t = h.open_checked_trace(c, what, anchor)
    return regions(anchor) if t else None


def check_lines(c, what, regs, case, marks):
    """Every construct of the case named after its MARK line."""
    base = os.path.basename(SRC)
    for canonical, tag in CASES[case].items():
        line = marks[tag]
        want = "%s (%s:%d)" % (canonical, base, line)
        got = [r for r in regs if r[1] == canonical]
        c.check(any(r[0] == want for r in got), "%s: no region %r (got %r)" % (what, want, got))
        for r in got:
            c.check(r[3] == line and r[2].endswith("programs/" + base),
                    "%s: %r: source %s:%d, want ...programs/%s:%d" % (what, r[0], r[2], r[3], base, line))


def check_no_lines(c, what, regs, case, with_lines):
    """The same constructs, with no source line."""
    c.equal(sorted(r[1] for r in regs), sorted(r[1] for r in with_lines), "%s: canonical region names" % what)
    for r in regs:
        c.check(not r[3] and ":" not in r[0], "%s: region %r has a source line (%s:%d)" % (what, r[0], r[2], r[3]))


def check_no_debuginfod(c, prog, case, tmp):
    out = tempfile.mkdtemp(dir=tmp, prefix="trace-")
    extra = {"LD_DEBUG": "libs", "DEBUGINFOD_URLS": "http://127.0.0.1:9", "DEBUGINFOD_TIMEOUT": "60"}
    t0 = time.monotonic()
    r = h.run([prog, case], os.path.dirname(prog), traced=True, output=out, extra_env=extra, timeout=120)
    wall = time.monotonic() - t0
    err = r.stderr.decode(errors="replace")
    what = "no debuginfod"
    c.equal(r.returncode, 0, "%s: exit code" % what)
    # LD_DEBUG works here, or this check could never fail
    lib_name = os.path.basename(h.env_path("TEST_TRACER_LIB"))
    c.check(re.search(r"calling init: \S*" + re.escape(lib_name), err),
            "%s: LD_DEBUG=libs shows no init of %s" % (what, lib_name))
    c.check(os.path.exists(os.path.join(out, "traces.otf2")), "%s: no archive" % what)
    for lib in ("libdebuginfod", "libcurl"):
        hits = [ln.strip() for ln in err.splitlines() if lib in ln]
        c.check(not hits, "%s: %s loaded: %s" % (what, lib, hits[:3]))
    c.check(wall < NO_NETWORK_LIMIT_S, "%s: the run took %.1f s (limit %d s)" % (what, wall, NO_NETWORK_LIMIT_S))
    print("no debuginfod: traced run of the stripped program without a debug file: %.2f s" % wall)


def main():
    c = h.Checker("test_debuginfo")
    marks = h.source_marks(SRC, "MARK")
    tmp = tempfile.mkdtemp(prefix="tracer-debuginfo-")
    try:
        progs = make_layouts(c, tmp)
        for case in CASES:
            ref = h.run([BIN] + args(case), tmp, traced=False, timeout=120)
            c.equal(ref.returncode, COUNTS_RC if case == "counts" else 0, "%s untraced: exit code" % case)
            by_layout = {}
            for layout in WITH_LINES + WITHOUT_LINES:
                what = "%s %s" % (case, layout)
                by_layout[layout] = traced_regions(c, what, progs[layout], case, ref.returncode, ref.stdout, tmp)
            if any(by_layout[layout] is None for layout in by_layout):
                continue
            for layout in WITH_LINES:
                check_lines(c, "%s %s" % (case, layout), by_layout[layout], case, marks)
                c.equal(by_layout[layout], by_layout["unstripped"],
                        "%s %s: region definitions (vs unstripped)" % (case, layout))
            for layout in WITHOUT_LINES:
                check_no_lines(c, "%s %s" % (case, layout), by_layout[layout], case, by_layout["unstripped"])
        check_no_debuginfod(c, progs["none"], "ordered", tmp)
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
