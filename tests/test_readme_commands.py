#!/usr/bin/python3
"""Every shell command the README shows works as it says (issue 35).

Each command of the README's fenced `sh` blocks (continuation lines
joined) is either in COMMANDS, where it is run in a temporary directory
in README order and its result checked against what the program really
did, or in NOT_RUN with the reason. A command in neither fails the test,
and so does an entry of either that the README no longer shows: a new
command in the README must come with its check here.

The temporary directory holds what the README assumes: `build` (a link
to the build tree this test runs in), `app.c` (examples/offload_demo.c),
`mpi_app` (tests/programs/mpi_marks.c with BASE 3: rank r marks "step"
3 + r times) and `myapp.c` (the README's `c` block). In a sanitizer build
the sanitizer runtime is put before libtracer.so where a command preloads
it, and into the environment of commands that run a traced program.

Also checked:
  - the README's example output (the first `text` block) is what
    `scripts/dev demo-run` prints today: every line with its numbers, the
    hash in kernel names and the path masked, in order; the rows of each
    table as many, with the same names where the table shows all of them
    (the order of rows and the top 10 vary from run to run);
  - docs/README.md links every docs/*.md.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
from otf2_trace import Trace, RankView  # noqa: E402

# examples/offload_demo.c: target data (enter 1, exit 1), 10 target regions
# at line 31, 1 target update, 1 target region at line 44.
DEMO_STDOUT = "checksum 15032156160.0\n"
DEMO_TARGET_REGIONS = {"target": 11, "target enter data": 1, "target exit data": 1, "target update": 1}
DEMO_KERNELS = 11
MPI_BASE = 3     # mpi_app: rank r marks "step" MPI_BASE + r times, values 0, 1, ...
MYAPP_STEPS = 3  # the README's c block: 3 "time step" regions, marks "steps done" 1..3


class Ctx:
    def __init__(self, c, work, env):
        self.c, self.work, self.env = c, work, env

    def path(self, *p):
        return os.path.join(self.work, *p)

    def tracer(self, *args):
        p = subprocess.run([h.env_path("TEST_TRACER_CLI")] + list(args), cwd=self.work, env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

    def summary(self, what, trace_dir):
        rc, out, err = self.tracer("summary", "--json", trace_dir)
        if not self.c.equal(rc, 0, "%s: tracer summary --json %s (stderr %r)" % (what, trace_dir, err[-300:])):
            return None
        return json.loads(out)

    def new_dirs(self, pattern, before):
        return sorted(set(glob.glob(self.path(pattern))) - before)


def check_demo_archive(ctx, what, trace_dir):
    s = ctx.summary(what, trace_dir)
    if s is None:
        return
    ctx.c.equal({k: v for k, v in s["target_regions"].items() if v}, DEMO_TARGET_REGIONS,
                "%s: target regions" % what)
    ctx.c.equal(sum(s["kernels"].values()), DEMO_KERNELS, "%s: kernels" % what)


def check_ok(ctx, what, rc, out, err, stdout=None):
    ok = ctx.c.equal(rc, 0, "%s: exit code (stderr %r)" % (what, err[-500:]))
    if stdout is not None:
        ok &= ctx.c.equal(out, stdout, "%s: stdout" % what)
    ctx.c.check("tracer:" not in err, "%s: tracer: lines on stderr: %r" % (what, err[-500:]))
    for marker in h.SANITIZER_MARKERS:
        ctx.c.check(marker not in err, "%s: sanitizer report on stderr: %r" % (what, marker))
    return ok


# ---- what each command must have done ---------------------------------

def built(name):
    def check(ctx, what, rc, out, err):
        if check_ok(ctx, what, rc, out, err, ""):
            ctx.c.check(os.access(ctx.path(name), os.X_OK), "%s: no executable %s" % (what, name))
    return check


def app_preloaded(ctx, what, rc, out, err):
    made = ctx.new_dirs("tracer-app-*", ctx.before)
    if not check_ok(ctx, what, rc, out, err, DEMO_STDOUT):
        return
    if ctx.c.equal(len(made), 1, "%s: new ./tracer-app-<date>-<pid> directories %r" % (what, made)):
        check_demo_archive(ctx, what, made[0])


def app_run(ctx, what, rc, out, err):
    if not check_ok(ctx, what, rc, out, err, DEMO_STDOUT):
        return
    check_demo_archive(ctx, what, ctx.path("trace"))
    t = Trace(ctx.path("trace"))
    ctx.c.equal(sorted(t.streams_of_device()), [0], "%s: devices with a stream" % what)


def mpi_job(pattern):
    def check(ctx, what, rc, out, err):
        want_out = sorted("rank %d of 2: %d marks" % (r, MPI_BASE + r) for r in range(2))
        if not check_ok(ctx, what, rc, out, err):
            return
        ctx.c.equal(sorted(out.splitlines()), want_out, "%s: stdout" % what)
        made = ctx.new_dirs(pattern + "*", ctx.before)
        # One archive for the job: no per-rank directories, no .1.
        if not ctx.c.equal([os.path.basename(d) for d in made if not re.search(r"\.(rank\d+|\d+)$", d)],
                           [os.path.basename(d) for d in made], "%s: per-rank or numbered archives" % what):
            return
        if not ctx.c.equal(len(made), 1, "%s: new archives %r" % (what, made)):
            return
        t = Trace(made[0])
        for r in range(2):
            ctx.c.equal(RankView(t, r).mark_values(), list(range(MPI_BASE + r)), "%s: rank %d's marks" % (what, r))
    return check


def converted(ctx, what, rc, out, err):
    if not check_ok(ctx, what, rc, out, err):
        return
    data = open(ctx.path("trace.pftrace"), "rb").read()
    # The names convert.md and the README give: kernels, and the device's
    # memory counter track.
    for name in (b"kernel main (", b"device 0 memory in use"):
        ctx.c.check(name in data, "%s: %r is not in trace.pftrace" % (what, name))


def summarised(ctx, what, rc, out, err):
    if check_ok(ctx, what, rc, out, err):
        ctx.c.check(re.search(r"^kernels: %d " % DEMO_KERNELS, out, re.M),
                    "%s: no 'kernels: %d' line: %r" % (what, DEMO_KERNELS, out[:400]))


RECOVER_DIR = "tracer-app-20261202-101500-4242"


def journal_only(ctx):
    """The README's recover example needs a run that wrote only its journal."""
    env = dict(ctx.env, TRACER_OUTPUT=ctx.path(RECOVER_DIR), TRACER_WRITE_AT_END="0")
    if ctx.san:
        env["LD_PRELOAD"] = ctx.san + ":" + h.env_path("TEST_TRACER_LIB")
    else:
        env["LD_PRELOAD"] = h.env_path("TEST_TRACER_LIB")
    p = subprocess.run(["./app"], cwd=ctx.work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=300)
    ctx.c.equal(p.returncode, 0, "recover: the run with TRACER_WRITE_AT_END=0")
    ctx.c.check(os.path.isfile(ctx.path(RECOVER_DIR, "tracer.journal")), "recover: the run left no journal")


