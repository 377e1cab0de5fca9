#!/usr/bin/env bash
# The second build: TaskGrid against Debian's Open MPI (TASKGRID_MPI=openmpi)
# in build-openmpi/, beside the MPICH build in build/. Installs Open MPI and
# StarPU (its Task Bench peer, built against Open MPI) where missing, then
# builds TARGETS (default: everything). Idempotent, like scripts/bootstrap.sh,
# which must have run first (it makes .venv and build/).
#   scripts/build-openmpi.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# shellcheck source=bootstrap.sh
source scripts/bootstrap.sh  # its functions only
BUILD_DIR=${TASKGRID_OPENMPI_BUILD_DIR:-$ROOT/build-openmpi}

install_debian_packages openmpi-bin libopenmpi-dev libstarpu-dev pkg-config
for tool in mpicc.openmpi mpicxx.openmpi mpirun.openmpi; do
  command -v "$tool" >/dev/null || { log "error: $tool not found after installing openmpi-bin"; exit 1; }
done

if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  log "configuring $BUILD_DIR (Open MPI)"
  # The MPICH build installs beside this one in the side-by-side install test.
  # The simulator (SimGrid) does not depend on the MPI: the MPICH build has it.
  cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DTASKGRID_MPI=openmpi \
    -DTASKGRID_SIMGRID=OFF \
    -DTASKGRID_PYTHON="$ROOT/.venv/bin/python" \
    -DTASKGRID_SIDE_BY_SIDE_BUILD="${TASKGRID_BUILD_DIR:-$ROOT/build}" >/dev/null
fi
if (($#)); then
  targets=()
  for target in "$@"; do targets+=(--target "$target"); done
  log "building ${*} in $BUILD_DIR"
  cmake --build "$BUILD_DIR" -j "$(nproc)" "${targets[@]}" >"$BUILD_DIR/build.log" 2>&1 || {
    tail -n 60 "$BUILD_DIR/build.log" >&2
    log "error: the Open MPI build failed"
    exit 1
  }
else
  build_with_progress "$BUILD_DIR" || exit 1
fi
grep -E "warning:" "$BUILD_DIR/build.log" >&2 || true
