#!/usr/bin/env bash
# bench/omp_states_overhead.sh [BUILD_DIR] [REGIONS] [ITERS] - the overhead of
# host OpenMP state tracing (issue 9) on fine-grained parallelism. Not a test.
#
# Runs build/bench/omp_states_overhead (bench/omp_states_overhead.c) for two
# patterns: parallel_for (REGIONS, default 100000, `#pragma omp parallel for`
# regions of ITERS, default 256, iterations) and for_in_parallel (one
# parallel region with REGIONS `#pragma omp for` loops), each in five
# configurations, RUNS times (default 5, env RUNS), interleaved:
#   untraced        no OMPT tool: the runtime's OMPT is off
#   no-op tool      bench/omp_states_noop_tool.c preloaded: the same host
#                   callbacks as tracer, each returning at once
#   host_states off libtracer.so preloaded, TRACER_OMPT=constructs,data_ops,
#                   kernels,link_maps: no host callback registered (nothing is
#                   recorded, so no trace is written)
#   user mode       libtracer.so, TRACER_OMPT=all (default), TRACER_MODE=user
#   machine mode    the same with TRACER_MODE=machine (recording is the same;
#                   only the archive written at exit differs)
# and prints, per pattern, the time per region (per loop) as the program
# measured it around its loop (omp_get_wtime; the archive written at exit is
# not in it): the minimum of the runs (the least disturbed; overheads are
# computed from it) and the median; the cost over the untraced run and over
# the no-op tool; for the traced runs the OTF2 events per region
# (build/bench/trace_count; the warm-up regions are counted as regions); the
# median wall time of the whole process (with the archive write).
# The team is OMP_NUM_THREADS (default: the number of cores, at most 4),
# bound to cores (OMP_PROC_BIND, default true: threads that migrate make the
# times of fine-grained regions scatter); OMP_WAIT_POLICY is left to the
# runtime (active, then passive) unless set.
# On a machine busy with other work the numbers scatter: compare the load
# averages printed before and after.
# With OMP_STATES_BENCH_KV=FILE the results are also written to FILE, one
# line per pattern and configuration: "pattern=P config=C ns_per_region=X
# ns_median=M overhead_ns=D overhead_pct=Q vs_noop_ns=E events_per_region=V".
# Exit status: 0, or 1 when a run failed or a run's check value differs
# from the untraced one.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
regions=${2:-100000}
iters=${3:-256}
runs=${RUNS:-5}
prog=$build/bench/omp_states_overhead
noop=$build/bench/omp_states_noop_tool.so
lib=$build/src/libtracer.so
count=$build/bench/trace_count
for f in "$prog" "$noop" "$lib" "$count"; do
  [[ -e $f ]] || { echo "omp_states_overhead: $f is missing; build first (ninja -C $build)" >&2; exit 1; }
done
nproc=$(nproc)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$((nproc < 4 ? nproc : 4))}
export OMP_PROC_BIND=${OMP_PROC_BIND:-true}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracer-omp-states-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
say() { printf 'omp_states_overhead: %s\n' "$*" >&2; }
kv() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2"; }

patterns=(parallel_for for_in_parallel)
configs=(untraced noop off user machine)
declare -A label=(
  [untraced]="untraced"
  [noop]="no-op OMPT tool"
  [off]="tracer, host_states off"
  [user]="tracer, host states, user mode"
  [machine]="tracer, host states, machine mode"
)
# run_one PATTERN CONFIG I: one run; stdout in $tmp/PATTERN.CONFIG.I.out,
# wall ms in .wall, the trace's event count (first run) in .count
run_one() {
  local pat=$1 cfg=$2 i=$3 out=$tmp/$1.$2.$3
  local -a env=(env)
  case $cfg in
    untraced) ;;
    noop) env+=(LD_PRELOAD="$noop") ;;
    off) env+=(LD_PRELOAD="$lib" TRACER_OUTPUT="$out.trace" TRACER_OMPT=constructs,data_ops,kernels,link_maps) ;;
    user) env+=(LD_PRELOAD="$lib" TRACER_OUTPUT="$out.trace" TRACER_MODE=user) ;;
    machine) env+=(LD_PRELOAD="$lib" TRACER_OUTPUT="$out.trace" TRACER_MODE=machine) ;;
  esac
  local t0 t1
  t0=$(date +%s%N)
  if ! "${env[@]}" "$prog" "$regions" "$iters" "$pat" >"$out.out" 2>"$out.err"; then
    say "run failed: $pat, $cfg (run $i)"
    cat "$out.err" >&2
    return 1
  fi
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000)) >"$out.wall"
  if [[ -d $out.trace ]]; then
    if [[ $i == 1 ]]; then
      "$count" "$out.trace" >"$out.count" 2>/dev/null || echo "otf2_events=?" >"$out.count"
    fi
    rm -rf "$out.trace"
  fi
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
say "$nproc cores, OMP_NUM_THREADS=$OMP_NUM_THREADS, OMP_PROC_BIND=$OMP_PROC_BIND, $regions regions x $iters iterations, $runs runs per pattern and configuration; load average $load_before"
failed=0
for ((i = 1; i <= runs; i++)); do
  for pat in "${patterns[@]}"; do
    for cfg in "${configs[@]}"; do
      run_one "$pat" "$cfg" "$i" || failed=1
    done
  done
