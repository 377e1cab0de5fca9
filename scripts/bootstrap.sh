#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian machine: installs the missing Debian
# packages, the Python tools (in .venv) and builds TaskGrid into build/.
# Used by both README commands; safe to run again (it only does what is missing).

# The build goes to build.log; this turns its step lines into a few progress lines
# on stderr, so that a build of several minutes shows what it is doing:
#   [bootstrap] building: 27% src/engine/engine.cpp          (Unix Makefiles)
#   [bootstrap] building: 57/212 (27%) src/engine/engine.cpp  (Ninja)
# A line is shown for the first step, then at each new 10% and at least every
# TASKGRID_BOOTSTRAP_PROGRESS_SECONDS seconds (30) while steps arrive. Only compile and link
# steps count, so an up-to-date build ("Built target ...") shows nothing.
build_progress() {
  local interval=${TASKGRID_BOOTSTRAP_PROGRESS_SECONDS:-30} line re_make re_ninja
  local percent step what shown=-1 last=$SECONDS
  re_make='^\[ *([0-9]+)%\] (Building|Linking) [A-Za-z]+ [a-z ]*(object|executable|library) (.*)$'
  re_ninja='^\[([0-9]+)/([0-9]+)\] (Building|Linking) [A-Za-z]+ [a-z ]*(object|executable|library) (.*)$'
  while IFS= read -r line || [[ -n $line ]]; do
    if [[ $line =~ $re_make ]]; then
      percent=${BASH_REMATCH[1]} step="$percent%" what=${BASH_REMATCH[4]}
    elif [[ $line =~ $re_ninja ]]; then
      percent=$((100 * BASH_REMATCH[1] / BASH_REMATCH[2]))
      step="${BASH_REMATCH[1]}/${BASH_REMATCH[2]} ($percent%)" what=${BASH_REMATCH[5]}
    else
      continue
    fi
    if ((shown < 0 || percent / 10 > shown / 10 || SECONDS - last >= interval)); then
      printf '[bootstrap] building: %s %s\n' "$step" "$(step_name "$what")" >&2
      shown=$percent last=$SECONDS
    fi
  done
}

# src/CMakeFiles/taskgrid.dir/engine/engine.cpp.o -> src/engine/engine.cpp (the source);
# ../bin/taskbench-mpi -> linking taskbench-mpi.
step_name() {
  local what=$1
  if [[ $what == *CMakeFiles/*.dir/*.o ]]; then
    what=${what%.o}
    printf '%s\n' "${what%%CMakeFiles/*}${what#*CMakeFiles/*.dir/}"
  else
    printf 'linking %s\n' "${what##*/}"
  fi
}

log() { printf '[bootstrap] %s\n' "$*" >&2; }

# cmake --build DIR with the whole output in DIR/build.log and progress lines on
# stderr; a failed build shows the log's tail and returns 1. Quiet when up to date.
build_with_progress() {
  local dir=$1 started=$SECONDS took
  local -  # pipefail for this function only: the status is the build's, not the filter's
  set -o pipefail
  log "building (log: $dir/build.log)"
  if ! cmake --build "$dir" -j "$(nproc)" 2>&1 | tee "$dir/build.log" | build_progress; then
    tail -n 60 "$dir/build.log" >&2
    log "error: the build failed"
    return 1
  fi
  if grep -qE '^\[[^]]*\] (Building|Linking) ' "$dir/build.log"; then
    took=$((SECONDS - started))
    if ((took >= 60)); then
      log "built in $((took / 60)) min $((took % 60)) s"
    else
      log "built in $took s"
    fi
  fi
}

# Installs those of the Debian packages "$@" that are missing (with sudo
# unless root). scripts/fuzz.sh uses it too.
install_debian_packages() {
  local pkg missing=() sudo=""
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  ((${#missing[@]})) || return 0
  log "installing Debian packages: ${missing[*]}"
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

# Sourced (the tests do): define the functions above, do nothing.
if [[ ${BASH_SOURCE[0]} != "$0" ]]; then return 0; fi

set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD_DIR=${TASKGRID_BUILD_DIR:-$ROOT/build}

# --- Debian packages --------------------------------------------------------
DEB_PACKAGES=(build-essential cmake pkg-config mpich libmpich-dev libopenblas-dev
              libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev zlib1g-dev
              python3 python3-venv)
install_debian_packages "${DEB_PACKAGES[@]}"
for tool in mpicc.mpich mpicxx.mpich mpiexec.mpich; do
  command -v "$tool" >/dev/null || { log "error: $tool not found after installing mpich"; exit 1; }
done

# --- OpenMP offload front end (optional) -------------------------------------
# clang-16 builds unmodified OpenMP offload programs against the libomptarget
# that loads TaskGrid's plugin; the plugin calls kernels through libffi. Where
# these cannot be installed, configure says so (cmake/TaskGridOffload.cmake)
# and only this part is left out.
OFFLOAD_PACKAGES=(libffi-dev clang-16 clang-tools-16 libomp-16-dev)
if ! (install_debian_packages "${OFFLOAD_PACKAGES[@]}"); then
  log "warning: cannot install ${OFFLOAD_PACKAGES[*]}: the OpenMP offload front end is left out"
fi

# --- SimGrid (optional) -------------------------------------------------------
# The S4U backend (src/comm/s4u/) and the simulator's tests and projections
# (bench/sim/). Where SimGrid cannot be installed, configure says so and only
# the simulator is left out.
SIMGRID_PACKAGES=(libsimgrid-dev simgrid)
if ! (install_debian_packages "${SIMGRID_PACKAGES[@]}"); then
  log "warning: cannot install ${SIMGRID_PACKAGES[*]}: the SimGrid simulator is left out"
fi

# --- Python tools (METG) ----------------------------------------------------
PYTHON=${PYTHON:-python3}
VENV=$ROOT/.venv
stamp=$VENV/.taskgrid-stamp
want=$(sha256sum < tools/metg/pyproject.toml | cut -d' ' -f1)
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
build_with_progress "$BUILD_DIR" || exit 1
grep -E "warning:" "$BUILD_DIR/build.log" >&2 || true
