#!/usr/bin/env bash
# The cost of checkpoints (README.md beside this script): the write bandwidth of
# one checkpoint against dd to the same disk, and the overhead of checkpoints
# on a Task Bench run at two intervals, each with and without alternating
# (farm-bench where it is installed, else a plain loop of medians).
#   bench/checkpoint/measure.sh [BUILD_DIR] [SCRATCH_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-build}/bin
SCRATCH=${2:-$PWD/checkpoint-bench}
DIR=$SCRATCH/dir
mkdir -p "$SCRATCH"
echo "== load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ), $(nproc) cores, scratch $SCRATCH"

# Runs A and B alternately 5 times; prints the median wall seconds of each and of A/B.
ab() {
  if command -v farm-bench >/dev/null; then
    farm-bench -n 5 --timeout 900 --vs "$2" -- sh -c "$1" | grep -E "wall|^A =|^B ="
    return
  fi
  python3 - "$1" "$2" <<'PY'
import statistics, subprocess, sys, time
a, b, ta, tb = sys.argv[1], sys.argv[2], [], []
for _ in range(5):
    for cmd, out in ((a, ta), (b, tb)):
        t = time.monotonic(); subprocess.run(cmd, shell=True, check=True, capture_output=True)
        out.append(time.monotonic() - t)
print(f"A wall s median {statistics.median(ta):.3f} [{min(ta):.3f}-{max(ta):.3f}]")
print(f"B wall s median {statistics.median(tb):.3f} [{min(tb):.3f}-{max(tb):.3f}]")
r = [x / y for x, y in zip(ta, tb)]
print(f"A/B wall median {statistics.median(r):.3f} [{min(r):.3f}-{max(r):.3f}]")
PY
}

echo "== dd: 256 MiB, conv=fdatasync, to the scratch folder's disk (3 runs)"
for _ in 1 2 3; do
  rm -f "$SCRATCH/dd.bin"
  dd if=/dev/zero of="$SCRATCH/dd.bin" bs=1M count=256 conv=fdatasync 2>&1 | tail -1
done
rm -f "$SCRATCH/dd.bin"

echo "== one checkpoint of 8 handles x 32 MiB (256 MiB), 1 rank, 2 threads: A with, B without"
PROGRAM="$BIN/taskgrid-restart-program --blocks 8 --words 4194304 --steps 1 --observe 1000"
TASKGRID_THREADS=2 ab "rm -rf $DIR; TASKGRID_CHECKPOINT=$DIR TASKGRID_CHECKPOINT_EVERY=16 exec $PROGRAM" "$PROGRAM"

echo "== Task Bench, taskgrid_spmd, 2 ranks, stencil_1d width 4, 200 steps, 4 MiB outputs"
TB="mpiexec.mpich -n 2 $BIN/taskbench-taskgrid_spmd -type stencil_1d -steps 200 -width 4 -kernel compute_bound -iter 65536 -output 4194304"
for every in 400 100; do
  echo "-- A: a checkpoint every $every submissions ($((every / 4)) steps); B: none"
  TASKGRID_THREADS=1 ab "rm -rf $DIR; TASKGRID_CHECKPOINT=$DIR TASKGRID_CHECKPOINT_EVERY=$every exec $TB" "$TB"
done
rm -rf "$DIR"
