#!/usr/bin/env bash
# bench/convert_throughput.sh [BUILD_DIR] [EVENTS] - `tracer convert` speed
# and memory on a large synthetic archive. Not a test (tests/test_convert.py
# checks the same archive's conversion against an RSS bound).
#
# Makes the archive with tests/programs/many_events.c (2 threads of nested
# user regions and marks through include/tracer.h, libtracer preloaded),
# about EVENTS OTF2 events (default 10,000,000), then converts it to
# Perfetto (--format perfetto) and to Chrome JSON (--format json), RUNS
# times each (default 3, env RUNS), and prints a table: events, wall time
# (median of the runs), events/s, peak RSS of the converter (the largest
# ru_maxrss of the runs, from wait4) and output size.
# With CONVERT_BENCH_KV=FILE the results are also written to FILE, one line
# per format: "format=F events=N seconds=S events_per_s=R maxrss_kb=K
# output_bytes=B" (bench/run_benchmarks.sh reads it).
# Needs about 1.5 GB in $TMPDIR for 10M events (archive, JSON output).
# Exit status: 0, or 1 when a step failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
events=${2:-10000000}
runs=${RUNS:-3}
tracer=$build/tools/tracer
lib=$build/src/libtracer.so
prog=$build/tests/many_events
for f in "$tracer" "$lib" "$prog"; do
  [[ -e $f ]] || { echo "convert_throughput: $f is missing; build first (ninja -C $build)" >&2; exit 1; }
done
[[ $events =~ ^[0-9]+$ && $events -ge 1000 ]] || { echo "convert_throughput: EVENTS must be a number >= 1000" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracer-convert-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
say() { printf 'convert_throughput: %s\n' "$*" >&2; }

# measured OUT ERR CMD...: runs CMD, stdout to OUT, stderr to ERR; prints
# "wall=S maxrss_kb=K" (the command's own peak RSS, from wait4)
measured() {
  /usr/bin/python3 -I -S -c '
import os, sys, time
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 2)
    os.execv(sys.argv[3], sys.argv[3:])
_, status, ru = os.wait4(pid, 0)
print("wall=%.3f maxrss_kb=%d" % (time.monotonic() - t0, ru.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))' "$@"
}
kv() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2"; }

# Per thread: 2 * (1 + n + ceil(n/4) + ceil(n/100)) events = about 2.52 n;
# 2 threads: about 5.04 n.
n=$(( (events * 100 + 503) / 504 ))
say "making the archive: many_events 2 $n (about $events events)"
t0=$(date +%s.%N)
line=$(cd "$tmp" && TRACER_OUTPUT=$tmp/archive LD_PRELOAD=$lib "$prog" 2 "$n") || {
  echo "convert_throughput: many_events failed: $line" >&2
  exit 1
}
t_make=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
archive_mib=$(du -sm "$tmp/archive" | cut -f1)

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
load=$(cut -d' ' -f1-3 /proc/loadavg)
results=()
kvs=()
for fmt in perfetto json; do
  ext=$([[ $fmt == perfetto ]] && echo pftrace || echo json)
  walls=()
  maxrss=0
  out=$tmp/out.$ext
  for ((r = 1; r <= runs; r++)); do
    rm -f "$out"
    say "$fmt conversion, run $r of $runs"
    m=$(measured "$tmp/convert.out" "$tmp/convert.err" "$tracer" convert --format "$fmt" -o "$out" "$tmp/archive") || {
      echo "convert_throughput: tracer convert --format $fmt failed:" >&2
      cat "$tmp/convert.err" >&2
      exit 1
    }
    walls+=("$(kv wall "$m")")
    rss=$(kv maxrss_kb "$m")
    ((rss > maxrss)) && maxrss=$rss
  done
  conv=$(cat "$tmp/convert.out")
  nev=$(sed -n 's/.*: \([0-9]*\) events,.*/\1/p' <<<"$conv")
  [[ -n $nev ]] || { echo "convert_throughput: unexpected output: $conv" >&2; exit 1; }
  bytes=$(stat -c %s "$out")
  rm -f "$out"
  wall=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  eps=$(awk -v n="$nev" -v w="$wall" 'BEGIN { printf "%.0f", n / w }')
  results+=("$(printf '| %s | %s | %s | %.2fM | %.1f | %.0f |' "$fmt" "$nev" "$wall" \
    "$(awk -v e="$eps" 'BEGIN { print e / 1e6 }')" "$(awk -v k="$maxrss" 'BEGIN { print k / 1024 }')" \
    "$(awk -v b="$bytes" 'BEGIN { print b / 1048576 }')")")
  kvs+=("format=$fmt events=$nev seconds=$wall events_per_s=$eps maxrss_kb=$maxrss output_bytes=$bytes")
  last_conv=$conv
done

echo "tracer convert throughput - $(date -u +%Y-%m-%d), $(nproc) cores, $cpu"
echo "load average at start: $load, at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "archive: ${line#many_events: }; made in $t_make s, $archive_mib MiB"
echo "converter: ${last_conv#converted *(json): }"
base=$(measured /dev/null /dev/null /bin/true)
echo "wall: median of $runs runs; peak RSS: the largest of the runs (ru_maxrss of tracer convert, from"
echo "a forking wrapper whose own image before exec counts too: $(awk -v k="$(kv maxrss_kb "$base")" 'BEGIN { printf "%.1f", k / 1024 }') MiB with /bin/true)"
echo
echo "| format | events | wall, s | events/s | peak RSS, MiB | output, MiB |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${results[@]}"
if [[ -n ${CONVERT_BENCH_KV:-} ]]; then
  printf '%s\n' "${kvs[@]}" >"$CONVERT_BENCH_KV"
fi
