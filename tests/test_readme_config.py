#!/usr/bin/python3
"""The README's configuration table is exactly `tracer info --config
--markdown`: the lines between `<!-- tracer-config-table:begin -->` and
`<!-- tracer-config-table:end -->`, byte for byte. When this fails, paste the
command's output into README.md (the table in src/core/config_table.c is
the source)."""
import os
import subprocess
import sys

BEGIN = "<!-- tracer-config-table:begin -->\n"
END = "<!-- tracer-config-table:end -->\n"


def main():
    cli = os.environ.get("TEST_TRACER_CLI")
    readme = os.environ.get("TEST_README")
    if not cli or not readme:
        sys.exit("TEST_TRACER_CLI / TEST_README are not set (run through meson test)")
    with open(readme, "rb") as f:
        text = f.read().decode("utf-8")
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        print("FAIL: %s must hold one %r line followed by one %r line"
              % (readme, BEGIN.strip(), END.strip()))
        sys.exit(1)
    block = text[text.index(BEGIN) + len(BEGIN):text.index(END)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRACER_")}
    p = subprocess.run([cli, "info", "--config", "--markdown"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        print("FAIL: tracer info --config --markdown: exit %d: %s"
              % (p.returncode, p.stderr.decode(errors="replace")))
        sys.exit(1)
    table = p.stdout.decode("utf-8")
    if block != table:
        import difflib
        print("FAIL: README.md's configuration table differs from `tracer info --config --markdown`:")
        sys.stdout.writelines(difflib.unified_diff(block.splitlines(True), table.splitlines(True),
                                                   "README.md", "tracer info --config --markdown"))
        sys.exit(1)
    print("readme_config: OK")


if __name__ == "__main__":
    main()
