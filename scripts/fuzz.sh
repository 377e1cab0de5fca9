#!/usr/bin/env bash
# Fuzzes the control-batch decoder (fuzz/fuzz_batch.cpp) for a bounded time:
#   scripts/fuzz.sh [seconds]        (default 60)
# Installs clang-16 and its runtime (libFuzzer, sanitizers) from Debian if
# missing, builds fuzz/ with -fsanitize=fuzzer,address,undefined into
# build-fuzz/ (TASKGRID_FUZZ_BUILD_DIR) and runs from fuzz/corpus/batch. New
# corpus entries go to build-fuzz/corpus (not the tree); a crash is written to
# build-fuzz/crash-* and fails the script: keep it as fuzz/corpus/batch/crash-*
# once fixed (tests/comm/test_wire_check.cpp replays the corpus with GCC).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SECONDS_TO_RUN=${1:-60}
BUILD=${TASKGRID_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
source scripts/bootstrap.sh  # install_debian_packages
log() { printf '[fuzz] %s\n' "$*" >&2; }

# libFuzzer and the sanitizer runtimes come with libclang-rt-16-dev.
install_debian_packages clang-16 libclang-rt-16-dev

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S "$ROOT/fuzz" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++-16 >/dev/null
fi
cmake --build "$BUILD" --target fuzz_batch -j "$(nproc)" >/dev/null

mkdir -p "$BUILD/corpus"
log "fuzzing the batch decoder for $SECONDS_TO_RUN s"
# -max_len: batches of many commands. -malloc_limit_mb: the decoder must not
# allocate by what a batch says, so one big allocation is a finding.
# -rss_limit_mb catches growth (a leak kept reachable); ASan's quarantine of
# freed blocks counts in the RSS too, 256 MB by default, which at ~350k runs/s
# fills within a minute and, with libFuzzer's own tables, crossed a 512 MB
# limit with 24 MB live. A 64 MB quarantine still catches a use after free of
# any block freed in the last tens of thousands of runs.
status=0
ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64} \
"$BUILD/fuzz_batch" "$BUILD/corpus" "$ROOT/fuzz/corpus/batch" \
  -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -rss_limit_mb=1024 -malloc_limit_mb=64 \
  -artifact_prefix="$BUILD/" -print_final_stats=1 >"$BUILD/fuzz.log" 2>&1 || status=$?
grep -E '^(#[0-9]+ +DONE|Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb)' \
  "$BUILD/fuzz.log" >&2 || true
if ((status != 0)); then
  tail -n 40 "$BUILD/fuzz.log" >&2
  log "error: the fuzzer found a problem (log: $BUILD/fuzz.log, input: $BUILD/crash-*)"
  exit "$status"
fi
log "no crash in $SECONDS_TO_RUN s"
