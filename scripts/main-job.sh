#!/usr/bin/env bash
# The main job: set-up (bootstrap), then a METG comparison of the Task Bench
# systems on this machine: stencil_1d, one task per core per timestep,
# compute_bound, -iter swept by powers of two. Writes metg-results/
# (metg.csv, metg.json, metg.png) and prints the table. Systems: mpi, mpi_omp,
# omp and the two TaskGrid modes (taskgrid = cluster, taskgrid_spmd = spmd).
# Extra arguments go to taskgrid-metg (e.g. --max-exp 20, --systems mpi,omp).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
CORES=${TASKGRID_CORES:-$(nproc)}
SYSTEMS=${TASKGRID_SYSTEMS:-mpi,mpi_omp,omp,taskgrid,taskgrid_spmd}
echo "== METG comparison: $SYSTEMS on $CORES cores ($(hostname)); load: $(cut -d' ' -f1-3 /proc/loadavg)"
exec .venv/bin/taskgrid-metg --systems "$SYSTEMS" --cores "$CORES" --build-dir build \
  --min-exp 4 --max-exp 18 --out-dir metg-results "$@" \
  -- -type stencil_1d -steps 1000 -width "$CORES" -kernel compute_bound
