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

# shellcheck source=SCRIPTDIR/../scaling_lib.sh
. "$(dirname "$0")/../scaling_lib.sh"
N=${N:-2048}
REPS=${REPS:-3}
CHECK=${CHECK:-0}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}

find_programs taskgrid-cannon taskgrid-cannon-mpi
ARGS=(--n "$N" --reps "$REPS")
[ "$CHECK" = 1 ] && ARGS+=(--check)

echo "n $N, $REPS reps per run, $ROUNDS round(s), OMP_NUM_THREADS=$OMP_NUM_THREADS," \
     "OPENBLAS_NUM_THREADS=$OPENBLAS_NUM_THREADS"
echo
echo "| ranks | PGAS s/multiply | MPI s/multiply | PGAS/MPI |"
echo "|------:|----------------:|---------------:|---------:|"
for ranks in $RANKS; do
  pgas_times=() mpi_times=()
  for ((round = 0; round < ROUNDS; ++round)); do
    pgas_times+=("$(run_values "$ranks" "$PGAS_PROGRAM" time_per_multiply_s "${ARGS[@]}")")
    mpi_times+=("$(run_values "$ranks" "$MPI_PROGRAM" time_per_multiply_s "${ARGS[@]}")")
  done
  table_row "$ranks" "${pgas_times[*]}" "${mpi_times[*]}"
done
