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
import re
import subprocess
import sys
import tempfile
from pathlib import Path

CHEAP, DEAR = 1e-9, 1e-5
FOREIGN_TASKS_PER_RANK = 10 * 3  # -steps 10, -width 4 on 4 nodes: 3 others' tasks per step
GRAPH = ["-steps", "10", "-width", "4", "-type", "stencil_1d", "-kernel", "compute_bound",
         "-iter", "64"]


def elapsed(sim: str, system: str, platform: Path) -> float:
    command = [sim, "--system", system, "--platform", str(platform), "--nodes", "4",
               "--cores-per-node", "1", "--"] + GRAPH
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    found = re.search(r"^Elapsed Time ([0-9.e+-]+)", done.stdout, re.M)
    if done.returncode != 0 or not found:
        sys.exit(f"check_sim_foreign_charge: {' '.join(command)} failed ({done.returncode}):\n"
                 f"{done.stdout[-1500:]}{done.stderr[-1500:]}")
    return float(found.group(1))


def main() -> int:
    sim, platform = sys.argv[1], Path(sys.argv[2])
    text = platform.read_text()
    if not re.search(r"^runtime_foreign_submission_seconds = ", text, re.M):
        print(f"check_sim_foreign_charge: {platform} gives no runtime_foreign_submission_seconds")
        return 1
    with tempfile.TemporaryDirectory() as folder:
        files = {}
        for label, seconds in (("cheap", CHEAP), ("dear", DEAR)):
            files[label] = Path(folder) / f"{label}.platform"
            files[label].write_text(re.sub(r"^runtime_foreign_submission_seconds = .*$",
                                           f"runtime_foreign_submission_seconds = {seconds}",
                                           text, flags=re.M))
        times = {(system, label): elapsed(sim, system, path)
                 for system in ("taskgrid_spmd", "taskgrid") for label, path in files.items()}
    print(times)
    spmd_gain = times["taskgrid_spmd", "dear"] - times["taskgrid_spmd", "cheap"]
    needed = 0.5 * FOREIGN_TASKS_PER_RANK * (DEAR - CHEAP)
    if spmd_gain < needed:
        print(f"check_sim_foreign_charge: spmd took {spmd_gain * 1e3:.3f} ms more with the dear "
              f"foreign submissions, not the {needed * 1e3:.3f} ms or more they cost")
        return 1
    if times["taskgrid", "dear"] != times["taskgrid", "cheap"]:
        print("check_sim_foreign_charge: cluster mode's time depends on the foreign submission "
              f"cost ({times['taskgrid', 'cheap']} vs {times['taskgrid', 'dear']} s): its head "
              "runs or sends every task it plans")
        return 1
    print("check_sim_foreign_charge: spmd charged for other ranks' tasks, cluster not")
    return 0


if __name__ == "__main__":
    sys.exit(main())
