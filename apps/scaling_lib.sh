# shellcheck shell=bash
# What the apps' scaling scripts (apps/cannon/scaling.sh,
# apps/minimod/scaling.sh) share: the common environment, finding the two
# programs, running one under $MPIEXEC and reading values from its output,
# the median, and a row of the markdown table. Sourced, not run; the script
# sets `set -euo pipefail` first.
#
# Environment (defaults set here):
#   RANKS      rank counts (default "1 2 4")
#   ROUNDS     runs per program and rank count; the median is reported (default 1)
#   BUILD_DIR  where the programs were built (default: build/ in the repository)
#   MPIEXEC    the launcher (default mpiexec.mpich); MPIEXEC_FLAGS extra flags
#   OMP_NUM_THREADS  threads per rank (default 1)
# Sets ROOT, the repository, and MPIEXEC_EXTRA, MPIEXEC_FLAGS as words.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RANKS=${RANKS:-"1 2 4"}
ROUNDS=${ROUNDS:-1}
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
read -r -a MPIEXEC_EXTRA <<< "${MPIEXEC_FLAGS:-}"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

# find_programs PGAS_NAME MPI_NAME: sets PGAS_PROGRAM and MPI_PROGRAM to
# those programs in $BUILD_DIR/bin; exits if either is missing.
find_programs() {
  PGAS_PROGRAM=$BUILD_DIR/bin/$1
  MPI_PROGRAM=$BUILD_DIR/bin/$2
  local program
  for program in "$PGAS_PROGRAM" "$MPI_PROGRAM"; do
    if [ ! -x "$program" ]; then
      echo "scaling.sh: $program not found (build it, or set BUILD_DIR)" >&2
      exit 1
    fi
  done
}

# run_values RANKS PROGRAM NAMES [ARG...]: runs PROGRAM ARG... at RANKS
# ranks and prints, on one line, the values of the output lines
# `NAME VALUE` for each name in the space-separated NAMES, in that order.
# On failure prints the program's output and exits.
run_values() {
  local ranks=$1 program=$2 names=$3 output
  shift 3
  if ! output=$("$MPIEXEC" -n "$ranks" "${MPIEXEC_EXTRA[@]}" "$program" "$@" 2>&1); then
    printf '%s\n' "$output" >&2
    echo "scaling.sh: $(basename "$program") failed at $ranks ranks" >&2
    exit 1
  fi
  awk -v names="$names" '
    BEGIN { n = split(names, name, " ") }
    { for (i = 1; i <= n; ++i) if ($1 == name[i]) value[i] = $2 }
    END { line = value[1]; for (i = 2; i <= n; ++i) line = line " " value[i]; print line }' \
    <<< "$output"
}

# The median of the numbers on stdin.
median() {
  sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# table_row RANKS PGAS_TIMES MPI_TIMES: prints the table row for RANKS
# ranks from the space-separated times of each program: their medians and
# the ratio PGAS / MPI.
table_row() {
  local pgas mpi
  pgas=$(tr ' ' '\n' <<< "$2" | median)
  mpi=$(tr ' ' '\n' <<< "$3" | median)
  awk -v r="$1" -v p="$pgas" -v m="$mpi" \
    'BEGIN { printf "| %d | %.4g | %.4g | %.3f |\n", r, p, m, p / m }'
}
