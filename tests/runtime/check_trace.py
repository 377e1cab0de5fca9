#!/usr/bin/env python3
"""Runs a TaskGrid job with TASKGRID_TRACE and TASKGRID_STATS and checks both.

usage: check_trace.py RANKS TRACE_PATH [options] -- COMMAND...
Passes when the job exits 0, the trace is valid Chrome-trace JSON (strict
UTF-8) with task spans from every rank and a thread name per track, every
flow arrow has both ends (each on a track with spans), and the stats table
has a line per rank whose task counts add up to the spans in the trace.

  --task-ranks K         task spans come from ranks 0..K-1 (default: all)
  --receives             receive spans ("comm", with peer and bytes) must be
                         there, each the end of a send -> receive arrow
  --dependencies N       exactly N task -> task arrows ("dependency" flows)
  --replaced-name TEXT   a task span named TEXT with U+FFFD in place of '?'
                         (the program named it with invalid UTF-8)
  --dot PATH             also set TASKGRID_DOT=PATH and check the DOT file:
  --dot-edges LIST       its edges, "P>C:H,...": task P -> task C labelled with
                         the H-th handle of the program's "handles" line
  --timeline SCRIPT      draw the trace with SCRIPT (tools/timeline) under
  --python EXE           EXE: a PNG whose row count is the trace's tracks
"""
import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter


def fail(message: str) -> int:
    print(message)
    return 1


def check_flows(events: list, tracks: set) -> str:
    """'' when every flow has one start and one end on a known track."""
    ends = Counter()
    for e in events:
        if e.get("ph") in ("s", "f"):
            key = (e["cat"], e["id"], e["ph"])
            ends[key] += 1
            if (e["pid"], e["tid"]) not in tracks:
                return f"flow end on a track without spans: {e}"
            if e["ph"] == "f" and e.get("bp") != "e":
                return f"flow end not bound to its enclosing slice: {e}"
    for (cat, flow, ph), count in ends.items():
        if count != 1:
            return f"flow {cat}/{flow} has {count} '{ph}' events"
        if (cat, flow, "f" if ph == "s" else "s") not in ends:
            return f"flow {cat}/{flow} has only its '{ph}' end"
    return ""


def parse_dot(text: str):
    """The nodes {id: label} and edges {(p, c): label} of a TaskGrid DOT dump."""
    if not re.match(r"\s*digraph\s+\w+\s*\{", text) or not text.rstrip().endswith("}"):
        raise ValueError("not a digraph")
    nodes, edges = {}, {}
    for line in text.splitlines():
        node = re.fullmatch(r'\s*t(\d+) \[label="((?:[^"\\]|\\.)*)"\];', line)
        edge = re.fullmatch(r'\s*t(\d+) -> t(\d+) \[label="((?:[^"\\]|\\.)*)"\];', line)
        if node:
            nodes[int(node.group(1))] = node.group(2)
        elif edge:
            edges[(int(edge.group(1)), int(edge.group(2)))] = edge.group(3)
    return nodes, edges


def check_dot(path: str, expected: str, stdout: str) -> str:
    with open(path, encoding="utf-8") as file:  # strict: the labels must be UTF-8
        nodes, edges = parse_dot(file.read())
    handles = re.search(r"handles ((?:\d+ ?)+)", stdout)
    if not handles:
        return f"the program printed no 'handles' line:\n{stdout}"
    handle_ids = [int(h) for h in handles.group(1).split()]
    want = {}
    for item in expected.split(","):
        edge, handle = item.split(":")
        producer, consumer = (int(t) for t in edge.split(">"))
        want[(producer, consumer)] = f"h{handle_ids[int(handle)]}"
    if edges != want:
        return f"DOT edges {edges}, expected {want}"
    tasks = {t for edge in want for t in edge}
    if set(nodes) != tasks:
        return f"DOT nodes {sorted(nodes)}, expected {sorted(tasks)}"
    for task, label in nodes.items():
        if f"#{task}" not in label or "rank " not in label:
            return f"DOT node t{task} label {label!r} lacks its id or rank"
    return ""


