#!/usr/bin/env bash
# The Open MPI test set (CI runs it after the README's test command): builds
# build-openmpi/ (scripts/build-openmpi.sh) and runs, under mpirun.openmpi at
# 1-4 ranks, the tests that exercise MPI: the differential random graphs in
# both modes, the Task Bench vectors of mpi, taskgrid and taskgrid_spmd (and
# starpu, built only here), PGAS with Cannon and Minimod, task-aware
# communication, the OpenMP offload plugin, failure detection (lost, stopped
# and failing ranks), the MPI transport (doorbells, arrival counts), the
# start-up checks across ranks, restart after a killed rank, and the
# side-by-side install. The unit tests
# do not touch MPI and run in the MPICH build only. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/build-openmpi.sh
cd "${TASKGRID_OPENMPI_BUILD_DIR:-build-openmpi}"
tests='^(runtime\.differential|taskbench\.(taskgrid|taskgrid_spmd|starpu)\.|taskbench_mpi\.mpi\.|'
tests+='taskbench_starpu\.|runtime\.task_comm\.|pgas\.|install\.|examples\.first_program|offload\.|'
tests+='taskbench\.omp_target\.|runtime\.restart\.(program|helper)\.|comm\.mpi_transport\.|'
tests+='runtime\.error\.(rank|last_rank|finalize_hangs|task_throws|task_segfaults|mpmd_|'
tests+='settings_differ|foreign_launcher|run_))'
ctest --output-on-failure -j 2 --timeout 300 -R "$tests" "$@"
