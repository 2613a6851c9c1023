#!/usr/bin/python3
"""`tracer info` (tools/cmd_info.c and the info_*.c engines).

  a. the build section: version, compiler, OTF2 version, libtracer.so found;
     exit 0, nothing on stderr.
  b. OpenMP (libomp + libomptarget of LLVM 19, loaded in a child): lists
     ompt_callback_target_emi and device_initialize as `always`,
     target_map_emi as `never`, and at least one device; the user's
     TRACER_OMPT=none / TRACER_ENABLE=0 do not change it (clean child
     environment); the child's temporary trace directory is removed.
     --omp-lib /nonexistent: "no OpenMP runtime found (tried /nonexistent)".
  c. MPI: with MPICH the version line, the family (MPICH, integer handles)
     and the MPI_T source and event counts; --mpi-lib /nonexistent: "no MPI
     library found"; a library that says it is Open MPI but lacks Open MPI's
     predefined objects (a stand-in compiled here): family unknown, no
     MPI_T; the real Open MPI 4.1 (libmpi.so.40, when installed): family
     Open MPI (pointer handles), no MPI_T events interface, and the default
     listing shows it beside MPICH; with OMPI_EVENTS_PREFIX naming an Open
     MPI with MPI_T events (6.x), its libmpi.so.0 lists the source "ompi"
     and the event types ompi.mpi.initialization, .finalization,
     .communicator_created, .communicator_freed and .communicator_name_set
     (bound to a communicator).
  d. --config: each variable with its source; a malformed value is INVALID
     with the parser's message; an unknown TRACER_* name gets the closest
     known one.  --config --markdown: the README table header.  Usage
     errors: exit 2, one `tracer: info:` line.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
import extra as x    # noqa: E402

OPENMPI_LIB = "/usr/lib/x86_64-linux-gnu/libmpi.so.40"
FAKE_OPENMPI = r"""
#include <string.h>
int MPI_Get_library_version(char *version, int *len)
{
    strcpy(version, "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4");
    *len = (int)strlen(version);
    return 0;
}
"""


def info(args, cwd, extra=None, timeout=180):
    env = {"LD_PRELOAD": None}
    if extra:
        env.update(extra)
    return x.run([h.env_path("TEST_TRACER_CLI"), "info"] + args, cwd, extra=env, timeout=timeout)


def callback_results(out):
    return dict(re.findall(r"^\s+(ompt_callback_\w+)\s+(\S.*?)\s*$", out, re.M))


def case_a(c, cwd):
    rc, out, err = info([], cwd)
    x.check_no_signal(c, rc, "info")
    c.equal(rc, 0, "info: exit code")
    c.equal(err, "", "info: stderr")
    version = os.environ.get("TEST_PROJECT_VERSION", "0.1.0")
    c.check(out.startswith("tracer %s\n" % version), "info: first line %r" % out[:80])
    for label in ("compiler:", "build type:", "sanitizers:", "omp-tools.h from:"):
        c.check(re.search(r"^\s+%s\s+\S" % re.escape(label), out, re.M),
                "info: no %r line" % label)
    c.check(re.search(r"^\s+OTF2:\s+\d+\.\d+\.\d+", out, re.M), "info: no OTF2 version line")
    lib = os.path.realpath(h.env_path("TEST_TRACER_LIB"))
    m = re.search(r"^\s+libtracer.so:\s+(\S+)$", out, re.M)
    if c.check(m, "info: no libtracer.so line"):
        c.equal(os.path.realpath(m.group(1)), lib, "info: libtracer.so found")
    for section in ("OpenMP:", "MPI:", "configuration (TRACER_* environment variables):"):
        c.check(re.search(r"^%s$" % re.escape(section), out, re.M), "info: no section %r" % section)
    return out


def case_b(c, cwd, full):
    omp = full.split("\nMPI:\n")[0]
    c.check(re.search(r"^\s+runtime:\s+\S*libomp", omp, re.M), "OpenMP: no runtime line:\n%s" % omp)
    c.check(re.search(r"^\s+offload runtime:\s+\S*libomptarget", omp, re.M),
            "OpenMP: no offload runtime line:\n%s" % omp)
    # How libomptarget reaches libomp: by name, or through tracer's alias of
    # "libomp.so" (Debian's libomp-19-dev keeps that name off the search path).
    m = re.search(r"^\s+connection:\s+(.*)$", omp, re.M)
    if c.check(m, "OpenMP: no connection line:\n%s" % omp):
        c.check(re.match(r'(libomptarget finds the running OpenMP runtime \S+ as "libomp.so"'
                         r'|"libomp.so" was not on the library search path; tracer made it name the '
                         r'running OpenMP runtime \S+ \(with \S+libtracer-ompalias.so\), so '
                         r'libomptarget finds it)$', m.group(1)),
                "OpenMP: connection line %r" % m.group(1))
    got = callback_results(omp)
    for name, want in (("ompt_callback_target_emi", "always"),
                       ("ompt_callback_device_initialize", "always"),
                       ("ompt_callback_target_map_emi", "never")):
        c.equal(got.get(name), want, "OpenMP: answer for %s" % name)
    m = re.search(r"^\s+devices: (\d+), (\d+) initialised", omp, re.M)
    if c.check(m, "OpenMP: no devices line:\n%s" % omp):
        c.check(int(m.group(1)) >= 1, "OpenMP: no device: %r" % m.group(0))
        c.check(int(m.group(2)) >= 1, "OpenMP: no device initialised: %r" % m.group(0))
    c.check(re.search(r"^\s+device 0: \S", omp, re.M), "OpenMP: device 0 not listed")

    # The user's settings must not hide what the runtime offers.
    tmpdir = tempfile.mkdtemp(prefix="tracer-test-info-tmp-")
    rc, out, err = info([], cwd, extra={"TRACER_OMPT": "none", "TRACER_ENABLE": "0",
                                        "TMPDIR": tmpdir})
    c.equal(rc, 0, "info with TRACER_OMPT=none: exit code")
    c.equal(callback_results(out.split("\nMPI:\n")[0]), got,
            "info with TRACER_OMPT=none TRACER_ENABLE=0: OMPT answers (vs a clean environment)")
    c.equal(os.listdir(tmpdir), [], "info: the child's temporary trace directory is left behind")
    shutil.rmtree(tmpdir, ignore_errors=True)
    check_no_pool_left(c, cwd)

    rc, out, err = info(["--omp-lib", "/nonexistent/libomp.so.5"], cwd)
    c.equal(rc, 0, "--omp-lib /nonexistent: exit code")
    c.check("no OpenMP runtime found (tried /nonexistent/libomp.so.5)" in out,
            "--omp-lib /nonexistent: %r" % out.split("\nMPI:\n")[0][-300:])
    c.check("MPI:" in out and "configuration" in out,
            "--omp-lib /nonexistent: the other sections are missing")
    c.check("tracer:" not in err, "--omp-lib /nonexistent: stderr %r" % err)


SHM_FILE = re.compile(r"(?:tracer-|__KMP_REGISTERED_LIB_)(\d+)[-_]")


def pool_files():
    try:
        return {n for n in os.listdir("/dev/shm") if SHM_FILE.match(n)}
    except OSError:
        return set()


def check_no_pool_left(c, cwd):
    """The OpenMP probe's child runs tracer; its in-flight pool file
    /dev/shm/tracer-<pid>-<random> must be gone when it ends, as after any
    program's _exit; and libomp's registration file
    /dev/shm/__KMP_REGISTERED_LIB_<pid>_<uid>, which libomp removes only at
    exit (the child ends with _exit), is removed by `tracer info`, which
    made that process (issue 35, item 4).  Other tests may run beside this
    one, so only the files of dead processes forked by this `tracer info`
    count: pids just above its own.  As root, `tracer info` runs with a
    /dev/shm of its own (a private tmpfs in a mount namespace), which must
    be empty when it ends: tests killing OpenMP programs beside this one
    leave such files of their own, with pids in that range."""
    env = x.clean_env({"LD_PRELOAD": None}, False)
    if os.geteuid() == 0 and subprocess.run(["unshare", "-m", "true"], stderr=subprocess.DEVNULL).returncode == 0:
        out_path = os.path.join(cwd, "info-private-shm.out")
        script = ('mount -t tmpfs -o mode=1777 tmpfs /dev/shm || exit 99; "$0" info >"$1" 2>/dev/null; '
                  'ls -A /dev/shm')
        r = subprocess.run(["unshare", "-m", "sh", "-c", script, h.env_path("TEST_TRACER_CLI"), out_path],
                           cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180)
        if r.returncode == 0:
            with open(out_path, errors="replace") as f:
                c.check(callback_results(f.read()),
                        "info (private /dev/shm): no OMPT answers: the probe's child did not run tracer")
            c.equal(r.stdout.decode(errors="replace").split(), [],
                    "info: files left in its private /dev/shm by the probe's child")
            return
        c.note("no private /dev/shm (exit %d, %r): counting files by pid" % (r.returncode, r.stderr[-200:]))
    before = pool_files()
    p = subprocess.Popen([h.env_path("TEST_TRACER_CLI"), "info"], cwd=cwd, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, _ = p.communicate(timeout=180)
    c.check(callback_results(out.decode(errors="replace")),
            "info (pool file check): no OMPT answers: the probe's child did not run tracer")
    left = []
    for name in pool_files() - before:
        m = SHM_FILE.match(name)
        if m and p.pid < int(m.group(1)) <= p.pid + 200 and \
                not os.path.exists("/proc/%s" % m.group(1)):
            left.append(name)
    c.equal(left, [], "info: files left in /dev/shm by the probe's child")


def mpi_section(out):
    m = re.search(r"^MPI:\n(.*?)(?:\n\n|\Z)", out, re.M | re.S)
    return m.group(1) if m else ""


def case_c(c, cwd, full, tmp):
    mpi = mpi_section(full)
    c.check(re.search(r"^\s+version:\s+MPICH Version:\s+\d", mpi, re.M),
            "MPI: no MPICH version line:\n%s" % mpi)
    c.check(re.search(r"^\s+MPI_T event sources: \d+", mpi, re.M), "MPI: no MPI_T sources:\n%s" % mpi)
    c.check(re.search(r"^\s+MPI_T event types: \d+", mpi, re.M), "MPI: no MPI_T event types:\n%s" % mpi)

    rc, out, err = info(["--mpi-lib", "/nonexistent/libmpi.so"], cwd)
    c.equal(rc, 0, "--mpi-lib /nonexistent: exit code")
    c.check("no MPI library found (tried /nonexistent/libmpi.so)" in mpi_section(out),
            "--mpi-lib /nonexistent: %r" % mpi_section(out))

    others = []
    cc = shutil.which(os.environ.get("TEST_CC", "cc")) or shutil.which("gcc")
    if cc:
        src = os.path.join(tmp, "fake_openmpi.c")
        lib = os.path.join(tmp, "libfake_openmpi.so")
        with open(src, "w") as f:
            f.write(FAKE_OPENMPI)
        p = subprocess.run([cc, "-shared", "-fPIC", src, "-o", lib],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if c.check(p.returncode == 0, "cannot build the Open MPI stand-in: %s" % p.stderr.decode()):
            others.append(("Open MPI stand-in", lib))
    else:
        c.note("no C compiler: the Open MPI stand-in is not tested")
    if os.path.exists(OPENMPI_LIB):
        others.append(("Open MPI", OPENMPI_LIB))
    else:
        c.note("%s is not installed: the real Open MPI case is skipped" % OPENMPI_LIB)
    c.check(re.search(r"^\s+family:\s+MPICH \(integer handles\)$", mpi, re.M),
            "MPI: no MPICH family line:\n%s" % mpi)
    for what, lib in others:
        rc, out, err = info(["--mpi-lib", lib], cwd)
        sec = mpi_section(out)
        c.equal(rc, 0, "%s: exit code" % what)
        c.check(re.search(r"version:\s+Open MPI", sec), "%s: version line:\n%s" % (what, sec))
        if what == "Open MPI stand-in":
            c.check(re.search(r"^\s+family:\s+unknown: tracer knows the handles of MPICH and Open MPI only;",
                              sec, re.M), "%s: not said to be unknown:\n%s" % (what, sec))
            c.check("MPI_T event" not in sec, "%s: MPI_T inspected:\n%s" % (what, sec))
        else:
            c.check(re.search(r"^\s+family:\s+Open MPI \(pointer handles\)$", sec, re.M),
                    "%s: family line:\n%s" % (what, sec))
            c.check("MPI_T: this library offers no MPI_T events interface" in sec,
                    "%s: Open MPI 4.1 has no MPI_T events:\n%s" % (what, sec))
            # The default listing describes every MPI that loads.
            c.check(re.search(r"library:\s+libmpich\.so\.12\n(.*\n)*  library:\s+libmpi\.so\.40\n", mpi),
                    "default listing lacks MPICH or Open MPI:\n%s" % mpi)
    prefix = os.environ.get("OMPI_EVENTS_PREFIX")
    if not prefix:
        c.note("OMPI_EVENTS_PREFIX is not set: Open MPI 6's MPI_T listing is not checked")
        return
    lib = os.path.join(prefix, "lib", "libmpi.so.0")
    rc, out, err = info(["--mpi-lib", lib], cwd)
    sec = mpi_section(out)
    c.equal(rc, 0, "Open MPI 6: exit code")
    c.check(re.search(r"^\s+version:\s+Open MPI v[6-9]\.", sec, re.M), "Open MPI 6: version:\n%s" % sec)
    c.check(re.search(r"^\s+family:\s+Open MPI \(pointer handles\)$", sec, re.M), "Open MPI 6: family:\n%s" % sec)
    c.check(re.search(r"^\s+source \d+: ompi \(ordered, ", sec, re.M), "Open MPI 6: source ompi:\n%s" % sec)
    for name, bind in (("initialization", "none"), ("finalization", "none"), ("communicator_created", "none"),
                       ("communicator_freed", "none"), ("communicator_name_set", "communicator")):
        c.check(re.search(r"^\s+event \d+: ompi\.mpi\.%s \([a-z]+ [a-z]+, bound to %s, " % (name, bind), sec, re.M),
                "Open MPI 6: event type ompi.mpi.%s bound to %s:\n%s" % (name, bind, sec))


def case_d(c, cwd):
    rc, out, err = info(["--config"], cwd, extra={
        "TRACER_DEVICES": "x", "TRACER_DEVICE": "1", "TRACER_MIN_BYTES": "4k"})
    c.equal(rc, 0, "--config: exit code")
    c.equal(err, "", "--config: stderr")
    c.check(out.startswith("configuration (TRACER_* environment variables):\n"),
            "--config prints more than the table: %r" % out[:100])
    c.check("OpenMP:" not in out and "MPI:" not in out, "--config prints other sections")
    c.check(re.search(r"^  TRACER_DEVICES=x  \(environment\)  INVALID: is not all or ", out, re.M),
            "--config: TRACER_DEVICES=x not INVALID:\n%s" % out)
    c.check(re.search(r"^  TRACER_MIN_BYTES=4k  \(environment\)$", out, re.M),
            "--config: TRACER_MIN_BYTES=4k from the environment:\n%s" % out)
    c.check(re.search(r"^  TRACER_ENABLE=1  \(default\)$", out, re.M),
            "--config: TRACER_ENABLE default:\n%s" % out)
    c.check(re.search(r"unknown variable TRACER_DEVICE is ignored; did you mean TRACER_DEVICES\?", out),
            "--config: unknown TRACER_DEVICE not reported:\n%s" % out)
    c.equal(len(re.findall(r"^  TRACER_\w+=", out, re.M)),
            len(re.findall(r"^\| `TRACER_", info(["--config", "--markdown"], cwd)[1], re.M)),
            "--config: one line per variable of the markdown table")

    rc, out, err = info(["--config", "--markdown"], cwd)
    c.equal(rc, 0, "--config --markdown: exit code")
    lines = out.splitlines()
    c.equal(lines[:2], ["| variable | type | default | meaning |", "|---|---|---|---|"],
            "--config --markdown: header")
    for l in lines[2:]:
        c.check(re.fullmatch(r"\| `TRACER_[A-Z_]+` \| [a-z ]+ \| `[^`]*` \| .+ \|", l),
                "--config --markdown: row %r" % l)

    for args in (["--markdown"], ["--bogus"], ["extra"], ["--mpi-lib"]):
        rc, out, err = info(args, cwd)
        x.check_no_signal(c, rc, repr(args))
        c.equal(rc, 2, "%r: exit code" % args)
        c.equal(out, "", "%r: stdout" % args)
        x.check_one_line(c, err, "tracer: info:", repr(args))


def main():
    c = h.Checker("info")
    tmp = tempfile.mkdtemp(prefix="tracer-test-info-")
    try:
        full = case_a(c, tmp)
        case_b(c, tmp, full)
        case_c(c, tmp, full, tmp)
        case_d(c, tmp)
        if c.failures:
            print(full)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
