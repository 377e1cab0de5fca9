"""A stand-in for taskbench-taskgrid: writes the -json report of a broadcast run, with an
elapsed time that depends on TASKGRID_BCAST and the size, and the TASKGRID_* environment.

FAKE_FAIL=STRATEGY: prints an `error:` line and exits 1 for that strategy.
FAKE_HANG=STRATEGY: sleeps for a minute for that strategy.
FAKE_EXIT=N: exits N after a good report (as mpiexec does after a bounded MPI_Finalize)."""

import json
import os
import sys
import time

# Seconds per GiB for each strategy.
SPEED = {"none": 40.0, "p2p": 35.0, "mpi": 12.0, "tree": 15.0, "pipeline": 6.0, "auto": 6.0}


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def main(argv: list[str]) -> int:
    strategy = os.environ.get("TASKGRID_BCAST", "auto")
    if os.environ.get("FAKE_HANG") == strategy:
        time.sleep(60)
    if os.environ.get("FAKE_FAIL") == strategy:
        print("error: taskgrid: rank 1: fake failure", file=sys.stderr)
        return 1
    size = int(flag(argv, "-broadcast"))
    report = {"system": "taskgrid",
              "ranks": int(os.environ.get("FAKE_RANKS", flag(argv, "-width"))),
              "threads_per_rank": 1,
              "elapsed_seconds": SPEED[strategy] * size / 2**30 + 0.001,
              "broadcast_bytes": size,
              "argv": argv,
              "env": {k: v for k, v in os.environ.items() if k.startswith("TASKGRID_")}}
    with open(flag(argv, "-json"), "w") as out:
        json.dump(report, out)
    print("Elapsed Time 1.0 seconds")
    exit_status = int(os.environ.get("FAKE_EXIT", "0"))
    if exit_status:
        print("[mpiexec@tl0] HYDU_sock_write: write error (fake)", file=sys.stderr)
    return exit_status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
