#!/usr/bin/env bash
# The device kit: every GPU and 16-core figure from one prepared run.
#
#   scripts/device-kit.sh pack [--dry-run] [--build-dir DIR] [--compress xz|gzip|none] ...
#       Here: a CUDA-enabled Release build (build-kit/: x86-64-v3, sm_90 plus PTX) of what
#       the run needs, stripped, with MPICH's launcher and every library a bare node may lack,
#       as device-kit/taskgrid-kit.tar.xz (ignored by git) with a manifest. --dry-run builds
#       nothing and lists what would go in, with sizes. (scripts/device_kit/pack.py --help)
#   scripts/device-kit.sh run [--kit ARCHIVE|FOLDER] [--emulated] [--steps a,b] [--out DIR] ...
#       There (or anywhere): unpacks the kit into a temporary folder and runs its steps; the
#       report goes to $OUT if set, else device-kit-report/. --emulated runs the same steps
#       on emulated devices at small sizes, with this machine's MPICH hidden from the kit's
#       programs (a mount namespace, as root) so that a library missing from the kit shows.
#       (scripts/device_kit/run.py --help)
#   scripts/device-kit.sh plots REPORT_DIR
#       Here: draws a report's plots (where the node had no matplotlib) from its report.json
#       and logs.tar.gz.
set -euo pipefail
shopt -s extglob
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3}

usage() {
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}

# The system files an emulated run hides: MPICH and what only the kit should provide.
# (Python and the shell tools need zlib, libffi, ... themselves: those stay visible.)
HIDDEN_LIBRARIES='libmpich*|libmpi.so*|libucp.so*|libucs.so*|libuct.so*|libucm.so*|libhwloc.so*|libslurm.so*|libopenblas*|libgfortran.so*|libquadmath.so*|libomp.so*|libomptarget.so*|libLLVM*|libz3.so*|libgomp.so*|libcudart.so*'

# Runs "$@" in a mount namespace in which the system's copies of the kit's MPI (and other
# carried) libraries, its launcher and UCX's modules read as empty files.
run_hidden() {
  local kit=$1
  shift
  if [ "$(id -u)" -ne 0 ] || ! unshare -m --propagation private true 2>/dev/null; then
    echo "[device-kit] warning: cannot hide the system's MPICH (needs root and unshare -m);" \
      "the run may use it where the kit lacks a library" >&2
    "$@"
    return
  fi
  local script empty
  script=$(mktemp)
  empty=$(mktemp -d)
  {
    echo 'set -e'
    local name path
    # Every system copy, whether the kit carries it or not: a library the kit lacks
    # must fail here as it would on a bare node.
    for path in /usr/lib/x86_64-linux-gnu/* /usr/lib/x86_64-linux-gnu/openblas-pthread/* \
      /usr/lib/llvm-16/lib/* /usr/local/cuda/lib64/* /usr/local/cuda/lib/* /usr/local/lib/*; do
      name=${path##*/}
      [[ $name == @($HIDDEN_LIBRARIES) ]] || continue
      [ -f "$path" ] && [ ! -L "$path" ] && echo "mount --bind /dev/null '$path'"
    done
    for name in mpiexec.hydra hydra_pmi_proxy; do
      [ -e "/usr/bin/$name" ] && echo "mount --bind /dev/null /usr/bin/$name"
    done
    [ -d /usr/lib/x86_64-linux-gnu/ucx ] && echo "mount --bind '$empty' /usr/lib/x86_64-linux-gnu/ucx"
    echo 'exec "$@"'
  } > "$script"
  echo "[device-kit] hiding the system's MPICH, UCX and carried libraries from the run" >&2
  unshare -m --propagation private bash "$script" "$@"
  local status=$?
  rm -rf "$script" "$empty"
  return $status
}

command=${1:-}
[ -n "$command" ] || usage
shift
case $command in
  pack)
    exec "$PYTHON" "$ROOT/scripts/device_kit/pack.py" "$@"
    ;;
  plots)
    [ $# -eq 1 ] || { echo "usage: device-kit.sh plots REPORT_DIR" >&2; exit 2; }
    if [ -x "$ROOT/.venv/bin/python" ]; then PYTHON=$ROOT/.venv/bin/python; fi
    exec "$PYTHON" "$ROOT/scripts/device_kit/run.py" --replot "$1"
    ;;
  run)
    kit_source=""
    emulated=0
    args=()
    while [ $# -gt 0 ]; do
      case $1 in
        --kit)
          [ $# -ge 2 ] || { echo "device-kit.sh run: --kit needs an archive or a folder" >&2; exit 2; }
          kit_source=$2
          shift 2
          ;;
        --emulated)
          emulated=1
          args+=("$1")
          shift
          ;;
        -h | --help)
          exec "$PYTHON" "$ROOT/scripts/device_kit/run.py" --help
          ;;
        *)
          args+=("$1")
          shift
          ;;
      esac
    done
    if [ -z "$kit_source" ]; then
      for candidate in "$ROOT"/device-kit/taskgrid-kit.tar.xz "$ROOT"/device-kit/taskgrid-kit.tar.gz \
        "$ROOT"/device-kit/taskgrid-kit.tar "$ROOT"/device-kit/taskgrid-kit; do
        if [ -e "$candidate" ]; then
          kit_source=$candidate
          break
        fi
      done
    fi
    if [ -z "$kit_source" ] || [ ! -e "$kit_source" ]; then
      echo "error: no device kit found (${kit_source:-device-kit/taskgrid-kit.tar.*}):" \
        "make one with 'scripts/device-kit.sh pack' (or pass --kit)" >&2
      exit 2
    fi
    if [ -d "$kit_source" ]; then
      kit=$(cd "$kit_source" && pwd)
      cleanup=""
    else
      unpack_dir=$(mktemp -d "${TMPDIR:-/tmp}/taskgrid-kit.XXXXXX")
      cleanup=$unpack_dir
      started=$SECONDS
      tar -C "$unpack_dir" -xf "$kit_source"
      kit=$unpack_dir/taskgrid-kit
      echo "[device-kit] unpacked $kit_source ($(du -sh "$kit" | cut -f1)) in $((SECONDS - started)) s" >&2
    fi
    [ -f "$kit/run.py" ] || { echo "error: $kit_source is not a device kit (no run.py)" >&2; exit 2; }
    status=0
    if [ "$emulated" = 1 ]; then
      run_hidden "$kit" "$PYTHON" "$kit/run.py" "${args[@]}" || status=$?
    else
      "$PYTHON" "$kit/run.py" "${args[@]}" || status=$?
    fi
    [ -z "$cleanup" ] || rm -rf "$cleanup"
    exit $status
    ;;
  -h | --help | help)
    usage
    ;;
  *)
    echo "error: unknown command '$command' (pack, run or plots)" >&2
    usage
    ;;
esac
