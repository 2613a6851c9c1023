#!/usr/bin/env bash
# bench/job_scaling.sh [BUILD_DIR] [MAX_RANKS] - an MPI job's trace as ranks
# grow: the time of MPI_Finalize with TRACER_JOB_WRITE=finalize (where the
# ranks end recording and write the job's archive together), its phases as
# rank 0 saw them, the serial merge of the same journals, the whole job's
# wall time with each TRACER_JOB_WRITE and the last rank's write at exit
# (the default), the files of the archive, and the file-system
# metadata operations on the trace directory (from strace when it is
# installed, for up to 16 ranks). Ranks are oversubscribed on this
# machine's cores. Prints a table; docs/scaling.md quotes it. Not a test.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
max=${2:-64}
lib=$build/src/libtracer.so
prog=$build/bench/mpi_job
events=10000
[[ -x $prog && -f $lib ]] || { echo "job_scaling: build first (ninja -C $build)" >&2; exit 1; }
mpiexec=$(command -v mpiexec.mpich) || { echo "job_scaling: mpiexec.mpich not found" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracer-job-scaling.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cores=$(nproc --all)
export HYDRA_LAUNCHER=fork OMP_NUM_THREADS=1
tracer=$build/tools/tracer
slowest() { awk -F'finalize_s=' '{ if ($2 > m) m = $2 } END { print m }' "$1"; }

echo "tracer job scaling - $(date -u +%Y-%m-%d), $cores cores, $events marks per rank"
echo
echo "MPI_Finalize of the slowest rank: untraced; traced with TRACER_WRITE_AT_END=0 (the"
echo "collective steps: clock offsets, barrier); traced (the ranks write the archive together)."
echo "Phases of the write on rank 0 (TRACER_VERBOSE), ms: events (load, analyse, write its own"
echo "event files, wait for the slowest), unify (reduction tree + broadcast of the definitions),"
echo "local (its local definitions), global (properties, global definitions, anchor)."
echo "serial merge: \`tracer recover\` of the same journals by one process."
echo "job wall: mpiexec's whole run, s, with TRACER_JOB_WRITE=finalize and =exit (the default: the"
echo "last rank to exit writes the archive; its write, ms, from TRACER_VERBOSE)."
echo
echo "| ranks | finalize untraced, s | finalize, no write, s | finalize with write, s | events, ms | unify, ms | local, ms | global, ms | serial merge, s | job wall, finalize, s | job wall, exit, s | exit write, ms | archive files | archive MiB | metadata ops on the trace dir |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for n in 1 2 4 8 16 32 64 128 256; do
  (( n <= max )) || break
  "$mpiexec" -n "$n" "$prog" "$events" >"$tmp/base$n"
  out=$tmp/t$n
  TRACER_OUTPUT=$out TRACER_WRITE_AT_END=0 "$mpiexec" -n "$n" env LD_PRELOAD="$lib" "$prog" "$events" >"$tmp/nw$n"
  t0=$(date +%s.%N)
  "$tracer" recover "$out" >/dev/null
  merge=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  files=$(find "$out" -type f ! -path '*/journals/*' | wc -l)
  mib=$(du -sm --exclude=journals "$out" | cut -f1)
  rm -rf "$out"
  t0=$(date +%s.%N)
  TRACER_OUTPUT=$out TRACER_VERBOSE=1 TRACER_JOB_WRITE=finalize "$mpiexec" -n "$n" env LD_PRELOAD="$lib" "$prog" \
    "$events" >"$tmp/w$n" 2>"$tmp/we$n"
  wall_fin=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
  phases=$(sed -n 's/.*ms: events \([0-9.]*\), unification \([0-9.]*\), local definitions \([0-9.]*\), global definitions \([0-9.]*\).*/\1 | \2 | \3 | \4/p' "$tmp/we$n")
  rm -rf "$out"
  t0=$(date +%s.%N)
  TRACER_OUTPUT=$out TRACER_VERBOSE=1 "$mpiexec" -n "$n" env LD_PRELOAD="$lib" "$prog" "$events" >/dev/null \
    2>"$tmp/xe$n"
  wall_exit=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
  exit_ms=$(sed -n 's/.*the last to exit, in \([0-9.]*\) ms.*/\1/p' "$tmp/xe$n")
  rm -rf "$out"
  ops="-"
  if (( n <= 16 )) && command -v strace >/dev/null; then
    TRACER_OUTPUT=$out TRACER_JOB_WRITE=finalize strace -f -qq -o "$tmp/strace$n" \
      -e trace=openat,mkdir,mkdirat,rename,renameat,renameat2,unlink,unlinkat,rmdir \
      "$mpiexec" -n "$n" env LD_PRELOAD="$lib" "$prog" "$events" >/dev/null
    ops=$(grep -c "$out" "$tmp/strace$n" || true)
    rm -rf "$out"
  fi
  printf '| %s | %s | %s | %s | %s | %.3f | %s | %s | %s | %s | %s | %s |\n' "$n" "$(slowest "$tmp/base$n")" \
    "$(slowest "$tmp/nw$n")" "$(slowest "$tmp/w$n")" "${phases:-? | ? | ? | ?}" "$merge" "$wall_fin" "$wall_exit" \
    "${exit_ms:-?}" "$files" "$mib" "$ops"
done
