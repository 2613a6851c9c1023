"""Helpers shared by test_output_dir.py and test_cli.py (on top of harness).

Environment (set by tests/meson.build):
  USER_API_BIN    programs/user_api.c linked with libtracer (no preload needed)
  OFFLOAD_BIN     an offload program (optional: absent without clang-19)
  TEST_TRACER_CLI      the `tracer` command
"""

import os
import subprocess

import harness as h

USER_API_STDOUT = ("user_api: handles distinct=1 same-name-same-handle=1 null-refused=1\n"
                   "user_api: 2 threads x 100 regions, failures=0\n")

# Variables of tracer that must not leak in from the caller's environment.
TRACER_VARS = ("TRACER_OUTPUT", "TRACER_ENABLE", "TRACER_VERBOSE", "TRACER_CLOCK")


def clean_env(extra=None, preload=False):
    env = h.base_env()
    for k in TRACER_VARS:
        env.pop(k, None)
    if preload:
        env["LD_PRELOAD"] = ":".join(h.preload_list())
    if extra:
        for k, v in extra.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
    return env


def run(cmd, cwd, extra=None, preload=False, umask=None, timeout=120):
    """Run cmd; returns (returncode, stdout str, stderr str).  A timeout is
    returned as returncode None."""
    env = clean_env(extra, preload)
    old = os.umask(umask) if umask is not None else None
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return None, "", "TIMEOUT after %ds" % timeout
    finally:
        if old is not None:
            os.umask(old)


def stderr_lines(err):
    return [l for l in err.splitlines() if l.strip()]


def check_no_sanitizer(c, err, what):
    for marker in h.SANITIZER_MARKERS:
        c.check(marker not in err, "%s: sanitizer report in stderr: %r" % (what, marker))


def check_one_line(c, err, prefix, what):
    """stderr is exactly one non-empty line and it starts with prefix."""
    lines = stderr_lines(err)
    ok = c.check(len(lines) == 1 and lines[0].startswith(prefix),
                 "%s: want exactly one stderr line starting %r, got %r"
                 % (what, prefix, lines[:10]))
    return lines[0] if ok else None


def check_no_signal(c, rc, what):
    c.check(rc is not None, "%s: timed out" % what)
    c.check(rc is None or rc >= 0, "%s: killed by signal %d" % (what, -(rc or 0)))


def snapshot(root):
    """{relative path: (mode, size, mtime_ns, bytes)} of everything under root
    (symlinks recorded by their target, never followed)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isfile(p):
                with open(p, "rb") as f:
                    out[rel] = (st.st_mode, st.st_size, st.st_mtime_ns, f.read())
            else:
                out[rel] = (st.st_mode, st.st_mtime_ns)
    return out