def check_timeline(options, tracks: set) -> str:
    png = os.path.splitext(options.trace)[0] + ".png"
    if os.path.exists(png):
        os.remove(png)
    run = subprocess.run([options.python, options.timeline, options.trace, "-o", png,
                          "--flows", "--print-rows"],
                         capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        return f"timeline tool failed ({run.returncode}):\n{run.stdout}\n{run.stderr}"
    with open(png, "rb") as file:
        if file.read(8) != b"\x89PNG\r\n\x1a\n":
            return f"{png} is not a PNG"
    rows = re.search(r"^rows: (\d+)$", run.stdout, re.MULTILINE)
    if not rows or int(rows.group(1)) != len(tracks):
        return f"timeline drew {rows and rows.group(1)} rows, the trace has {len(tracks)} tracks"
    return ""


def main() -> int:
    split = sys.argv.index("--")
    parser = argparse.ArgumentParser(prog="check_trace.py")
    parser.add_argument("ranks", type=int)
    parser.add_argument("trace")
    parser.add_argument("--task-ranks", type=int)
    parser.add_argument("--receives", action="store_true")
    parser.add_argument("--dependencies", type=int)
    parser.add_argument("--replaced-name")
    parser.add_argument("--dot")
    parser.add_argument("--dot-edges")
    parser.add_argument("--timeline")
    parser.add_argument("--python", default=sys.executable)
    options = parser.parse_args(sys.argv[1:split])
    ranks, path = options.ranks, options.trace
    command = sys.argv[split + 1:]
    env = dict(os.environ, TASKGRID_TRACE=path, TASKGRID_STATS="1")
    for output in (path, options.dot):
        if output and os.path.exists(output):
            os.remove(output)
    if options.dot:
        env["TASKGRID_DOT"] = options.dot
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        return fail(f"job failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
    with open(path, encoding="utf-8") as file:  # strict UTF-8, as JSON requires
        events = json.load(file)["traceEvents"]
    spans = [e for e in events if e.get("ph") == "X" and e.get("cat") == "task"]
    pids = {e["pid"] for e in spans}
    task_ranks = options.task_ranks or ranks
    if pids != set(range(task_ranks)):
        return fail(f"task spans from ranks {sorted(pids)}, expected 0..{task_ranks - 1}")
    if any(e["dur"] < 0 for e in events if e.get("ph") == "X"):
        return fail("negative span duration")
    named = {(e["pid"], e["tid"]) for e in events if e.get("name") == "thread_name"}
    tracks = {(e["pid"], e["tid"]) for e in events if e.get("ph") == "X"}
    if not tracks <= named:
        return fail(f"tracks without a thread name: {sorted(tracks - named)}")
    problem = check_flows(events, tracks)
    if problem:
        return fail(problem)
    flows = Counter(e["cat"] for e in events if e.get("ph") == "s")
    if options.receives:
        receives = [e for e in events if e.get("ph") == "X" and e.get("cat") == "comm"
                    and "rece" in e["name"]]
        if not receives or any("peer" not in e["args"] or "bytes" not in e["args"]
                               for e in receives):
            return fail(f"no receive spans with peer and bytes: {receives[:3]}")
        if flows["transfer"] != len(receives):
            return fail(f"{len(receives)} receive spans, {flows['transfer']} transfer arrows")
    if options.dependencies is not None and flows["dependency"] != options.dependencies:
        return fail(f"{flows['dependency']} dependency arrows, expected {options.dependencies}")
    if options.replaced_name:
        want = options.replaced_name.replace("?", "\ufffd")
        if not any(e["name"] == want for e in spans):
            return fail(f"no task span named {want!r}: {sorted({e['name'] for e in spans})}")
    rows = re.findall(r"^taskgrid stats:\s+(\d+)\s+(\d+)\s", run.stderr, re.MULTILINE)
    if sorted(int(r) for r, _ in rows) != list(range(ranks)):
        return fail(f"stats rows for ranks {[r for r, _ in rows]}, expected 0..{ranks - 1}\n"
                    f"{run.stderr}")
    executed = sum(int(t) for _, t in rows)
    if executed != len(spans):
        return fail(f"stats count {executed} tasks, the trace has {len(spans)} task spans")
    if options.dot:
        problem = check_dot(options.dot, options.dot_edges or "", run.stdout)
        if problem:
            return fail(problem)
    if options.timeline:
        problem = check_timeline(options, tracks)
        if problem:
            return fail(problem)
    print(f"trace: {len(spans)} task spans on {ranks} ranks, {len(events)} events, "
          f"flows {dict(flows)}; stats agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