def recovered(ctx, what, rc, out, err):
    ctx.c.equal(rc, 0, "%s: exit code (stderr %r)" % (what, err[-500:]))
    check_demo_archive(ctx, what, ctx.path(RECOVER_DIR))


def myapp_ran(ctx, what, rc, out, err):
    if not check_ok(ctx, what, rc, out, err, ""):
        return
    t = Trace(ctx.path("myapp-trace"))
    ctx.c.equal(len(t.enters("time step")), MYAPP_STEPS, "%s: 'time step' regions" % what)
    ctx.c.equal(len(t.leaves("time step")), MYAPP_STEPS, "%s: 'time step' regions closed" % what)
    ctx.c.equal([Trace.attr(ev, "value") for _, ev in t.enters("steps done")], list(range(1, MYAPP_STEPS + 1)),
                "%s: 'steps done' marks" % what)


# ---- the table ----------------------------------------------------------
# command as the README writes it (spaces collapsed) -> (programs it needs,
# run it with the sanitizer runtime preloaded, prepare, check)
COMMANDS = {
    "clang-19 -O2 -g -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -Wl,-rpath,/usr/lib/llvm-19/lib app.c -o app":
        (["clang-19"], False, None, built("app")),
    "LD_PRELOAD=$PWD/build/src/libtracer.so ./app":
        (["clang-19"], False, None, app_preloaded),
    "build/tools/tracer run --output trace --devices 0 -- ./app":
        (["clang-19"], True, None, app_run),
    "mpiexec.mpich -n 2 env LD_PRELOAD=$PWD/build/src/libtracer.so ./mpi_app":
        (["mpiexec.mpich", "MPI_APP"], False, None, mpi_job("tracer-mpi_marks-")),
    "build/tools/tracer run --output job -- mpiexec.mpich -n 2 ./mpi_app":
        (["mpiexec.mpich", "MPI_APP"], True, None, mpi_job("job")),
    "build/tools/tracer convert trace -o trace.pftrace":
        (["clang-19"], False, None, converted),
    "build/tools/tracer summary trace":
        (["clang-19"], False, None, summarised),
    "build/tools/tracer recover ./" + RECOVER_DIR:
        (["clang-19"], False, journal_only, recovered),
    "cc myapp.c $(PKG_CONFIG_PATH=$PWD/build/meson-uninstalled pkg-config --cflags --libs tracer) -o myapp":
        (["cc", "pkg-config"], False, None, built("myapp")),
    "TRACER_OUTPUT=myapp-trace ./myapp":
        (["cc", "pkg-config"], True, None, myapp_ran),
}

