#!/usr/bin/env python3
"""Times the tiled Cholesky example (apps/examples/cholesky.cpp) under each
placement policy, runs alternating so that load drifts touch every policy
alike, and prints the median time per (ranks, policy) as a Markdown table
with the load seen during the runs: /proc/loadavg's 1-minute figure (in a
container, the host's) and the threads runnable in this machine's view
(ps) just before each run, and in how many runs every task ran on rank 0
(TASKGRID_STATS=1 is set: its counts are printed after the timed part).

  bench/placement/compare.py --ranks 2 4 --runs 10 -- --n 512 --tile 128
  bench/placement/compare.py --binary main=/tmp/cholesky-main --binary new=build/bin/cholesky ...

Every run must print the example's "time X ms" and pass its residual check.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys


def load():
    with open("/proc/loadavg") as f:
        average = float(f.read().split()[0])
    states = subprocess.run(["ps", "-eLo", "stat="], capture_output=True, text=True).stdout
    return average, sum(1 for s in states.split() if s.startswith("R")) - 1  # less ps itself


def run_once(binary, ranks, scheduler, args, timeout):
    env = dict(os.environ, TASKGRID_SCHEDULER=scheduler, TASKGRID_STATS="1")
    cmd = ["mpiexec.mpich", "-n", str(ranks), binary, *args]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    match = re.search(r"time ([0-9.]+) ms", run.stdout)
    if run.returncode != 0 or not match:
        sys.exit(f"failed: {' '.join(cmd)} (TASKGRID_SCHEDULER={scheduler}), status "
                 f"{run.returncode}\n{run.stdout}{run.stderr}")
    tasks = [int(t) for t in re.findall(r"^taskgrid stats:\s+\d+\s+(\d+)\s", run.stderr, re.M)]
    return float(match.group(1)), len(tasks) > 1 and sum(tasks[1:]) == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", action="append",
                        help="LABEL=PATH, repeatable (default: tree=build/bin/cholesky)")
    parser.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--policies", nargs="+", default=["heft", "round_robin"])
    parser.add_argument("--runs", type=int, default=10, help="runs per (ranks, policy)")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("args", nargs="*", help="the example's flags (after --)")
    opts = parser.parse_args()
    binaries = [b.split("=", 1) for b in (opts.binary or ["tree=build/bin/cholesky"])]
    print("| build | ranks | policy | median ms | min | max | runs | all on rank 0 | loadavg 1 min "
          "| runnable threads |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for ranks in opts.ranks:
        times = {(b, p): [] for b, _ in binaries for p in opts.policies}
        local = {key: 0 for key in times}
        loads = []
        for _ in range(opts.runs):
            for label, path in binaries:  # alternating
                for policy in opts.policies:
                    loads.append(load())
                    ms, on_rank_0 = run_once(path, ranks, policy, opts.args, opts.timeout)
                    times[label, policy].append(ms)
                    local[label, policy] += on_rank_0
        averages = [a for a, _ in loads]
        runnable = [r for _, r in loads]
        for (label, policy), t in times.items():
            print(f"| {label} | {ranks} | {policy} | {statistics.median(t):.3f} | {min(t):.3f} | "
                  f"{max(t):.3f} | {len(t)} | {local[label, policy]} | "
                  f"{min(averages):.0f}-{max(averages):.0f} | "
                  f"{min(runnable)}-{max(runnable)} (median {statistics.median(runnable):.0f}) |",
                  flush=True)


if __name__ == "__main__":
    main()
