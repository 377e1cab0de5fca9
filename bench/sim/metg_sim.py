#!/usr/bin/env python3
"""METG(50%) of Task Bench systems on a simulated machine (taskgrid-sim).

For each system and node count, sweeps -iter down by powers of two (largest first) with
compute_bound tasks, and computes each point as the METG tool does: granularity = elapsed
x cores / tasks, efficiency = FLOP/s / (cores x the platform's core speed), METG by
taskgrid_metg.analysis.compute_metg. A simulated run is deterministic: one repetition.

  metg_sim.py --systems mpi,taskgrid_spmd,taskgrid --nodes 2,4 --platform thismachine
              [--cores-per-node C] [--pattern stencil_1d] [--tasks-per-core 1] [--steps 50]
              [--out results.json]

Each run's wall time is recorded; a size whose sweep would exceed --budget seconds of
wall time is reported as such, not dropped. Where every run costs minutes (hundreds of
simulated nodes), --search bracket --start-exp E runs only from E to the first pair of
exponents around 50% efficiency: two or three runs when E is near the answer.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from taskgrid_metg.analysis import Point, compute_metg
from taskgrid_metg.cli import sim_platform_value as platform_value

HERE = Path(__file__).resolve().parent
LAUNCHER = HERE / "taskgrid-sim"


def run_once(args, system: str, nodes: int, cores: int, iterations: int) -> dict:
    width = nodes * cores * args.tasks_per_core
    command = [sys.executable, str(LAUNCHER), "--system", system, "--platform", args.platform,
               "--nodes", str(nodes), "--cores-per-node", str(cores), "--build-dir",
               str(args.build_dir), "--", "-steps", str(args.steps), "-width", str(width),
               "-type", args.pattern, *args.graph_flags.split(), "-kernel", "compute_bound",
               "-iter", str(iterations)]
    start = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.budget)
    except subprocess.TimeoutExpired:
        return None  # one run alone is over the budget
    wall = time.monotonic() - start
    if done.returncode != 0:
        raise SystemExit(f"metg_sim: {' '.join(command)} failed ({done.returncode}):\n"
                         f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    numbers = {}
    for key in ("Total Tasks", "Total FLOPs", "Elapsed Time"):
        found = re.search(rf"^{key} ([0-9.e+-]+)", done.stdout, re.M)
        if not found:
            raise SystemExit(f"metg_sim: no '{key}' in the output of {' '.join(command)}")
        numbers[key] = float(found.group(1))
    return {"iterations": iterations, "tasks": numbers["Total Tasks"],
            "flops": numbers["Total FLOPs"], "elapsed": numbers["Elapsed Time"], "wall": wall}


def exponents_to_run(search: str, start: int, low: int, high: int):
    """The -iter exponents a sweep runs, as a generator that is told each point's efficiency
    (send it True when the point reached 50%, False otherwise).

    sweep: from `high` down to `low`, until two points in a row miss 50% (the METG tool's way).
    bracket: from `start`, down while points reach 50% or up while they miss it, until the
    first pair of neighbouring exponents with one point on each side: two or three runs
    where the start is near the answer, for sizes whose every run costs minutes."""
    if search == "sweep":
        below = 0
        for exponent in range(high, low - 1, -1):
            reached = yield exponent
            below = 0 if reached else below + 1
            if below >= 2:
                return
        return
    exponent = min(max(start, low), high)
    reached = yield exponent
    step = -1 if reached else 1
    while low <= exponent + step <= high:
        exponent += step
        now = yield exponent
        if now != reached:
            return


def sweep(args, system: str, nodes: int, run=None) -> dict:
    """One system's METG at one size: its runs, their wall time, the METG or why not.
    `run(args, system, nodes, cores, iterations)` is run_once (a stand-in in tests)."""
    run = run or run_once
    speed = float(platform_value(args.platform, "core_speed"))
    cores = args.cores_per_node or int(platform_value(args.platform, "cores_per_node"))
    total_cores = nodes * cores
    points, runs, wall = [], [], 0.0
    start = args.max_exp if args.start_exp is None else args.start_exp
    exponents = exponents_to_run(args.search, start, args.min_exp, args.max_exp)
    reached = None
    while True:
        try:
            exponent = next(exponents) if reached is None else exponents.send(reached)
        except StopIteration:
            break
        if wall > args.budget:
            return {"system": system, "nodes": nodes, "cores_per_node": cores, "runs": runs,
                    "wall": wall, "metg_us": None,
                    "reason": f"over the wall-time budget of {args.budget:.0f} s"}
        one = run(args, system, nodes, cores, 2 ** exponent)
        if one is None:
            return {"system": system, "nodes": nodes, "cores_per_node": cores, "runs": runs,
                    "wall": wall + args.budget, "metg_us": None,
                    "reason": f"one run over the wall-time budget of {args.budget:.0f} s"}
        wall += one["wall"]
        granularity = one["elapsed"] * total_cores / one["tasks"] * 1e6  # us
        efficiency = one["flops"] / (one["elapsed"] * total_cores * speed)
        one.update(granularity_us=granularity, efficiency=efficiency)
        runs.append(one)
        points.append(Point(2 ** exponent, granularity, efficiency))
        print(f"  {system:14s} {nodes:5d} nodes iter 2^{exponent:<2d}: {granularity:10.3f} us "
              f"{efficiency:6.1%} ({one['wall']:.1f} s wall)", file=sys.stderr, flush=True)
        reached = efficiency >= 0.5
    result = compute_metg(points)
    return {"system": system, "nodes": nodes, "cores_per_node": cores, "runs": runs,
            "wall": wall, "metg_us": result.value, "reason": result.reason,
            "search": args.search}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--systems", default="mpi,taskgrid_spmd,taskgrid")
    parser.add_argument("--nodes", default="2,4")
    parser.add_argument("--platform", default="thismachine")
    parser.add_argument("--cores-per-node", type=int, default=0)
    parser.add_argument("--pattern", default="stencil_1d")
    parser.add_argument("--graph-flags", default="",
                        help="more Task Bench flags for the pattern (e.g. '-radix 5')")
    parser.add_argument("--tasks-per-core", type=int, default=1)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--min-exp", type=int, default=4)
    parser.add_argument("--max-exp", type=int, default=16)
    parser.add_argument("--search", choices=("sweep", "bracket"), default="sweep",
                        help="sweep: every power of two from --max-exp down, until two miss "
                             "50%%; bracket: from --start-exp to the first pair around 50%%")
    parser.add_argument("--start-exp", type=int,
                        help="bracket: the first exponent (default --max-exp)")
    parser.add_argument("--budget", type=float, default=600,
                        help="wall seconds for one system's sweep at one size (default 600)")
    parser.add_argument("--build-dir", type=Path, default=HERE.parent.parent / "build")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    results = []
    for nodes in [int(n) for n in args.nodes.split(",")]:
        for system in args.systems.split(","):
            results.append(sweep(args, system, nodes))
            r = results[-1]
            metg = f"{r['metg_us']:.3f} us" if r["metg_us"] is not None else f"none ({r['reason']})"
            print(f"{system} {nodes} nodes: METG(50%) {metg}, {r['wall']:.1f} s wall", flush=True)
    if args.out:
        args.out.write_text(json.dumps({"platform": args.platform,
                                        "pattern": " ".join([args.pattern, args.graph_flags]).strip(),
                                        "tasks_per_core": args.tasks_per_core,
                                        "steps": args.steps, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
