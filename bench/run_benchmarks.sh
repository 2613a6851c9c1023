#!/usr/bin/env bash
# bench/run_benchmarks.sh [BUILD_DIR] - runs every benchmark in bench/, checks
# that the block-mode floods lost nothing, and prints one table of results.
#
#   1. recording cost: build/bench/record_cost, with the default pool
#      (sustained, throttled by the journal writer) and --fit-run (a whole run
#      fits in buffer memory: the hot path alone)
#   2. sustained throughput, block mode, TRACER_MAX_MEMORY=16M, 20M events
#      (1 thread; 2 threads x 10M): events/s, then the trace is read back
#      with build/bench/trace_count: marks == emitted, values 0,1,2,... on
#      every thread with no gap
#   3. journal bytes per event (TRACER_KEEP_JOURNAL=1): the 1-thread flood,
#      and build/examples/offload_demo under LD_PRELOAD
#   4. journal -> OTF2: `tracer recover --force` on the flood's journal
#   5. peak memory of the 1-thread flood for TRACER_MAX_MEMORY = 4M, 16M,
#      64M (TRACER_BUFFER_SIZE the same) and TRACER_ENABLE=0, whose flood
#      also gives the cost of a call when tracing is off
#   6. the MPI_T event callback (build/bench/mpit_callback, events from the
#      MPI_T provider test double): ns per event over a no-op callback
#   7. `tracer convert` of a 10M-event archive to Perfetto and to JSON
#      (bench/convert_throughput.sh): events/s and peak RSS of the converter
#   8. host OpenMP states (bench/omp_states_overhead.sh): ns per fine-grained
#      parallel region untraced, with a no-op OMPT tool, and with tracer's
#      host states off and on
#   9. target-dense offload (bench/target_overhead.py, issue 19): 100000
#      target regions untraced, under an empty OMPT tool and under tracer
#      (target classes; defaults; defaults with TRACER_WRITE_AT_END=0), as
#      ratios: loop, whole run, peak RSS
#  10. the end of a run as it grows (bench/target_scaling.py, issue 19): the
#      fixed cost of a 20-region traced run, and wall time and peak RSS at
#      20000 and 200000 regions against the bound untraced +
#      TRACER_MAX_MEMORY + 64 MiB
#  11. issue 33's goals, each figure beside its target in one table
#      (bench/goals.py: journal -> OTF2 on one core and with writing
#      threads, the target-dense whole run and loop, sustained recording)
# Takes about 4 minutes on a 2-core VM; needs about 3 GB of memory (the OTF2
# conversion of 20M events, see the table) and 1 GB in $TMPDIR (step 7:
# about 1.5 GB more, while it runs).
# Numbers depend on what else runs: the load average is printed first.
# Exit status: 0, or 1 when a check failed (the table says which).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
bench=$build/bench
tracer=$build/tools/tracer
for f in "$bench/record_cost" "$bench/throughput" "$bench/trace_count" "$tracer"; do
  [[ -x $f ]] || { echo "run_benchmarks: $f is missing; build first (ninja -C $build)" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracer-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
say() { printf 'bench: %s\n' "$*" >&2; }
failed=0
rows=()
row() { rows+=("$(printf '%s\t%s\t%s' "$1" "$2" "$3")"); }
# kv KEY LINE: the value of KEY=value in LINE
kv() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2"; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }

# timed OUTFILE ENV... CMD...: runs CMD with stdout to OUTFILE; its wall
# seconds and max RSS (KiB, the whole process including the OTF2 write at
# exit, from wait4) go to OUTFILE.time
timed() {
  local out=$1
  shift
  /usr/bin/python3 -c '
import os, sys, time
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    os.execvp("env", ["env"] + sys.argv[2:])
_, status, ru = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write("wall=%.2f maxrss_kb=%d\n" % (time.monotonic() - t0, ru.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))' "$out.time" "$@" >"$out" 2>"$out.err" || {
    echo "run_benchmarks: failed: $*" >&2
    cat "$out.err" >&2
    return 1
  }
}

