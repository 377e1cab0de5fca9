#!/usr/bin/env bash
# Strong scaling of the cannon programs: taskgrid-cannon (PGAS) against
# taskgrid-cannon-mpi (MPI+OpenMP) at the same n, over several rank counts.
# Prints a markdown table of the time per multiply (the median of the reps
# that each program reports) and the ratio PGAS / MPI (below 1: PGAS faster).
#
#   apps/cannon/scaling.sh                 # n 2048 at 1, 2 and 4 ranks
#   N=4096 RANKS="1 2 4 8" ROUNDS=3 apps/cannon/scaling.sh
#
# Environment:
#   N          matrix size (default 2048)
#   RANKS      rank counts (default "1 2 4")
#   REPS       timed multiplies per run, after one warm-up (default 3)
#   ROUNDS     runs per program and rank count; the median is reported (default 1)
#   CHECK      1: pass --check (verification is not timed)
#   BUILD_DIR  where the programs were built (default: build/ in the repository)
#   MPIEXEC    the launcher (default mpiexec.mpich); MPIEXEC_FLAGS extra flags
#   OMP_NUM_THREADS, OPENBLAS_NUM_THREADS  threads per rank (default 1 each,
#              so that ranks x threads does not oversubscribe the cores)
#
# The two programs run alternately (PGAS, MPI, PGAS, ...), so that a change
# in the machine's load hits both alike.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
N=${N:-2048}
RANKS=${RANKS:-"1 2 4"}
REPS=${REPS:-3}
ROUNDS=${ROUNDS:-1}
CHECK=${CHECK:-0}
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
read -r -a MPIEXEC_EXTRA <<< "${MPIEXEC_FLAGS:-}"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}

PGAS_PROGRAM=$BUILD_DIR/bin/taskgrid-cannon
MPI_PROGRAM=$BUILD_DIR/bin/taskgrid-cannon-mpi
for program in "$PGAS_PROGRAM" "$MPI_PROGRAM"; do
  if [ ! -x "$program" ]; then
    echo "scaling.sh: $program not found (build it, or set BUILD_DIR)" >&2
    exit 1
  fi
done
ARGS=(--n "$N" --reps "$REPS")
[ "$CHECK" = 1 ] && ARGS+=(--check)

# Runs one program at $1 ranks; prints its time_per_multiply_s.
time_one() {
  local ranks=$1 program=$2 output
  if ! output=$("$MPIEXEC" -n "$ranks" "${MPIEXEC_EXTRA[@]}" "$program" "${ARGS[@]}" 2>&1); then
    printf '%s\n' "$output" >&2
    echo "scaling.sh: $(basename "$program") failed at $ranks ranks" >&2
    exit 1
  fi
  awk '$1 == "time_per_multiply_s" { print $2 }' <<< "$output"
}

# The median of the numbers on stdin.
median() {
  sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "n $N, $REPS reps per run, $ROUNDS round(s), OMP_NUM_THREADS=$OMP_NUM_THREADS," \
     "OPENBLAS_NUM_THREADS=$OPENBLAS_NUM_THREADS"
echo
echo "| ranks | PGAS s/multiply | MPI s/multiply | PGAS/MPI |"
echo "|------:|----------------:|---------------:|---------:|"
for ranks in $RANKS; do
  pgas_times=() mpi_times=()
  for ((round = 0; round < ROUNDS; ++round)); do
    pgas_times+=("$(time_one "$ranks" "$PGAS_PROGRAM")")
    mpi_times+=("$(time_one "$ranks" "$MPI_PROGRAM")")
  done
  pgas=$(printf '%s\n' "${pgas_times[@]}" | median)
  mpi=$(printf '%s\n' "${mpi_times[@]}" | median)
  awk -v r="$ranks" -v p="$pgas" -v m="$mpi" \
    'BEGIN { printf "| %d | %.4g | %.4g | %.3f |\n", r, p, m, p / m }'
done
