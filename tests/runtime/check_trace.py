#!/usr/bin/env python3
"""Runs a TaskGrid job with TASKGRID_TRACE and TASKGRID_STATS and checks both.

usage: check_trace.py RANKS TRACE_PATH -- COMMAND...
Passes when the job exits 0, the trace is valid Chrome-trace JSON with task
spans from every rank and a thread name per track, and the stats table has a
line per rank whose task counts add up to the spans in the trace.
"""
import json
import os
import re
import subprocess
import sys


def main() -> int:
    ranks, path = int(sys.argv[1]), sys.argv[2]
    command = sys.argv[sys.argv.index("--") + 1:]
    env = dict(os.environ, TASKGRID_TRACE=path, TASKGRID_STATS="1")
    if os.path.exists(path):
        os.remove(path)
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        print(f"job failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
        return 1
    with open(path, encoding="utf-8") as file:
        events = json.load(file)["traceEvents"]
    spans = [e for e in events if e.get("ph") == "X" and e.get("cat") == "task"]
    pids = {e["pid"] for e in spans}
    if pids != set(range(ranks)):
        print(f"task spans from ranks {sorted(pids)}, expected 0..{ranks - 1}")
        return 1
    if any(e["dur"] < 0 for e in spans):
        print("negative span duration")
        return 1
    named = {(e["pid"], e["tid"]) for e in events if e.get("name") == "thread_name"}
    tracks = {(e["pid"], e["tid"]) for e in spans}
    if not tracks <= named:
        print(f"tracks without a thread name: {sorted(tracks - named)}")
        return 1
    rows = re.findall(r"^taskgrid stats:\s+(\d+)\s+(\d+)\s", run.stderr, re.MULTILINE)
    if sorted(int(r) for r, _ in rows) != list(range(ranks)):
        print(f"stats rows for ranks {[r for r, _ in rows]}, expected 0..{ranks - 1}\n{run.stderr}")
        return 1
    executed = sum(int(t) for _, t in rows)
    if executed != len(spans):
        print(f"stats count {executed} tasks, the trace has {len(spans)} task spans")
        return 1
    print(f"trace: {len(spans)} task spans on {ranks} ranks, {len(events)} events; stats agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