done

# stat min|median: of the numbers on stdin
stat() {
  sort -g | awk -v what="$1" '{v[NR] = $1}
    END { if (NR == 0) print "nan"; else if (what == "min") print v[1];
          else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# ns PATTERN CONFIG min|median: ns_per_region of the runs
ns() {
  for f in "$tmp/$1.$2".*.out; do
    [[ -s $f ]] && kv ns_per_region "$(cat "$f")"
  done | stat "$3"
}
calc() { awk "BEGIN { printf \"$1\", $2 }"; }

echo
echo "host OpenMP states overhead - $(date -u +%Y-%m-%d), $nproc cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "OMP_NUM_THREADS=$OMP_NUM_THREADS, OMP_PROC_BIND=$OMP_PROC_BIND, OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-(runtime default)}, $regions regions x $iters iterations, $runs runs each; load average $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after"
[[ -n ${OMP_STATES_BENCH_KV:-} ]] && : >"$OMP_STATES_BENCH_KV"
for pat in "${patterns[@]}"; do
  base=$(ns "$pat" untraced min)
  noop_ns=$(ns "$pat" noop min)
  want=$(kv check "$(cat "$tmp/$pat.untraced.1.out" 2>/dev/null)")
  echo
  if [[ $pat == parallel_for ]]; then
    echo "parallel_for: $regions x '#pragma omp parallel for', $iters iterations each (ns per region)"
  else
    echo "for_in_parallel: one parallel region, $regions x '#pragma omp for', $iters iterations each (ns per loop)"
  fi
  echo
  echo "| configuration | ns/region, min | median | over untraced | over the no-op tool | OTF2 events/region | run wall, ms |"
  echo "|---|---|---|---|---|---|---|"
  for cfg in "${configs[@]}"; do
    v=$(ns "$pat" "$cfg" min)
    med=$(ns "$pat" "$cfg" median)
    for f in "$tmp/$pat.$cfg".*.out; do
      got=$(kv check "$(cat "$f")")
      if [[ $got != "$want" ]]; then
        say "$pat, $cfg: check value $got differs from the untraced $want"
        failed=1
      fi
    done
    d=$(calc '%.0f' "$v - $base")
    pct=$(calc '%.1f' "100 * ($v - $base) / $base")
    dn=$(calc '%.0f' "$v - $noop_ns")
    over="$(calc '%+.0f' "$d") ns ($(calc '%+.1f' "$pct")%)"
    vs_noop="$(calc '%+.0f' "$dn") ns"
    [[ $cfg == untraced ]] && over="-"
    [[ $cfg == untraced || $cfg == noop ]] && vs_noop="-"
    events="-"
    if [[ -f $tmp/$pat.$cfg.1.count ]]; then
      e=$(kv otf2_events "$(cat "$tmp/$pat.$cfg.1.count")")
      # the timed regions, the warm-up (REGIONS/100 + 1) and the first region
      events=$(awk -v e="$e" -v r="$regions" 'BEGIN { if (e == "?") print "?"; else printf "%.1f", e / (r + int(r / 100) + 2) }')
    fi
    wall=$(cat "$tmp/$pat.$cfg".*.wall | stat median)
    printf '| %s | %.0f | %.0f | %s | %s | %s | %s |\n' "${label[$cfg]}" "$v" "$med" "$over" "$vs_noop" "$events" "$wall"
    if [[ -n ${OMP_STATES_BENCH_KV:-} ]]; then
      echo "pattern=$pat config=$cfg ns_per_region=$v ns_median=$med overhead_ns=$d overhead_pct=$pct vs_noop_ns=$dn events_per_region=$events" >>"$OMP_STATES_BENCH_KV"
    fi
  done
done
exit $failed
