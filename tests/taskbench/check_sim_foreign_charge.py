#!/usr/bin/env python3
"""The simulator's cost model charges a spmd rank less for planning a task
another rank runs (runtime_foreign_submission_seconds) than for one it runs,
and cluster mode's head the full submission cost for every task.

    check_sim_foreign_charge.py TASKGRID_SIM PLATFORM_FILE

Runs Task Bench on 4 simulated nodes (1 core each) twice per system, on two
copies of PLATFORM_FILE that differ only in the foreign submission cost (1 ns
and 10 us): in spmd mode each rank plans the 30 timed tasks of the 3 others,
so the second run must take at least 0.15 ms more; in cluster mode the two
must take the same simulated time. Exits 0 on success, 1 with the reason.
"""
import sys
import tempfile
from pathlib import Path

from sim_cost_runs import elapsed, platform_variants

CHECKER = "check_sim_foreign_charge"
CHEAP, DEAR = 1e-9, 1e-5
FOREIGN_TASKS_PER_RANK = 10 * 3  # -steps 10, -width 4 on 4 nodes: 3 others' tasks per step
GRAPH = ["-steps", "10", "-width", "4", "-type", "stencil_1d", "-kernel", "compute_bound",
         "-iter", "64"]


def main() -> int:
    sim, platform = sys.argv[1], Path(sys.argv[2])
    with tempfile.TemporaryDirectory() as folder:
        files = platform_variants(platform, "runtime_foreign_submission_seconds",
                                  {"cheap": CHEAP, "dear": DEAR}, Path(folder))
        if files is None:
            print(f"{CHECKER}: {platform} gives no runtime_foreign_submission_seconds")
            return 1
        times = {(system, label): elapsed(CHECKER, sim, system, path, 4, GRAPH)
                 for system in ("taskgrid_spmd", "taskgrid") for label, path in files.items()}
    print(times)
    spmd_gain = times["taskgrid_spmd", "dear"] - times["taskgrid_spmd", "cheap"]
    needed = 0.5 * FOREIGN_TASKS_PER_RANK * (DEAR - CHEAP)
    if spmd_gain < needed:
        print(f"{CHECKER}: spmd took {spmd_gain * 1e3:.3f} ms more with the dear "
              f"foreign submissions, not the {needed * 1e3:.3f} ms or more they cost")
        return 1
    if times["taskgrid", "dear"] != times["taskgrid", "cheap"]:
        print(f"{CHECKER}: cluster mode's time depends on the foreign submission "
              f"cost ({times['taskgrid', 'cheap']} vs {times['taskgrid', 'dear']} s): its head "
              "runs or sends every task it plans")
        return 1
    print(f"{CHECKER}: spmd charged for other ranks' tasks, cluster not")
    return 0


if __name__ == "__main__":
    sys.exit(main())
