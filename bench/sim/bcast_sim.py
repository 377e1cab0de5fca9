#!/usr/bin/env python3
"""Seed 003's broadcast experiment on a simulated machine (taskgrid-sim), scaled down.

One buffer of B bytes on rank 0 read by a task on every node (Task Bench -broadcast B, one
trivial timestep, no warm-up, cluster mode as OMPC), for each TASKGRID_BCAST strategy, against
on-demand delivery (`none`: every reader fetches it from the owner); and the MPI baseline's
MPI_Bcast of the same buffer on SMPI (one rank per node). Payloads are real bytes, so sizes are
scaled down from the seed's 250 MB-64 GB (`--sizes`); every node's link is the platform's.

  bcast_sim.py --nodes 4,16,64 --sizes 16M,64M --platform sdumont [--out results.json]

--check (a test): every strategy must order as the shapes say on a contention-free star,
tree >= 90% of its ideal gain over on-demand ((nodes-1) / ceil(log2 nodes) transfers of the
whole buffer) and pipeline ahead of tree; exit status 1 names the one that is not.
"""

from __future__ import annotations

import argparse
import json
import math
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
    parser.add_argument("--no-mpi", action="store_true", help="skip MPI_Bcast on SMPI")
    parser.add_argument("--check", action="store_true",
                        help="fail unless tree and pipeline gain what their shapes promise")
    args = parser.parse_args(argv)
    failures = []
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
            if not args.no_mpi:
                seconds, wall = elapsed(args, "mpi", nodes, size, None)
                row["seconds"]["MPI_Bcast"] = seconds
                row["wall"] += wall
            s = row["seconds"]
            bcast = s.get("MPI_Bcast", math.nan)
            print(f"| {nodes} | {text} | " + " | ".join(f"{s[k] * 1e3:.2f}" for k in STRATEGIES)
                  + f" | {bcast * 1e3:.2f} | {s['none'] / s['tree']:.2f} | "
                  f"{s['none'] / s['pipeline']:.2f} | {s['none'] / bcast:.2f} | "
                  f"{row['wall']:.0f} |", flush=True)
            rows.append(row)
            ideal_tree = (nodes - 1) / max(1, math.ceil(math.log2(nodes)))
            if s["none"] / s["tree"] < 0.9 * ideal_tree:
                failures.append(f"{nodes} nodes, {text}: tree gains {s['none'] / s['tree']:.2f}x "
                                f"over on-demand, its shape {ideal_tree:.2f}x")
            if nodes > 2 and s["pipeline"] >= s["tree"]:
                failures.append(f"{nodes} nodes, {text}: pipeline {s['pipeline'] * 1e3:.2f} ms "
                                f"is not ahead of tree {s['tree'] * 1e3:.2f} ms")
    if args.out:
        args.out.write_text(json.dumps({"platform": args.platform, "rows": rows}, indent=1))
    if args.check and failures:
        print("bcast_sim: " + "; ".join(failures), file=sys.stderr)
        return 1
    if args.check:
        print("bcast_sim: every strategy gains what its shape promises")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
