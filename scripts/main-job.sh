#!/usr/bin/env bash
# The main job: set-up (bootstrap), then a METG comparison of the Task Bench
# systems on this machine: stencil_1d, one task per core per timestep,
# compute_bound, -iter swept by powers of two. Writes metg-results/
# (metg.csv, metg.json, metg.png) and prints the table. Systems: mpi, mpi_omp,
# omp, the two TaskGrid modes (taskgrid = cluster, taskgrid_spmd = spmd) and,
# where clang-16 built it, omp_target (OpenMP target regions on the other ranks);
# from the Open MPI build (scripts/build-openmpi.sh, build-openmpi/), mpi,
# taskgrid_spmd and taskgrid again (NAME@openmpi) and StarPU-MPI (starpu), so
# that each TaskGrid mode is compared with the mpi baseline of its own MPI and
# with a peer runtime in the same interleaved run.
# Extra arguments go to taskgrid-metg (e.g. --max-exp 20, --systems mpi,omp).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
CORES=${TASKGRID_CORES:-$(nproc)}
DEFAULT_SYSTEMS=mpi,mpi_omp,omp,taskgrid,taskgrid_spmd
# Task Bench on OpenMP target regions, through TaskGrid's offload plugin (built
# where clang-16 is; rank 0 runs the program, the other ranks are its devices).
# --host-not-charged: omp_target is charged for its device ranks' cores only,
# as the MPP's figures are; charged for rank 0 too, its efficiency tops out at
# (N-1)/N and on 2 cores its 50% point sits on that plateau (tools/metg/README.md).
if [ -x build/bin/taskbench-omp_target ]; then DEFAULT_SYSTEMS+=,omp_target; fi
# The Open MPI systems: built here where Open MPI and StarPU install; without
# them the comparison runs on MPICH alone and says so.
OPENMPI_TARGETS=(taskbench-mpi taskbench-taskgrid taskbench-taskgrid_spmd taskbench-starpu)
if scripts/build-openmpi.sh "${OPENMPI_TARGETS[@]}"; then
  DEFAULT_SYSTEMS+=,mpi@openmpi,taskgrid_spmd@openmpi,taskgrid@openmpi
  if [ -x build-openmpi/bin/taskbench-starpu ]; then DEFAULT_SYSTEMS+=,starpu; fi
else
  echo "warning: no Open MPI build (scripts/build-openmpi.sh failed): MPICH systems only" >&2
fi
SYSTEMS=${TASKGRID_SYSTEMS:-$DEFAULT_SYSTEMS}
echo "== METG comparison: $SYSTEMS on $CORES cores ($(hostname)); load: $(cut -d' ' -f1-3 /proc/loadavg)"
exec .venv/bin/taskgrid-metg --systems "$SYSTEMS" --cores "$CORES" --build-dir build \
  --min-exp 4 --max-exp 18 --out-dir metg-results --host-not-charged "$@" \
  -- -type stencil_1d -steps 1000 -width "$CORES" -kernel compute_bound
