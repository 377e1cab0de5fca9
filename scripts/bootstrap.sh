#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian machine: installs the missing Debian
# packages, the Python tools (in .venv) and builds TaskGrid into build/.
# Used by both README commands; safe to run again (it only does what is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD_DIR=${TASKGRID_BUILD_DIR:-$ROOT/build}
log() { printf '[bootstrap] %s\n' "$*" >&2; }

# --- Debian packages --------------------------------------------------------
DEB_PACKAGES=(build-essential cmake pkg-config mpich libmpich-dev libopenblas-dev
              libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev python3 python3-venv)
missing=()
for pkg in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
for tool in mpicc.mpich mpicxx.mpich mpiexec.mpich; do
  command -v "$tool" >/dev/null || { log "error: $tool not found after installing mpich"; exit 1; }
done

# --- Python tools (METG) ----------------------------------------------------
PYTHON=${PYTHON:-python3}
VENV=$ROOT/.venv
stamp=$VENV/.taskgrid-stamp
want=$(cat tools/metg/pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -x "$VENV/bin/taskgrid-metg" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "installing the METG tool into .venv"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install -q -e "tools/metg[test]"
  echo "$want" > "$stamp"
fi

# --- Build ------------------------------------------------------------------
# MPICH is selected by name: an Open MPI installed beside it owns mpicc/mpiexec.
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  log "configuring $BUILD_DIR"
  cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DMPI_C_COMPILER=mpicc.mpich -DMPI_CXX_COMPILER=mpicxx.mpich \
    -DMPIEXEC_EXECUTABLE="$(command -v mpiexec.mpich)" \
    -DTASKGRID_PYTHON="$VENV/bin/python" >/dev/null
fi
log "building (log: $BUILD_DIR/build.log)"
if ! cmake --build "$BUILD_DIR" -j "$(nproc)" > "$BUILD_DIR/build.log" 2>&1; then
  tail -n 60 "$BUILD_DIR/build.log" >&2
  log "error: the build failed"
  exit 1
fi
grep -E "warning:" "$BUILD_DIR/build.log" >&2 || true
