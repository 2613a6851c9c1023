#!/usr/bin/python3
"""pkg-config: a program built with nothing but
`cc app.c $(pkg-config --cflags --libs tracer)` finds tracer.h, links
libtracer, runs with it, and its trace holds exactly the events it made
(README "Adding your own events").

  a. installed: `meson install --destdir D` of this build; tracer.pc is
     read from D with prefix moved there (`--define-variable=prefix=`);
  b. build tree: PKG_CONFIG_PATH=<build>/meson-uninstalled, which
     pkg-config reads as tracer-uninstalled.pc in place of tracer.pc.

For each: programs/pkgconfig_user.c is compiled with the flags pkg-config
gives (and no others), run with neither LD_LIBRARY_PATH nor LD_PRELOAD
(the rpath of tracer.pc must find the libtracer.so.0 of that install or
build tree: the program prints the one the loader took), exits 0 with its
output, and its archive holds 1 "pc outer" region, 4 "pc inner" regions
and the marks "pc tick" 0, 1, 2, 3 on one thread, each region closed, and
no other user region.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import harness as h  # noqa: E402
from otf2_trace import Trace  # noqa: E402

N = 4


def sh(cmd, cwd, env=None, timeout=300):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def pkg_config(c, what, args, env):
    rc, out, err = sh([h.env_path("TEST_PKG_CONFIG")] + args + ["--cflags", "--libs", "tracer"],
                      None, env)
    if not c.equal(rc, 0, "%s: pkg-config exit code (stderr %r)" % (what, err)):
        return None
    return out.split()


def build_and_run(c, what, flags, want_lib_dir, work):
    src = h.env_path("TEST_PROGRAM_SRC")
    exe = os.path.join(work, "app")
    rc, out, err = sh([h.env_path("TEST_CC"), src, "-o", exe] + flags, work)
    if not c.equal(rc, 0, "%s: cc %s: exit code (stderr %r)" % (what, " ".join(flags), err[-800:])):
        return
    # Sanitizer builds: libtracer needs its runtime first; nothing else is preloaded.
    env = h.base_env()
    env.pop("LD_LIBRARY_PATH", None)
    san = os.environ.get("TEST_SANITIZER_PRELOAD", "")
    if san:
        env["LD_PRELOAD"] = san
    out_dir = os.path.join(work, "trace")
    env["TRACER_OUTPUT"] = out_dir
    rc, out, err = sh([exe], work, env)
    c.equal(rc, 0, "%s: exit code (stderr %r)" % (what, err[-800:]))
    libs = re.findall(r"^libtracer: (.*)$", out, re.M)
    c.equal(len(libs), 1, "%s: libtracer.so loaded (stdout %r)" % (what, out))
    if libs:
        c.equal(os.path.dirname(os.path.realpath(libs[0])), os.path.realpath(want_lib_dir),
                "%s: directory of the libtracer.so the program ran with" % what)
    c.check(out.endswith("pkgconfig_user: ok\n"), "%s: stdout %r" % (what, out))
    c.check("tracer:" not in err, "%s: tracer: lines on stderr: %r" % (what, err[-500:]))
    for marker in h.SANITIZER_MARKERS:
        c.check(marker not in err, "%s: sanitizer report on stderr: %r" % (what, marker))
    anchor = os.path.join(out_dir, "traces.otf2")
    if not c.check(os.path.isfile(anchor), "%s: no trace at %s" % (what, anchor)):
        return
    t = Trace(anchor)
    user = {n: len(t.enters(n)) for n in ("pc outer", "pc inner", "pc tick")}
    c.equal(user, {"pc outer": 1, "pc inner": N, "pc tick": N}, "%s: user regions and marks" % what)
    for n in ("pc outer", "pc inner", "pc tick"):
        c.equal(len(t.leaves(n)), user[n], "%s: leaves of %r" % (what, n))
    ticks = [Trace.attr(ev, "value") for _, ev in t.enters("pc tick")]
    c.equal(ticks, list(range(N)), "%s: values of the marks" % what)
    others = sorted({ev.region.canonical_name for _, ev in t.enters()
                     if ev.region.canonical_name.startswith("pc ")} - set(user))
    c.equal(others, [], "%s: other pc regions" % what)
    c.equal(len({loc for loc, _ in t.enters("pc tick")}), 1, "%s: threads with marks" % what)


def installed(c, tmp):
    dest = os.path.join(tmp, "dest")
    rc, out, err = sh([h.env_path("TEST_MESON"), "install", "-C", h.env_path("TEST_BUILD_ROOT"),
                       "--no-rebuild", "--quiet", "--destdir", dest], tmp)
    if not c.equal(rc, 0, "meson install --destdir: exit code (stderr %r)" % err[-800:]):
        return
    pcs = glob.glob(os.path.join(dest, "**", "pkgconfig", "tracer.pc"), recursive=True)
    if not c.equal(len(pcs), 1, "tracer.pc files installed under %s" % dest):
        return
    prefix = os.environ["TEST_PREFIX"]
    moved = dest + prefix
    headers = glob.glob(os.path.join(moved, "**", "tracer.h"), recursive=True)
    c.equal(len(headers), 1, "tracer.h installed under %s: %r" % (moved, headers))
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pcs[0]), PKG_CONFIG_DISABLE_UNINSTALLED="1")
    flags = pkg_config(c, "installed", ["--define-variable=prefix=" + moved], env)
    if flags is None:
        return
    c.check("-ltracer" in flags, "installed: pkg-config gives no -ltracer: %r" % flags)
    lib_dir = os.path.dirname(os.path.dirname(pcs[0]))
    c.check(os.path.isfile(os.path.join(lib_dir, "libtracer.so.0")),
            "installed: no libtracer.so.0 beside pkgconfig/ in %s" % lib_dir)
    work = tempfile.mkdtemp(prefix="installed-", dir=tmp)
    build_and_run(c, "installed", flags, lib_dir, work)


def build_tree(c, tmp):
    root = h.env_path("TEST_BUILD_ROOT")
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(root, "meson-uninstalled"))
    env.pop("PKG_CONFIG_DISABLE_UNINSTALLED", None)
    flags = pkg_config(c, "build tree", [], env)
    if flags is None:
        return
    work = tempfile.mkdtemp(prefix="build-tree-", dir=tmp)
    build_and_run(c, "build tree", flags, os.path.dirname(h.env_path("TEST_TRACER_LIB")), work)


def main():
    c = h.Checker("pkgconfig")
    if not os.environ.get("TEST_PKG_CONFIG"):
        print("SKIP: pkg-config not found")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="tracer-test-pkgconfig-")
    try:
        installed(c, tmp)
        build_tree(c, tmp)
    finally:
        if os.environ.get("TEST_KEEP"):
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
