#!/usr/bin/env python3
"""Seed 003's broadcast experiment on a simulated machine (taskgrid-sim), scaled down.

One buffer of B bytes on rank 0 read by a task on every node (Task Bench -broadcast B, one
trivial timestep, no warm-up, cluster mode as OMPC), for each TASKGRID_BCAST strategy, against
on-demand delivery (`none`: every reader fetches it from the owner); and the MPI baseline's
MPI_Bcast of the same buffer on SMPI (one rank per node). Payloads are real bytes, so sizes are
scaled down from the seed's 250 MB-64 GB (`--sizes`); every node's link is the platform's.

  bcast_sim.py --nodes 4,16,64 --sizes 16M,64M --platform sdumont [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STRATEGIES = ("none", "p2p", "mpi", "tree", "pipeline")


def size_of(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def elapsed(args, system: str, nodes: int, size: int, strategy: str | None) -> tuple[float, float]:
    command = [sys.executable, str(HERE / "taskgrid-sim"), "--system", system, "--platform",
               args.platform, "--nodes", str(nodes), "--cores-per-node", "1", "--build-dir",
               str(args.build_dir), "--", "-steps", "1", "-width", str(nodes), "-type", "trivial",
               "-broadcast", str(size)]
    if system != "mpi":
        command += ["-taskgrid:warmup", "0"]
    env = dict(os.environ, TASKGRID_BCAST=strategy or "none")
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.monotonic() - start
    found = re.search(r"^Elapsed Time ([0-9.e+-]+)", done.stdout, re.M)
    if done.returncode != 0 or not found:
        raise SystemExit(f"bcast_sim: {' '.join(command)} failed ({done.returncode}):\n"
                         f"{done.stdout[-1500:]}{done.stderr[-1500:]}")
    return float(found.group(1)), wall


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", default="4,16,64")
    parser.add_argument("--sizes", default="16M,64M")
    parser.add_argument("--platform", default="sdumont")
    parser.add_argument("--build-dir", type=Path, default=HERE.parent.parent / "build")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    rows = []
    print("| nodes | bytes | " + " | ".join(f"{s} ms" for s in STRATEGIES)
          + " | MPI_Bcast (SMPI) ms | none/tree | none/pipeline | none/MPI_Bcast | wall s |")
    print("|---" * (len(STRATEGIES) + 7) + "|")
    for nodes in [int(n) for n in args.nodes.split(",")]:
        for text in args.sizes.split(","):
            size = size_of(text)
            row = {"nodes": nodes, "bytes": size, "seconds": {}, "wall": 0.0}
            for strategy in STRATEGIES:
                seconds, wall = elapsed(args, "taskgrid", nodes, size, strategy)
                row["seconds"][strategy] = seconds
                row["wall"] += wall
            seconds, wall = elapsed(args, "mpi", nodes, size, None)
            row["seconds"]["MPI_Bcast"] = seconds
            row["wall"] += wall
            s = row["seconds"]
            print(f"| {nodes} | {text} | " + " | ".join(f"{s[k] * 1e3:.2f}" for k in STRATEGIES)
                  + f" | {s['MPI_Bcast'] * 1e3:.2f} | {s['none'] / s['tree']:.2f} | "
                  f"{s['none'] / s['pipeline']:.2f} | {s['none'] / s['MPI_Bcast']:.2f} | "
                  f"{row['wall']:.0f} |", flush=True)
            rows.append(row)
    if args.out:
        args.out.write_text(json.dumps({"platform": args.platform, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
