#!/usr/bin/env bash
# Strong scaling of the minimod programs: taskgrid-minimod (PGAS: put +
# fence + barrier) against taskgrid-minimod-mpi (MPI: Isend/Irecv +
# Waitall) on the same grid, over several rank counts. Prints a markdown
# table of the time per step (the median over the steps of the slowest
# rank's step, as each program reports it) and the ratio PGAS / MPI (below
# 1: PGAS faster), then the halo exchange's lines of code in each program.
#
#   apps/minimod/scaling.sh                       # 128^3, 100 steps, 1, 2 and 4 ranks
#   NX=256 NY=256 NZ=256 RANKS="1 2 4 8" ROUNDS=3 apps/minimod/scaling.sh
#
# Environment:
#   NX NY NZ   the grid (default 128 each)
#   STEPS      time steps per run (default 100)
#   RANKS      rank counts (default "1 2 4")
#   ROUNDS     runs per program and rank count; the median is reported (default 1)
#   BUILD_DIR  where the programs were built (default: build/ in the repository)
#   MPIEXEC    the launcher (default mpiexec.mpich); MPIEXEC_FLAGS extra flags
#   OMP_NUM_THREADS  threads per rank (default 1, so that ranks x threads
#              does not oversubscribe the cores)
#
# The two programs run alternately (PGAS, MPI, PGAS, ...), so that a change
# in the machine's load hits both alike; their checksums must agree.
set -euo pipefail

# shellcheck source=SCRIPTDIR/../scaling_lib.sh
. "$(dirname "$0")/../scaling_lib.sh"
NX=${NX:-128}
NY=${NY:-128}
NZ=${NZ:-128}
STEPS=${STEPS:-100}

find_programs taskgrid-minimod taskgrid-minimod-mpi
ARGS=(--nx "$NX" --ny "$NY" --nz "$NZ" --steps "$STEPS")

echo "grid $NX x $NY x $NZ, $STEPS steps per run, $ROUNDS round(s), OMP_NUM_THREADS=$OMP_NUM_THREADS"
echo
echo "| ranks | PGAS s/step | MPI s/step | PGAS/MPI |"
echo "|------:|------------:|-----------:|---------:|"
for ranks in $RANKS; do
  pgas_times=() mpi_times=()
  for ((round = 0; round < ROUNDS; ++round)); do
    read -r pgas_time pgas_checksum \
      <<< "$(run_values "$ranks" "$PGAS_PROGRAM" "time_per_step_s checksum" "${ARGS[@]}")"
    read -r mpi_time mpi_checksum \
      <<< "$(run_values "$ranks" "$MPI_PROGRAM" "time_per_step_s checksum" "${ARGS[@]}")"
    if [ "$pgas_checksum" != "$mpi_checksum" ]; then
      echo "scaling.sh: at $ranks ranks the checksums differ: PGAS $pgas_checksum, MPI $mpi_checksum" >&2
      exit 1
    fi
    pgas_times+=("$pgas_time")
    mpi_times+=("$mpi_time")
  done
  table_row "$ranks" "${pgas_times[*]}" "${mpi_times[*]}"
done

echo
echo "Halo exchange, non-blank non-comment lines between the markers:"
echo
python3 "$ROOT/apps/minimod/halo_loc.py" | awk '
  $2 == "pgas" { print "- PGAS (put_nb + fence + barrier): " $3 }
  $2 == "mpi" { print "- MPI (Irecv + Isend + Waitall): " $3 }
  $2 == "ratio" { print "- PGAS / MPI: " $3 }'
