#!/usr/bin/env python3
"""The layer check: every #include "..." in src/ must point down the layer order.

The order below is the architecture (docs/architecture.md draws it). A folder
may include its own headers and those of folders in lower layers; folders in
the same layer are peers and may not include each other; nothing includes a
higher layer. Public headers (include/taskgrid/) are below everything and
include nothing from src/. The check fails on any include that breaks the
order, not only on cycles, and names the file, the line and both layers.

Usage: scripts/check_layers.py [--root DIR] [--graph]
  --graph  prints the folder-level include graph (what includes what) and exits 0.
"""

import argparse
import collections
import pathlib
import re
import sys

# Lowest first. One tuple per layer; the folders of a layer are peers.
LAYERS = [
    ("data", "coll"),  # containers, broadcast plans: no other layer
    ("comm",),  # the transport seam: interfaces, blocking and idle primitives, the wire protocol
    ("core",),  # what engine, planners and trace share: command sink, function registry, failure
    ("graph", "sched", "device"),  # dependency tracking, placement, device backends
    ("exec", "trace"),  # task execution (worker pool, running task, channels), tracing
    ("engine", "plan"),  # the per-rank engine; the planners (they meet through core/command_sink.h)
    ("comm/loopback", "comm/mpi", "comm/s4u"),  # transport backends: implement comm's (and exec's) interfaces
    ("runtime",),  # the public API, start-up and settings
    ("pgas", "offload"),  # front ends built on the runtime
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_table():
    table = {}
    for index, folders in enumerate(LAYERS):
        for folder in folders:
            table[folder] = index
    return table


def folder_of(path, table):
    """The layer folder a path under src/ belongs to (longest match: comm/mpi before comm)."""
    parts = pathlib.PurePosixPath(path).parts
    for length in range(len(parts) - 1, 0, -1):
        candidate = "/".join(parts[:length])
        if candidate in table:
            return candidate
    return None


def check(root):
    src = root / "src"
    table = layer_table()
    problems = []
    graph = collections.defaultdict(set)
    for file in sorted(src.rglob("*")):
        if file.suffix not in (".h", ".hpp", ".cpp", ".c", ".cu") or not file.is_file():
            continue
        relative = file.relative_to(src).as_posix()
        own = folder_of(relative, table)
        if own is None:
            problems.append(f"src/{relative}: its folder is in no layer of scripts/check_layers.py")
            continue
        for number, line in enumerate(file.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target = match.group(1)
            if target.startswith("taskgrid/"):
                continue  # the public headers: below every layer
            if "/" not in target:
                # A bare name: a header beside the file (its own folder).
                if not (file.parent / target).exists():
                    problems.append(f"src/{relative}:{number}: \"{target}\" is not beside the file; "
                                    "include it by its path under src/")
                continue
            if not (src / target).exists():
                continue  # generated or external (e.g. a CUDA header found elsewhere)
            other = folder_of(target, table)
            if other is None:
                problems.append(f"src/{relative}:{number}: includes \"{target}\", whose folder is "
                                "in no layer")
                continue
            if other == own:
                continue
            graph[own].add(other)
            if table[other] > table[own]:
                problems.append(
                    f"src/{relative}:{number}: {own} (layer {table[own]}) includes \"{target}\" "
                    f"of {other} (layer {table[other]}), a higher layer")
            elif table[other] == table[own]:
                problems.append(
                    f"src/{relative}:{number}: {own} includes \"{target}\" of {other}, a peer "
                    f"in the same layer ({table[own]}): move what both need down a layer")
    # Public headers include nothing from src/.
    for file in sorted((root / "include").rglob("*")):
        if not file.is_file():
            continue
        for number, line in enumerate(file.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if match and not match.group(1).startswith("taskgrid/"):
                problems.append(f"{file.relative_to(root)}:{number}: a public header includes "
                                f"\"{match.group(1)}\"; public headers include only taskgrid/ ones")
    # A folder under src/ that the table does not know (a new layer nobody placed).
    for folder in sorted(p for p in src.rglob("*") if p.is_dir()):
        relative = folder.relative_to(src).as_posix()
        if folder_of(relative + "/x", table) is None:
            problems.append(f"src/{relative}/: a folder in no layer of scripts/check_layers.py")
    return problems, graph


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent.parent)
    parser.add_argument("--graph", action="store_true")
    args = parser.parse_args()
    problems, graph = check(args.root)
    if args.graph:
        table = layer_table()
        for folder in sorted(graph, key=lambda f: (table[f], f)):
            below = ", ".join(sorted(graph[folder], key=lambda f: (table[f], f)))
            print(f"{folder} (layer {table[folder]}) -> {below}")
        return 0
    for problem in problems:
        print(f"layer check: {problem}", file=sys.stderr)
    if problems:
        print(f"layer check: {len(problems)} include(s) break the layer order "
              "(scripts/check_layers.py lists it)", file=sys.stderr)
        return 1
    print(f"layer check: ok ({sum(len(f) for f in LAYERS)} folders in {len(LAYERS)} layers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
