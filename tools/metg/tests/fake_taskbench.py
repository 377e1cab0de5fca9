"""A stand-in Task Bench binary with synthetic timings, for the METG tests.

Reads the Task Bench flags it needs (-steps, -width, -kernel, -iter, -scratch, -sample, -and,
-worker, -json). The elapsed time it reports follows a closed form, so the METG is known:
  elapsed = (FAKE_OVERHEAD * tasks + flops / FAKE_RATE) / cores
with cores = ranks (FAKE_RANKS, set by fake_mpiexec.py) x threads (-worker or TASKGRID_THREADS).
FAKE_NO_JSON=1 prints only the text report; FAKE_FAIL_ITER=N fails the run with -iter N.
"""

import json
import os
import sys


def graphs(args):
    current = {"steps": 4, "width": 4, "kernel": "empty", "iter": 0, "scratch": 0, "sample": 16}
    found = [current]
    position = 0
    while position < len(args):
        arg = args[position]
        if arg == "-and":
            current = {"steps": 4, "width": 4, "kernel": "empty", "iter": 0, "scratch": 0, "sample": 16}
            found.append(current)
        elif arg.lstrip("-") in current and position + 1 < len(args):
            value = args[position + 1]
            current[arg.lstrip("-")] = value if arg == "-kernel" else int(value)
            position += 1
        position += 1
    return found


def option(args, name, default):
    return args[args.index(name) + 1] if name in args else default


def main():
    args = sys.argv[1:]
    ranks = int(os.environ.get("FAKE_RANKS", "1"))
    threads = int(option(args, "-worker", os.environ.get("TASKGRID_THREADS", "1")))
    tasks = flops = nbytes = 0
    for graph in graphs(args):
        count = graph["steps"] * graph["width"]
        tasks += count
        if graph["kernel"] == "compute_bound":
            flops += count * (128 * graph["iter"] + 64)
        elif graph["kernel"] == "memory_bound":
            nbytes += count * (graph["scratch"] * graph["iter"] // graph["sample"])
        if str(graph["iter"]) == os.environ.get("FAKE_FAIL_ITER"):
            print("fake failure: simulated crash", file=sys.stderr)
            sys.exit(3)
    overhead = float(os.environ.get("FAKE_OVERHEAD", "1e-6"))
    rate = float(os.environ.get("FAKE_RATE", "1e9"))
    elapsed = (overhead * tasks + (flops + nbytes) / rate) / (ranks * threads)
    print(f"Total Tasks {tasks}\nTotal Dependencies 0\nTotal FLOPs {flops}\n"
          f"Total Bytes {nbytes}\nElapsed Time {elapsed:e} seconds")
    json_path = option(args, "-json", None)
    if json_path and os.environ.get("FAKE_NO_JSON") != "1":
        with open(json_path, "w") as handle:
            json.dump({"system": "fake", "ranks": ranks, "threads_per_rank": threads,
                       "elapsed_seconds": elapsed, "total_tasks": tasks, "total_flops": flops,
                       "total_bytes": nbytes}, handle)


main()
