#!/usr/bin/env bash
# The test command: set-up (bootstrap), then every test through CTest:
# unit tests, multi-rank tests under mpiexec.mpich -n 2 and -n 4, tool tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cd "${TASKGRID_BUILD_DIR:-build}"
# Two cores: run two tests at once; multi-rank tests reserve the cores they use.
ctest --output-on-failure -j 2 --timeout 300 "$@"
