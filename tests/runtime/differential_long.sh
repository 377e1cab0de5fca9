#!/usr/bin/env bash
# Long mode of the differential random-graph harness (not run by CI).
#
#   tests/runtime/differential_long.sh [BUILD_DIR] [GRAPHS_PER_RUN] [SEED_BASE]
#
# Runs taskgrid-differential over every combination of 1, 2 and 4 ranks, the
# three schedulers, 1 and 2 threads per rank and two graph sizes (up to 60 and
# up to 400 tasks): 36 runs of GRAPHS_PER_RUN graphs (default 300, so 10,800
# graphs), each with its own seed derived from SEED_BASE (default: the date,
# so every day explores new graphs). CI runs the 9 short tests of
# differential.cmake instead (about 3,600 graphs).
#
# Every run goes on after a failure; the end prints the failing runs with the
# command that reproduces each (add --only G --verbose from its output to
# replay the one failing graph). Exit status: 0 when every run passed.
# Environment: MPIEXEC (default mpiexec.mpich), RUN_TIMEOUT seconds per run
# (default 900).
set -u

build_dir=${1:-build}
graphs=${2:-300}
seed_base=${3:-$(date +%Y%m%d)}
mpiexec=${MPIEXEC:-mpiexec.mpich}
run_timeout=${RUN_TIMEOUT:-900}
program="$build_dir/bin/taskgrid-differential"
if [[ ! -x $program ]]; then
  echo "differential_long: $program not found (build the taskgrid-differential target)" >&2
  exit 2
fi

runs=0
failed=()
start=$SECONDS
for tasks_max in 60 400; do
  for ranks in 1 2 4; do
    for scheduler in round_robin locality heft; do
      for threads in 1 2; do
        seed=$((seed_base * 100 + runs))
        command="TASKGRID_SCHEDULER=$scheduler TASKGRID_THREADS=$threads $mpiexec -n $ranks $program --graphs $graphs --seed $seed --tasks-max $tasks_max"
        run_start=$SECONDS
        output=$(TASKGRID_SCHEDULER=$scheduler TASKGRID_THREADS=$threads \
                 timeout --kill-after=10 "$run_timeout" \
                 "$mpiexec" -n "$ranks" "$program" --graphs "$graphs" --seed "$seed" \
                 --tasks-max "$tasks_max" 2>&1)
        status=$?
        runs=$((runs + 1))
        summary=$(grep -m1 -E '^differential: ' <<<"$output")
        if [[ $status -ne 0 ]] || grep -qE 'differential: (MISMATCH|ERROR|HANG)|error: taskgrid' <<<"$output"; then
          failed+=("$command  (status $status)")
          echo "FAIL [$((SECONDS - run_start)) s] $command"
          grep -E 'differential: |error: taskgrid|HANG' <<<"$output" | head -5 | sed 's/^/    /'
        else
          echo "ok   [$((SECONDS - run_start)) s] $summary"
        fi
      done
    done
  done
done

echo "differential_long: $runs runs of $graphs graphs ($((runs * graphs)) graphs) in $((SECONDS - start)) s, ${#failed[@]} failed"
for f in "${failed[@]}"; do echo "  failed: $f"; done
[[ ${#failed[@]} -eq 0 ]]