NOT_RUN = {
    "scripts/dev demo":
        "the quick start itself: ../shared/tools/fresh-debian-check runs it on a fresh Debian 12; its "
        "output is compared with the README's example below (scripts/dev demo-run, its run alone)",
    "scripts/dev test":
        "the whole test suite, this test included: .ci/run runs it",
    "meson setup build-install --prefix=$HOME/tracer && meson install -C build-install":
        "a second full build; test pkgconfig installs this build (meson install --destdir) instead",
    "cc myapp.c $(PKG_CONFIG_PATH=$HOME/tracer/lib/x86_64-linux-gnu/pkgconfig pkg-config --cflags --libs tracer)"
    " -o myapp":
        "needs the install above; test pkgconfig builds and runs a program with the installed tracer.pc",
}


def blocks(text, lang):
    """The bodies of the README's fenced blocks of @lang, indentation removed."""
    out = []
    for m in re.finditer(r"^( *)```%s\n(.*?)^\1```" % re.escape(lang), text, re.M | re.S):
        ind = len(m.group(1))
        out.append("".join(line[ind:] if line[:ind].strip() == "" else line
                           for line in m.group(2).splitlines(True)))
    return out


def readme_commands(text):
    cmds = []
    for body in blocks(text, "sh"):
        for cmd in re.sub(r"\\\n\s*", " ", body).splitlines():
            cmd = " ".join(cmd.split())
            if cmd and not cmd.startswith("#"):
                cmds.append(cmd)
    return cmds


def adapted(cmd, san, preload_san):
    """A sanitizer build's runtime goes before libtracer.so where a command
    preloads it, and into the environment of a command that runs a traced
    program (@preload_san): set for that command only, since bash itself
    does not run with ThreadSanitizer's runtime preloaded (SIGSEGV)."""
    if san:
        cmd = cmd.replace("LD_PRELOAD=$PWD/build/src/libtracer.so", "LD_PRELOAD=%s:$PWD/build/src/libtracer.so" % san)
        if preload_san:
            cmd = "LD_PRELOAD=%s %s" % (san, cmd)
    return cmd


def check_table(c, cmds):
    for cmd in cmds:
        c.check(cmd in COMMANDS or cmd in NOT_RUN,
                "the README shows %r, which this test neither runs (COMMANDS) nor lists with a reason "
                "(NOT_RUN)" % cmd)
    for cmd in list(COMMANDS) + list(NOT_RUN):
        c.check(cmd in cmds, "the README no longer shows %r: remove it from this test" % cmd)
    c.equal(len(cmds), len(set(cmds)), "commands shown twice in the README")


def setup_work(c, work, readme):
    os.symlink(h.env_path("TEST_BUILD_ROOT"), os.path.join(work, "build"))
    shutil.copy(h.env_path("TEST_DEMO_SRC"), os.path.join(work, "app.c"))
    mpi = os.environ.get("TEST_MPI_BIN")
    if mpi:
        with open(os.path.join(work, "mpi_app"), "w") as f:
            f.write("#!/bin/sh\nexec %s %d \"$@\"\n" % (mpi, MPI_BASE))
        os.chmod(os.path.join(work, "mpi_app"), 0o755)
    c_blocks = blocks(readme, "c")
    if c.equal(len(c_blocks), 1, "the README's c blocks"):
        with open(os.path.join(work, "myapp.c"), "w") as f:
            f.write(c_blocks[0])


def missing(needs):
    gone = []
    for n in needs:
        if n == "MPI_APP":
            if not os.environ.get("TEST_MPI_BIN"):
                gone.append("the MPICH test programs")
        elif not shutil.which(n):
            gone.append(n)
    return gone


