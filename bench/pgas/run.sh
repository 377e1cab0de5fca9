#!/usr/bin/env bash
# The PGAS benchmark end to end: taskgrid-pgas-bench at 2 ranks (TaskGrid PGAS
# and raw MPI interleaved in one job), the load average before and after, then
# pgas_report.py; prints table.md. Builds nothing (build the target first).
#
#   bench/pgas/run.sh                          # every section, into pgas-results/
#   bench/pgas/run.sh --out DIR --sections latency --rounds 9
#
# --out DIR (default pgas-results) is where pgas.csv, run.txt (load average and
# TASKGRID_* settings), bench.log, table.md and the plots go; every other
# argument goes to the benchmark.
#
# Environment:
#   BUILD_DIR  where the program was built (default: build/ in the repository)
#   MPIEXEC    the launcher (default mpiexec.mpich); RANKS (default 2)
#   PYTHON     runs the report (default: the repository's .venv, else python3)
#   TASKGRID_* the layer's settings, passed on (TASKGRID_PGAS_SHM=0: no direct
#              copies between ranks of a node)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
RANKS=${RANKS:-2}
if [ -z "${PYTHON:-}" ]; then
  PYTHON=python3
  [ -x "$ROOT/.venv/bin/python" ] && PYTHON=$ROOT/.venv/bin/python
fi

OUT=pgas-results
BENCH_ARGS=()
while [ $# -gt 0 ]; do
  case $1 in
    --out)
      [ $# -ge 2 ] || { echo "run.sh: --out needs a folder" >&2; exit 2; }
      OUT=$2
      shift 2
      ;;
    --csv)
      echo "run.sh: the CSV is always \$OUT/pgas.csv (use --out)" >&2
      exit 2
      ;;
    *)
      BENCH_ARGS+=("$1")
      shift
      ;;
  esac
done

PROGRAM=$BUILD_DIR/bin/taskgrid-pgas-bench
if [ ! -x "$PROGRAM" ]; then
  echo "run.sh: $PROGRAM not found (cmake --build build --target taskgrid-pgas-bench," \
       "or set BUILD_DIR)" >&2
  exit 1
fi
mkdir -p "$OUT"

# The load is part of the result (the ranks share the cores with whatever else
# runs), and so are the layer's settings (TASKGRID_PGAS_SHM=0 takes the MPI path
# between ranks of one node).
{
  echo "load_before $(cat /proc/loadavg)"
  echo "cores $(nproc)"
  echo "env-recorded"
  env | grep '^TASKGRID_' | sort | sed 's/^/env /' || true
} > "$OUT/run.txt"
echo "load before: $(uptime)"

status=0
"$MPIEXEC" -n "$RANKS" "$PROGRAM" "${BENCH_ARGS[@]}" --csv "$OUT/pgas.csv" \
  2>&1 | tee "$OUT/bench.log" || status=$?
echo "load_after $(cat /proc/loadavg)" >> "$OUT/run.txt"
echo "load after:  $(uptime)"
if [ "$status" -ne 0 ]; then
  echo "run.sh: taskgrid-pgas-bench failed (status $status; output in $OUT/bench.log)" >&2
  exit "$status"
fi

"$PYTHON" "$ROOT/bench/pgas/pgas_report.py" "$OUT/pgas.csv" --out "$OUT" \
  --run-info "$OUT/run.txt"
echo
cat "$OUT/table.md"
