#!/usr/bin/env python3
"""Draws a TaskGrid trace (TASKGRID_TRACE=path) as a timeline picture (PNG).

One row per (rank, thread); task spans are bars coloured by task name (the
legend names the most frequent), communication spans ("comm": sends,
receives, broadcasts) are drawn in one colour of their own, which no task
gets, on a thin lane of their own under each row's tasks (a long "broadcast
received" wait would otherwise cover the row's tasks), and with
--flows the trace's flow arrows (send -> receive, task -> dependent task)
are drawn too. For a first look at a run without opening Perfetto.

usage: taskgrid_timeline.py TRACE.json [-o OUT.png] [--flows] [--legend N]
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

# The TaskGrid version this tool belongs to (CMakeLists.txt project()).
__version__ = "0.1.0"

PROG = "taskgrid_timeline"
COMM_COLOUR = "#d62728"
OTHER_COLOUR = "#b0b0b0"
# Task colours: matplotlib's tab20 without its reds (communication's colour)
# and greys (the other tasks' colour), so that no task looks like either.
TASK_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
                "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#c5b0d5", "#c49c94", "#f7b6d2",
                "#dbdb8d", "#9edae5")
# Where a row's bars go, as (offset from the row's centre, height), rows being
# 1 apart: tasks above, communication on a thin lane below, never overlapping.
TASK_LANE = (-0.42, 0.52)
COMM_LANE = (0.16, 0.24)
# At most this many arrows are drawn: beyond, a picture shows only clutter.
MAX_ARROWS = 2000


class TraceError(Exception):
    """A trace file that cannot be read as a TaskGrid (Chrome) trace."""


@dataclass
class Span:
    row: tuple[int, int]
    name: str
    category: str
    start: float  # microseconds
    duration: float


@dataclass
class Timeline:
    rows: list[tuple[int, int]]
    labels: dict[tuple[int, int], str]
    spans: list[Span]
    flows: list[tuple[tuple[int, int], float, tuple[int, int], float]] = field(default_factory=list)


def load_events(path: Path) -> list[dict]:
    try:
        text = path.read_bytes()
    except OSError as error:
        raise TraceError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        data = json.loads(text.decode("utf-8", errors="replace"))
    except json.JSONDecodeError as error:
        raise TraceError(f"{path} is not JSON: {error}") from None
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise TraceError(f"{path} has no \"traceEvents\" list: not a TaskGrid trace")
    return [e for e in events if isinstance(e, dict)]


def _number(event: dict, key: str, default=None):
    value = event.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TraceError(f"an event has no numeric \"{key}\": {json.dumps(event)[:200]}")
    return value


def build_timeline(events: list[dict]) -> Timeline:
    process_names: dict[int, str] = {}
    thread_names: dict[tuple[int, int], str] = {}
    spans: list[Span] = []
    flow_ends: dict[tuple[str, object], dict[str, tuple[tuple[int, int], float]]] = {}
    for event in events:
        phase = event.get("ph")
        if phase == "M":
            name = str(event.get("args", {}).get("name", ""))
            if event.get("name") == "process_name":
                process_names[int(_number(event, "pid", 0))] = name
            elif event.get("name") == "thread_name":
                row = (int(_number(event, "pid", 0)), int(_number(event, "tid", 0)))
                thread_names[row] = name
        elif phase == "X":
            row = (int(_number(event, "pid", 0)), int(_number(event, "tid", 0)))
            spans.append(Span(row, str(event.get("name", "")), str(event.get("cat", "")),
                              float(_number(event, "ts")), max(0.0, float(_number(event, "dur", 0)))))
        elif phase in ("s", "f"):
            row = (int(_number(event, "pid", 0)), int(_number(event, "tid", 0)))
            key = (str(event.get("cat", "")), event.get("id"))
            flow_ends.setdefault(key, {})[phase] = (row, float(_number(event, "ts")))
    rows = sorted({span.row for span in spans})
    labels = {}
    for row in rows:
        rank = process_names.get(row[0], f"rank {row[0]}")
        labels[row] = f"{rank} / {thread_names.get(row, f'thread {row[1]}')}"
    flows = [(ends["s"][0], ends["s"][1], ends["f"][0], ends["f"][1])
             for ends in flow_ends.values() if "s" in ends and "f" in ends
             and ends["s"][0] in labels and ends["f"][0] in labels]
    return Timeline(rows, labels, spans, flows)


def task_colours(names: list[str]) -> dict[str, str]:
    """A colour per task name, in order, from TASK_PALETTE (repeating after
    its 16 colours)."""
    return {name: TASK_PALETTE[i % len(TASK_PALETTE)] for i, name in enumerate(names)}


def lane(category: str) -> tuple[float, float]:
    """The (offset, height) of a span's bar in its row."""
    return COMM_LANE if category == "comm" else TASK_LANE


