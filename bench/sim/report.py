#!/usr/bin/env python3
"""Tables and a plot from metg_sim.py's results (JSON files).

  report.py RESULTS.json... --plot metg.png

Prints one Markdown table per file (METG(50%) per system and node count, the ratio to mpi,
the wall time of each sweep) and draws METG against nodes, one line per system and file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def table(data: dict) -> str:
    results = data["results"]
    systems = list(dict.fromkeys(r["system"] for r in results))
    nodes = sorted({r["nodes"] for r in results})
    by = {(r["system"], r["nodes"]): r for r in results}
    head = (f"{data['platform']}, {data['pattern']}, {data['tasks_per_core']} task(s) per core, "
            f"{data['steps']} steps")
    lines = [head, "", "| nodes | cores | " + " | ".join(
        f"{s} METG µs" + ("" if s == "mpi" else f" | {s}/mpi") for s in systems) + " | wall s |",
        "|---" * (3 + 2 * len(systems) - (1 if "mpi" in systems else 0)) + "|"]
    for n in nodes:
        cells = []
        mpi = by.get(("mpi", n), {}).get("metg_us")
        cores = None
        wall = 0.0
        for s in systems:
            r = by.get((s, n))
            if r is None:
                cells.append("not run")
                if s != "mpi":
                    cells.append("")
                continue
            cores = r["cores_per_node"] * n
            wall += r["wall"]
            value = r["metg_us"]
            cells.append(f"{value:.3f}" if value is not None else f"n/a ({r['reason']})")
            if s != "mpi":
                cells.append(f"{value / mpi:.2f}" if value is not None and mpi else "")
        lines.append(f"| {n} | {cores} | " + " | ".join(cells) + f" | {wall:.0f} |")
    return "\n".join(lines)


def plot(files: list[tuple[str, dict]], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(10, 4.5))
    ax.set_prop_cycle(color=plt.get_cmap("tab20").colors)  # one colour per line
    for label, data in files:
        systems = list(dict.fromkeys(r["system"] for r in data["results"]))
        for s in systems:
            points = sorted((r["nodes"], r["metg_us"]) for r in data["results"]
                            if r["system"] == s and r["metg_us"] is not None)
            if points:
                ax.plot(*zip(*points), marker="o", label=f"{s} ({label})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("simulated nodes")
    ax.set_ylabel("METG(50%) µs")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--plot", type=Path)
    args = parser.parse_args(argv)
    files = []
    for path in args.results:
        data = json.loads(path.read_text())
        if "pattern" not in data:  # bcast_sim.py's or a validation's results
            print(f"report: {path}: not a METG sweep (metg_sim.py --out), skipped\n")
            continue
        cores = {r.get("cores_per_node", 1) for r in data["results"]}
        files.append((f"{data['pattern']}, {data['tasks_per_core']}/core, "
                      f"{'/'.join(map(str, sorted(cores)))} core(s)/node", data))
        print(table(data))
        print()
    if args.plot:
        plot(files, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