# journal_stats DIR: file bytes, CHUNK frame bytes (headers included), and
# the records they hold (a chunk flushed early and again when full is counted
# once, as readers do: same location and seq).
journal_stats() {
  /usr/bin/python3 - "$1/tracer.journal" <<'PY'
import os, struct, sys
path = sys.argv[1]
size = os.path.getsize(path)
chunks, chunk_bytes, raw = {}, 0, 0
with open(path, "rb") as f:
    while True:
        h = f.read(64)
        if len(h) < 64:
            break
        magic, ver, typ, hcrc, pcrc, pbytes, rbytes, loc, tid, seq, recs, flags, res = \
            struct.unpack("<IHHIIQQIIQIIQ", h)
        if magic != 0x4d465254:
            sys.exit("journal_stats: bad frame magic at %d" % (f.tell() - 64))
        f.seek(pbytes, 1)
        if typ == 2:
            chunk_bytes += 64 + pbytes
            raw += rbytes
            chunks[(loc, seq)] = max(chunks.get((loc, seq), 0), recs)
print("journal_bytes=%d chunk_bytes=%d records=%d raw_bytes=%d" % (size, chunk_bytes, sum(chunks.values()), raw))
PY
}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
load=$(cut -d' ' -f1-3 /proc/loadavg)
say "machine: $(nproc) cores, $cpu; load average $load"