def bar_groups(timeline: Timeline, colours: dict[str, str], minimum: float
               ) -> dict[tuple[float, float, str], list[tuple[float, float]]]:
    """The bars to draw, as (y, height, colour) -> [(start ms, length ms)]:
    grouped so that one broken_barh call draws each (fast for 100k spans).
    Spans shorter than `minimum` ms get that length, to stay visible."""
    origin = min(span.start for span in timeline.spans)
    index = {row: i for i, row in enumerate(timeline.rows)}
    groups: dict[tuple[float, float, str], list[tuple[float, float]]] = {}
    for span in timeline.spans:
        if span.category == "task":
            colour = colours.get(span.name, OTHER_COLOUR)
        elif span.category == "comm":
            colour = COMM_COLOUR
        else:
            colour = OTHER_COLOUR
        offset, height = lane(span.category)
        start = (span.start - origin) * 1e-3
        groups.setdefault((index[span.row] + offset, height, colour), []).append(
            (start, max(span.duration * 1e-3, minimum)))
    return groups


def draw(timeline: Timeline, output: Path, *, legend: int, flows: bool, title: str,
         width: float) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        raise TraceError("matplotlib is needed to draw (pip install matplotlib, "
                         "or run with the project's .venv/bin/python)") from None
    if not timeline.rows:
        raise TraceError("the trace has no spans to draw")
    origin = min(span.start for span in timeline.spans)
    end = max(span.start + span.duration for span in timeline.spans)
    extent_ms = max((end - origin) * 1e-3, 1e-6)
    index = {row: i for i, row in enumerate(timeline.rows)}
    task_names = Counter(s.name for s in timeline.spans if s.category == "task")
    named = [name for name, _ in task_names.most_common(legend)]
    colours = task_colours(named)

    height = max(2.0, 0.45 * len(timeline.rows) + 1.5)
    figure, axes = plt.subplots(figsize=(width, height))
    minimum = extent_ms / max(width * 100, 1)  # zero-length spans stay visible
    for (y, height, colour), bars in bar_groups(timeline, colours, minimum).items():
        axes.broken_barh(bars, (y, height), facecolors=colour, linewidth=0)
    if flows:
        for source, start, dest, stop in timeline.flows[:MAX_ARROWS]:
            axes.annotate("", xy=((stop - origin) * 1e-3, index[dest]),
                          xytext=((start - origin) * 1e-3, index[source]),
                          arrowprops={"arrowstyle": "->", "color": "#404040", "lw": 0.6,
                                      "alpha": 0.6})
    axes.set_yticks(range(len(timeline.rows)))
    axes.set_yticklabels([timeline.labels[row] for row in timeline.rows])
    axes.set_ylim(len(timeline.rows) - 0.5, -0.5)
    axes.set_xlim(0, extent_ms)
    axes.set_xlabel("time (ms)")
    axes.set_title(title)
    handles = [Patch(color=colours[name], label=name) for name in named]
    if any(s.category == "comm" for s in timeline.spans):
        handles.append(Patch(color=COMM_COLOUR, label="communication"))
    if len(task_names) > len(named):
        handles.append(Patch(color=OTHER_COLOUR, label="other tasks"))
    if handles:
        axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    figure.tight_layout()
    try:
        figure.savefig(output, format="png", dpi=100)
    except OSError as error:
        raise TraceError(f"cannot write {output}: {error.strerror or error}") from None
    finally:
        plt.close(figure)


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Draws a TaskGrid trace (TASKGRID_TRACE=path) as a PNG timeline: "
        "one row per rank and thread, task spans coloured by name, communication in red "
        "on a thin lane under each row's tasks.")
    parser.add_argument("trace", type=Path, help="the trace file (JSON) a run wrote")
    parser.add_argument("-o", "--output", type=Path,
                        help="the PNG to write (default: the trace's name with .png)")
    parser.add_argument("--flows", action="store_true",
                        help=f"draw the flow arrows (transfers, dependencies; at most {MAX_ARROWS})")
    parser.add_argument("--legend", type=int, default=10, metavar="N",
                        help="task names with a colour of their own and a legend entry (default 10)")
    parser.add_argument("--width", type=float, default=14.0, help="picture width in inches")
    parser.add_argument("--title", help="the picture's title (default: the trace's file name)")
    parser.add_argument("--print-rows", action="store_true",
                        help="print the rows drawn, one per line, after 'rows: N'")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    arguments = parser.parse_args(argv)
    if arguments.legend < 1:
        parser.error("--legend needs a number of 1 or more")
    if arguments.width <= 0:
        parser.error("--width needs a positive number")
    return arguments


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    output = arguments.output or arguments.trace.with_suffix(".png")
    try:
        timeline = build_timeline(load_events(arguments.trace))
        draw(timeline, output, legend=arguments.legend, flows=arguments.flows,
             title=arguments.title or arguments.trace.name, width=arguments.width)
    except TraceError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    if arguments.print_rows:
        print(f"rows: {len(timeline.rows)}")
        for row in timeline.rows:
            print(timeline.labels[row])
    print(f"{PROG}: {len(timeline.spans)} spans on {len(timeline.rows)} rows written to {output}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
