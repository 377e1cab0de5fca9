#!/usr/bin/env bash
# The runtime's tests under sanitizers (CI runs this after the test command):
#   asan  AddressSanitizer + UndefinedBehaviorSanitizer: every gtest of the
#         runtime (label runtime_unit: the engine's and planner's parts, the
#         loopback random graphs, the protocol death tests, the watchdog) and
#         the random-graph differential harness under mpiexec -n 2 and -n 4
#         in both modes;
#   tsan  ThreadSanitizer: the same gtests but the death tests (program, engine
#         and worker threads over the loopback transport) and the differential
#         harness under mpiexec -n 2 in both modes (two task threads; a window
#         of 2 tasks, where the program and engine threads take turns).
# Each builds, into build-asan/ or build-tsan/ beside build/, only the targets
# those tests need. Needs the set-up of scripts/bootstrap.sh.
#   scripts/sanitizers.sh [asan] [tsan]     (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
source scripts/bootstrap.sh  # build_with_progress, log
log() { printf '[sanitizers] %s\n' "$*" >&2; }

# taskgrid-unit-tests: every GoogleTest executable of tests/<layer>/ (and the
# offload plugin's, where it is built); tests/CMakeLists.txt collects them.
TARGETS=(taskgrid-unit-tests taskgrid-differential)
# The gtests, by label (the install tests under that label need the
# installed package, which these builds skip).
UNIT=(-L runtime_unit)
NOT_UNIT='^install\.'


configure() {  # dir, sanitizer flags
  local dir=$1 flags=$2
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    log "configuring $dir ($flags)"
    cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTASKGRID_NATIVE=OFF \
      -DMPI_C_COMPILER=mpicc.mpich -DMPI_CXX_COMPILER=mpicxx.mpich \
      -DMPIEXEC_EXECUTABLE="$(command -v mpiexec.mpich)" \
      -DTASKGRID_PYTHON="$ROOT/.venv/bin/python" -DTASKGRID_CUDA_EXAMPLES=OFF -DTASKGRID_CUDA_TESTS=OFF \
      -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
  fi
  local targets=("${TARGETS[@]}")
  log "building ${targets[*]} in $dir"
  if ! cmake --build "$dir" -j "$(nproc)" --target "${targets[@]}" >"$dir/build.log" 2>&1; then
    tail -n 40 "$dir/build.log" >&2
    log "error: the build failed (log: $dir/build.log)"
    return 1
  fi
}

run_asan() {
  local dir=$ROOT/build-asan started=$SECONDS
  configure "$dir" "-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  # Leaks: MPI keeps its allocations to the end, and the heartbeat link keeps
  # unfinished sends' messages on purpose; errors stop the test at once.
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  ctest --test-dir "$dir" --output-on-failure -j 2 --timeout 600 "${UNIT[@]}" -E "$NOT_UNIT"
  ctest --test-dir "$dir" --output-on-failure -j 2 --timeout 600 \
    -R '^runtime\.differential\.(np2|np4|spmd\.np2|spmd\.np4|window2|device\.cluster\.np2)'
  unset ASAN_OPTIONS UBSAN_OPTIONS
  log "asan+ubsan: done in $((SECONDS - started)) s"
}

run_tsan() {
  local dir=$ROOT/build-tsan started=$SECONDS
  configure "$dir" "-fsanitize=thread -fno-omit-frame-pointer"
  # UCX's own memory hooks patch malloc and mmap, which TSan intercepts too;
  # MPICH's and UCX's internals are not instrumented (tsan.supp says which
  # of their reports to ignore).
  export UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_EVENTS=no
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$ROOT/scripts/tsan.supp"
  # Not the protocol tests: each is a death test (a fork of a threaded process).
  ctest --test-dir "$dir" --output-on-failure -j 2 --timeout 900 "${UNIT[@]}" \
    -E "$NOT_UNIT|^ProtocolErrors\."
  ctest --test-dir "$dir" --output-on-failure -j 1 --timeout 900 \
    -R '^runtime\.differential\.(np2\.locality\.t2|spmd\.np2\.t1|window2\.(cluster|spmd)\.np2|device\.cluster\.np2)$'
  unset UCX_MEM_MALLOC_HOOKS UCX_MEM_MMAP_HOOK_MODE UCX_MEM_EVENTS TSAN_OPTIONS
  log "tsan: done in $((SECONDS - started)) s"
}

wanted=("$@")
((${#wanted[@]})) || wanted=(asan tsan)
for name in "${wanted[@]}"; do
  case $name in
    asan) run_asan ;;
    tsan) run_tsan ;;
    *) log "error: unknown sanitizer '$name' (asan or tsan)"; exit 2 ;;
  esac
done
