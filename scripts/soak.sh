#!/usr/bin/env bash
# The long soak: 10^7 tasks on 4 ranks in each mode, with handle churn, and
# each rank's resident memory after warm-up and at the end (it must stay
# within 10%). Needs a built tree (scripts/bootstrap.sh). Arguments override
# the defaults: scripts/soak.sh [tasks] [ranks]
set -euo pipefail
cd "$(dirname "$0")/.."
TASKS=${1:-10000000}
RANKS=${2:-4}
BUILD=${TASKGRID_BUILD_DIR:-build}
echo "== soak: $TASKS tasks, $RANKS ranks; load: $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
for mode in cluster spmd; do
  TASKGRID_MODE=$mode TASKGRID_THREADS=1 \
    mpiexec.mpich -n "$RANKS" "$BUILD/bin/taskgrid-soak" --tasks "$TASKS" --check || status=1
done
exit $status