def run_commands(c, cmds, work):
    san = ":".join(p for p in re.split(r"[:\s]+", os.environ.get("TEST_SANITIZER_PRELOAD", "")) if p)
    env = h.base_env()
    env.pop("LD_LIBRARY_PATH", None)  # meson test's; the README's commands do without it
    ctx = Ctx(c, work, env)
    ctx.san = san
    for cmd in cmds:
        if cmd not in COMMANDS:
            continue
        needs, preload_san, prepare, check = COMMANDS[cmd]
        gone = missing(needs)
        if gone:
            c.note("not run, %s not found: %s" % (", ".join(gone), cmd))
            continue
        if prepare:
            prepare(ctx)
        ctx.before = set(glob.glob(ctx.path("*")))
        p = subprocess.run(["/bin/bash", "-c", adapted(cmd, san, preload_san)], cwd=work, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        check(ctx, cmd, p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"))


# ---- the example output ---------------------------------------------------

def mask(line, demo_dir):
    line = line.replace(demo_dir, "/path/to/tracer/build/demo")
    line = re.sub(r"__omp_offloading_[0-9a-f]+_[0-9a-f]+_", "__omp_offloading_H_H_", line)
    # Numbers of other widths move the columns: spaces are compared as one.
    return " ".join(re.sub(r"\d+(\.\d+)?", "N", line).split())


def is_row(line):
    return re.match(r"^\s+(\d|\.\.\. \d+ more$)", line) is not None


def sections(lines, demo_dir):
    """[(line, [rows after it])], masked: each line that is not a table
    row, with the table rows that follow it."""
    out = []
    for line in lines:
        if is_row(line) and out:
            out[-1][1].append(mask(line, demo_dir))
        else:
            out.append((mask(line, demo_dir), []))
    return out


def row_name(row):
    return re.sub(r"^[\sN.%]+", "", row)  # after the masked numbers


def check_example(c, readme, work):
    texts = blocks(readme, "text")
    if not c.check(texts, "the README has no example output (a text block)"):
        return
    demo_dir = os.path.join(work, "demo")
    env = h.base_env()
    env.pop("LD_LIBRARY_PATH", None)
    # The README's example was made on 2 cores: as many OpenMP threads, so
    # that the per-thread table has its rows on a larger machine too.
    env["OMP_NUM_THREADS"] = "2"
    env["DEV_DEMO_PRELOAD"] = ":".join(p for p in re.split(r"[:\s]+", os.environ.get("TEST_SANITIZER_PRELOAD", ""))
                                       if p)
    p = subprocess.run([os.path.join(h.env_path("TEST_SOURCE_ROOT"), "scripts", "dev"), "demo-run",
                        h.env_path("TEST_BUILD_ROOT"), demo_dir], cwd=work, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    err = p.stderr.decode(errors="replace")
    if not c.equal(p.returncode, 0, "scripts/dev demo-run: exit code (stderr %r)" % err[-500:]):
        return
    got = sections(p.stdout.decode().splitlines(), demo_dir)
    want = sections(texts[0].splitlines(), demo_dir)
    # got: the README's example; want: what the demo prints today.
    c.equal([line for line, _ in want], [line for line, _ in got],
            "the README's example output, against scripts/dev demo-run today (numbers masked, table rows apart)")
    for (line, wrows), (_, grows) in zip(want, got):
        c.equal(len(wrows), len(grows), "the README's example: rows under %r, against today's" % line)
        if not any("more" in r for r in wrows):
            c.equal(sorted(map(row_name, wrows)), sorted(map(row_name, grows)),
                    "the README's example: row names under %r, against today's" % line)


def check_docs_index(c):
    docs = os.path.join(h.env_path("TEST_SOURCE_ROOT"), "docs")
    index = open(os.path.join(docs, "README.md")).read()
    for page in sorted(os.listdir(docs)):
        if page.endswith(".md") and page != "README.md":
            c.check("](%s)" % page in index, "docs/README.md does not link docs/%s" % page)


def main():
    c = h.Checker("readme_commands")
    readme = open(os.path.join(h.env_path("TEST_SOURCE_ROOT"), "README.md")).read()
    cmds = readme_commands(readme)
    check_table(c, cmds)
    check_docs_index(c)
    tmp = tempfile.mkdtemp(prefix="tracer-test-readme-")
    try:
        work = os.path.join(tmp, "work")
        os.mkdir(work)
        setup_work(c, work, readme)
        run_commands(c, cmds, work)
        check_example(c, readme, tmp)
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