# --- 1. recording cost ---------------------------------------------------------
say "1/5 recording cost (record_cost, default pool, then --fit-run)"
TRACER_OUTPUT=$tmp/rc1 "$bench/record_cost" >"$tmp/rc1.out"
TRACER_OUTPUT=$tmp/rc2 "$bench/record_cost" --fit-run >"$tmp/rc2.out"
rm -rf "$tmp/rc1" "$tmp/rc2"
# rc_ns FILE PATTERN: the number before "ns" on the line matching PATTERN
rc_ns() { grep -E "$2" "$1" | head -1 | sed -E 's/.* ([0-9.]+) ns.*/\1/'; }
rc_flt() { grep -E "$2" "$1" | head -1 | sed -E 's/.* ([0-9.]+) minor faults.*/\1/'; }
for mode in "rc1 default pool 64M, block (sustained)" "rc2 --fit-run: a run fits in memory"; do
  f=$tmp/${mode%% *}.out
  label=${mode#* }
  row "tracer_mark ns/event, 1 thread" "$label" \
    "$(rc_ns "$f" '1 thread  ') ns ($(rc_flt "$f" '1 thread  ') faults/1000 ev)"
  row "tracer_mark ns/event, 2 threads" "$label" \
    "$(rc_ns "$f" 'thread 1') / $(rc_ns "$f" 'thread 2') ns per thread; $(rc_ns "$f" 'together') ns wall/event ($(rc_flt "$f" 'together') faults/1000 ev)"
  row "region begin+end ns/record, 1 thread" "$label" "$(rc_ns "$f" 'begin\+end') ns"
done
row "clock read alone" "rdtsc / clock_gettime" \
  "$(rc_ns "$tmp/rc2.out" 'rdtsc') / $(rc_ns "$tmp/rc2.out" 'clock_gettime') ns"

# --- 2. throughput, checked ------------------------------------------------------
say "2/5 sustained throughput, block mode, TRACER_MAX_MEMORY=16M, 20M events (+ read back)"
flood() { # flood NAME THREADS EVENTS_PER_THREAD ENV...
  local name=$1 threads=$2 n=$3
  shift 3
  timed "$tmp/$name.out" TRACER_OUTPUT="$tmp/$name" TRACER_KEEP_JOURNAL=1 "$@" \
    "$bench/throughput" "$threads" "$n"
}
for t in 1 2; do
  n=$((20000000 / t))
  flood "tp$t" "$t" "$n" TRACER_MAX_MEMORY=16M
  line=$(cat "$tmp/tp$t.out")
  count=$("$bench/trace_count" "$tmp/tp$t")
  ok="ok"
  if [[ $(kv marks "$count") != $(kv events "$line") || $(kv in_order "$count") != 1 ||
        $(kv locations "$count") != "$t" || $(kv refused "$line") != 0 ]]; then
    ok="CHECK FAILED: emitted $(kv events "$line"), trace: $count"
    failed=1
  fi
  row "sustained events/s, block, $t thread$([[ $t == 1 ]] || echo s)" "TRACER_MAX_MEMORY=16M, 20M events" \
    "$(calc '%.1f' "$(kv events_per_s "$line") / 1e6")M/s ($(kv seconds "$line") s); trace has $(kv marks "$count") marks: $ok"
done

# --- 3. journal bytes per event ----------------------------------------------------
say "3/5 journal bytes per event (flood journal; offload_demo)"
js=$(journal_stats "$tmp/tp1")
cnt=$("$bench/trace_count" "$tmp/tp1")
row "journal bytes per event" "marks, incrementing values (1-thread flood)" \
  "$(calc '%.2f' "$(kv journal_bytes "$js") / $(kv records "$js")") B/record ($(kv records "$js") records, $(calc '%.1f' "$(kv journal_bytes "$js") / 1048576") MiB; raw 64 B/record)"
otf2_kib=$(du -sk "$tmp/tp1/traces" "$tmp/tp1/traces.def" "$tmp/tp1/traces.otf2" | awk '{s += $1} END {print s}')
row "OTF2 archive bytes per event" "same run" \
  "$(calc '%.1f' "$otf2_kib * 1024 / $(kv records "$js")") B/mark ($(calc '%.0f' "$otf2_kib / 1024") MiB; 2 OTF2 events per mark)"
demo=$build/examples/offload_demo
if [[ -x $demo ]]; then
  (cd "$tmp" && TRACER_OUTPUT=$tmp/demo TRACER_KEEP_JOURNAL=1 OMP_TARGET_OFFLOAD=MANDATORY \
    LD_PRELOAD=$build/src/libtracer.so "$demo" >"$tmp/demo.out" 2>&1) || {
    row "journal bytes per event" "offload_demo" "FAILED: $(tail -1 "$tmp/demo.out")"
    failed=1
  }
  if [[ -f $tmp/demo/tracer.journal ]]; then
    js=$(journal_stats "$tmp/demo")
    cnt=$("$bench/trace_count" "$tmp/demo")
    row "journal bytes per event" "offload_demo (OMPT events, whole journal)" \
      "$(kv journal_bytes "$js") B / $(kv records "$js") records = $(calc '%.1f' "$(kv journal_bytes "$js") / $(kv records "$js")") B/record; $(calc '%.1f' "$(kv journal_bytes "$js") / $(kv otf2_events "$cnt")") B/OTF2 event ($(kv otf2_events "$cnt") events)"
    row "journal bytes per event" "offload_demo (CHUNK frames only)" \
      "$(calc '%.1f' "$(kv chunk_bytes "$js") / $(kv records "$js")") B/record (the rest: start, names, symbols, clock frames)"
  fi
else
  row "journal bytes per event" "offload_demo" "skipped: $demo not built"
fi

# --- 4. journal -> OTF2 conversion ------------------------------------------------
say "4/5 tracer recover --force on the 20M-event journal"
timed "$tmp/recover.out" "$tracer" recover --force "$tmp/tp1"
rt=$(cat "$tmp/recover.out.time")
row "journal -> OTF2 (tracer recover)" "20M marks = 40M OTF2 events, 1 thread" \
  "$(kv wall "$rt") s = $(calc '%.2f' "20 / $(kv wall "$rt")")M marks/s ($(calc '%.2f' "40 / $(kv wall "$rt")")M OTF2 events/s), max RSS $(calc '%.0f' "$(kv maxrss_kb "$rt") / 1024") MiB"
tt=$(cat "$tmp/tp1.out.time")
row "at-exit OTF2 write of the same run" "wall of the run - flood time" \
  "$(calc '%.1f' "$(kv wall "$tt") - $(kv seconds "$(cat "$tmp/tp1.out")")") s"
rm -rf "$tmp/tp2"

# --- 5. peak memory ---------------------------------------------------------------
# One thread may hold at most TRACER_BUFFER_SIZE (default 4M) of the pool, so
# with one thread and the default the pool size hardly matters (the 16M run
# above shows it); here TRACER_BUFFER_SIZE = TRACER_MAX_MEMORY, so that the
# pool is the limit.
say "5/5 peak memory of the 1-thread 20M-event flood for TRACER_MAX_MEMORY = 4M, 16M, 64M; TRACER_ENABLE=0"
for m in 4M 16M 64M; do
  flood "mem$m" 1 20000000 TRACER_MAX_MEMORY=$m TRACER_BUFFER_SIZE=$m
  rm -rf "$tmp/mem$m"
done
flood off 1 20000000 TRACER_ENABLE=0
flood off2 2 10000000 TRACER_ENABLE=0
for t in 1 2; do
  line=$(cat "$tmp/off$([[ $t == 1 ]] || echo 2).out")
  row "tracer_mark ns/call with TRACER_ENABLE=0" "$t thread$([[ $t == 1 ]] || echo s), 20M calls" \
    "$(calc '%.1f' "1e9 * $t / $(kv events_per_s "$line")") ns per call per thread"
done
for m in "off TRACER_ENABLE=0 (baseline)" "tp1 TRACER_MAX_MEMORY=16M, TRACER_BUFFER_SIZE=4M (default)" \
  "mem4M TRACER_MAX_MEMORY=TRACER_BUFFER_SIZE=4M" "mem16M TRACER_MAX_MEMORY=TRACER_BUFFER_SIZE=16M" \
  "mem64M TRACER_MAX_MEMORY=TRACER_BUFFER_SIZE=64M"; do
  name=${m%% *}
  line=$(cat "$tmp/$name.out")
  tm=$(cat "$tmp/$name.out.time")
  row "peak memory, 1-thread 20M flood" "${m#* }" \
    "VmHWM $(calc '%.1f' "$(kv vmhwm_kb "$line") / 1024") MiB while recording ($(calc '%.1f' "$(kv events_per_s "$line") / 1e6")M ev/s); max RSS $(calc '%.0f' "$(kv maxrss_kb "$tm") / 1024") MiB with the OTF2 write at exit"
done

# --- 6. MPI_T event callback ----------------------------------------------------------
# Events from the MPI_T provider TEST DOUBLE (no Debian MPI raises any): one
# registration each way, so the double's delivery costs the same; tracer's
# callback = (tracer's registration) - (a callback that does nothing).
double_lib=$build/tests/mpit_double/libmpit_double.so
if [[ -x $bench/mpit_callback && -f $double_lib ]]; then
  for ev in ompi.mpi.communicator_created double.weird; do
    say "MPI_T callback: $ev"
    t_line=$(TRACER_MPIT_EVENTS=$ev TRACER_OUTPUT=$tmp/mpit-$ev LD_PRELOAD=$build/src/libtracer.so:$double_lib \
      "$bench/mpit_callback" "$ev" 200000 9 2>&1 | grep '^mpit_callback' || true)
    n_line=$(LD_PRELOAD=$double_lib "$bench/mpit_callback" noop "$ev" 200000 9 2>&1 | grep '^mpit_callback' || true)
    if [[ -z $t_line || -z $n_line ]]; then
      row "MPI_T callback ns/event" "$ev" "FAILED"
      failed=1
      continue
    fi
    t=$(kv ns_per_raise_median "$t_line")
    n=$(kv ns_per_raise_median "$n_line")
    row "MPI_T callback ns/event" "$ev (test double; median of 9 x 200k)" \
      "$(calc '%.0f' "$t - $n") ns (raise with tracer $t ns, with a no-op callback $n ns)"
  done
else
  row "MPI_T callback ns/event" "-" "skipped: mpit_callback or the MPI_T test double not built"
fi

# --- 7. tracer convert --------------------------------------------------------------------
say "7 tracer convert of a 10M-event archive to Perfetto and JSON (bench/convert_throughput.sh)"
if RUNS=1 CONVERT_BENCH_KV=$tmp/convert.kv "$root/bench/convert_throughput.sh" "$build" 10000000 \
  >"$tmp/convert.table" 2>"$tmp/convert.err"; then
  while read -r line; do
    row "tracer convert, $(kv format "$line")" "$(kv events "$line") events (many_events, 2 threads)" \
      "$(calc '%.2f' "$(kv events_per_s "$line") / 1e6")M events/s ($(kv seconds "$line") s), peak RSS $(calc '%.1f' "$(kv maxrss_kb "$line") / 1024") MiB, output $(calc '%.0f' "$(kv output_bytes "$line") / 1048576") MiB"
  done <"$tmp/convert.kv"
else
  row "tracer convert" "10M events" "FAILED: $(tail -1 "$tmp/convert.err")"
  failed=1
fi

# --- 8. host OpenMP states ---------------------------------------------------------------
say "8 host OpenMP states overhead on fine-grained parallel loops (bench/omp_states_overhead.sh)"
if [[ -x $bench/omp_states_overhead ]]; then
  if RUNS=3 OMP_STATES_BENCH_KV=$tmp/omp_states.kv "$root/bench/omp_states_overhead.sh" "$build" \
    >"$tmp/omp_states.table" 2>"$tmp/omp_states.err"; then
    while read -r line; do
      [[ $(kv config "$line") == untraced ]] && continue
      row "host OpenMP states, $(kv pattern "$line")" "$(kv config "$line") (100000 regions, min of 3 runs)" \
        "$(kv ns_per_region "$line") ns/region: $(kv overhead_ns "$line") ns ($(kv overhead_pct "$line")%) over untraced, $(kv vs_noop_ns "$line") ns over a no-op OMPT tool"
    done <"$tmp/omp_states.kv"
  else
    row "host OpenMP states" "100000 regions" "FAILED: $(tail -1 "$tmp/omp_states.err")"
    failed=1
  fi
else
  row "host OpenMP states" "-" "skipped: $bench/omp_states_overhead not built (no clang-19)"
fi

# --- 9. target-dense offload -------------------------------------------------------
say "9 target-dense offload overhead, side by side (bench/target_overhead.py)"
if [[ -x $bench/target_dense ]]; then
  if ROUNDS=5 TARGET_BENCH_KV=$tmp/target.kv /usr/bin/python3 "$root/bench/target_overhead.py" "$build" 100000 \
    >"$tmp/target.table" 2>"$tmp/target.err"; then
    while read -r line; do
      [[ $(kv config "$line") == untraced ]] && continue
      row "target-dense offload, $(kv config "$line")" "100000 regions, 1 int tofrom each, medians of 5 rounds" \
        "loop $(kv loop_vs_untraced "$line")x untraced, $(kv loop_vs_noop "$line")x the empty OMPT tool ($(kv loop_vs_noop_thread "$line")x with a sleeping thread); whole run $(kv whole_vs_untraced "$line")x untraced; peak RSS $(kv rss_mb "$line") MB"
    done <"$tmp/target.kv"
  else
    row "target-dense offload" "100000 regions" "FAILED: $(tail -1 "$tmp/target.err")"
    failed=1
  fi
else
  row "target-dense offload" "-" "skipped: $bench/target_dense not built (no clang-19)"
fi

# --- 10. the end of a run as it grows ------------------------------------------------
say "10 fixed cost and memory at exit as the run grows (bench/target_scaling.py)"
if [[ -x $bench/target_dense ]]; then
  if /usr/bin/python3 "$root/bench/target_scaling.py" "$build" >"$tmp/scaling.table" 2>"$tmp/scaling.err"; then
    row "end of run, short program" "20 target regions, medians of 11 rounds" \
      "$(sed -n 's/^fixed cost, [^:]*: //p' "$tmp/scaling.table")"
    while IFS='|' read -r _ n _ _ ratio _ rss bound _; do
      [[ $n =~ ^\ [0-9]+\ $ ]] || continue
      row "end of run, target-dense" "${n// /} regions, TRACER_MAX_MEMORY=16M" \
        "whole run ${ratio// /}x untraced; peak RSS ${rss// /} MB, bound ${bound# }"
    done <"$tmp/scaling.table"
  else
    row "end of run" "target_scaling.py" "FAILED: $(tail -1 "$tmp/scaling.err")"
    failed=1
  fi
else
  row "end of run" "-" "skipped: $bench/target_dense not built (no clang-19)"
fi

# --- 11. issue 33's goals --------------------------------------------------------
say "11 issue 33's goals (bench/goals.py)"
if [[ -x $bench/target_dense && -x $bench/writer_stages ]]; then
  if ! ROUNDS=5 /usr/bin/python3 "$root/bench/goals.py" "$build" >"$tmp/goals.table" 2>"$tmp/goals.err"; then
    row "issue 33 goals" "bench/goals.py" "FAILED: $(tail -1 "$tmp/goals.err")"
    failed=1
  fi
else
  row "issue 33 goals" "-" "skipped: $bench/target_dense or writer_stages not built (no clang-19)"
fi

# --- the table ----------------------------------------------------------------------
echo
echo "tracer benchmarks - $(date -u +%Y-%m-%d), $(nproc) cores, $cpu"
echo "load average at start: $load, at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| benchmark | setting | result |"
echo "|---|---|---|"
for r in "${rows[@]}"; do
  IFS=$'\t' read -r a b c <<<"$r"
  echo "| $a | $b | $c |"
done
echo
if [[ -s $tmp/goals.table ]]; then
  sed -n '/^issue 33 goals/,$p' "$tmp/goals.table"
  echo
fi
if [[ -s $tmp/target.table ]]; then
  echo "target-dense offload (bench/target_overhead.py):"
  sed 's/^/    /' "$tmp/target.table"
fi
if [[ -s $tmp/scaling.table ]]; then
  echo "end of run as it grows (bench/target_scaling.py):"
  sed 's/^/    /' "$tmp/scaling.table"
fi
echo "record_cost, default pool:"
sed 's/^/    /' "$tmp/rc1.out"
echo "record_cost --fit-run:"
sed 's/^/    /' "$tmp/rc2.out"
exit $failed
